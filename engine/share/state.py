"""A share partition's persisted state, as the share coordinator keeps it (Kafka's
ShareGroupOffset and PersisterStateBatchCombiner).

The state is the share-partition start offset (SPSO), two epochs, and state batches: ranges
of offsets at or after the start offset, each with a delivery state (0 available, 2
acknowledged, 4 archived) and a delivery count. Offsets the batches do not name, between the
start offset and the last batch, are available and were never delivered as far as anyone
persisted. A write carries only what changed; `combine` lays the newer batches over the
older ones (the newer wins offset by offset), drops what lies below the start offset, and
joins neighbours with the same state and count, so the state stays as short as the in-flight
window allows. Pure data: no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass, field

AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = 0, 1, 2, 4
PERSISTED_STATES = (AVAILABLE, ACKNOWLEDGED, ARCHIVED)
UNINITIALIZED = -1          # start offset of a share partition with no state yet


@dataclass(frozen=True)
class StateBatch:
    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int

    def __len__(self) -> int:
        return self.last_offset - self.first_offset + 1


@dataclass
class ShareState:
    start_offset: int = UNINITIALIZED
    state_epoch: int = 0
    leader_epoch: int = -1
    batches: list[StateBatch] = field(default_factory=list)

    def delivery_complete_count(self) -> int:
        """Records at or after the start offset already acknowledged or archived (KIP-1226)."""
        return sum(len(b) for b in self.batches if b.delivery_state in (ACKNOWLEDGED, ARCHIVED))

    def counts(self) -> dict[int, int]:
        """How many persisted records are in each delivery state."""
        out = {AVAILABLE: 0, ACKNOWLEDGED: 0, ARCHIVED: 0}
        for batch in self.batches:
            out[batch.delivery_state] = out.get(batch.delivery_state, 0) + len(batch)
        return out


def combine(older: list[StateBatch], newer: list[StateBatch], start_offset: int) -> list[StateBatch]:
    """`newer` laid over `older` in order (a later batch wins where batches overlap, within
    `newer` too), offsets below `start_offset` dropped, neighbours joined."""
    laid = list(older)
    for over in newer:
        laid = [piece for batch in laid for piece in _minus(batch, over)] + [over]
    out: list[StateBatch] = []
    for batch in sorted(laid, key=lambda b: b.first_offset):
        if batch.last_offset < start_offset:
            continue
        if batch.first_offset < start_offset:
            batch = StateBatch(start_offset, batch.last_offset, batch.delivery_state, batch.delivery_count)
        last = out[-1] if out else None
        if last is not None and last.last_offset + 1 == batch.first_offset and \
                (last.delivery_state, last.delivery_count) == (batch.delivery_state, batch.delivery_count):
            out[-1] = StateBatch(last.first_offset, batch.last_offset, last.delivery_state, last.delivery_count)
        else:
            out.append(batch)
    return out


def _minus(batch: StateBatch, over: StateBatch) -> list[StateBatch]:
    """The parts of `batch` that `over` does not cover."""
    if over.last_offset < batch.first_offset or over.first_offset > batch.last_offset:
        return [batch]
    parts = []
    if batch.first_offset < over.first_offset:
        parts.append(StateBatch(batch.first_offset, over.first_offset - 1, batch.delivery_state, batch.delivery_count))
    if batch.last_offset > over.last_offset:
        parts.append(StateBatch(over.last_offset + 1, batch.last_offset, batch.delivery_state, batch.delivery_count))
    return parts


def ranges(states: list[tuple[int, int, int]]) -> list[StateBatch]:
    """(offset, state, count) triples, sorted by offset, as the fewest state batches."""
    # Hot (every acquisition and acknowledgement): one StateBatch per run, not per offset.
    out: list[StateBatch] = []
    first = last = state = count = None
    for offset, s, c in states:
        if first is not None and offset == last + 1 and s == state and c == count:
            last = offset
            continue
        if first is not None:
            out.append(StateBatch(first, last, state, count))
        first = last = offset
        state, count = s, c
    if first is not None:
        out.append(StateBatch(first, last, state, count))
    return out
