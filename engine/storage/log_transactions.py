"""The transactional side of a Log's appends and reads (Kafka's UnifiedLog transaction code).

- `stage_producers`: check and stage each batch of an append in the producer state -
  data batches by sequence and epoch, COMMIT/ABORT control batches by producer and
  coordinator epoch.
- `index_completed`: after the bytes are written, each transaction an ABORT marker
  ended goes to the `.txnindex` of the segment holding the marker, with the LSO it left.
- `replay_segments`: rebuild the producer state (and, for recovered segments, their
  `.txnindex`) from the batches after the newest snapshot. The headers carry all it needs,
  so a batch the cleaner emptied (zero records, cleaner.py) still gives its producer's last
  sequence and epoch; an emptied marker (Kafka's empty control batch) applies nothing.
- `collect_aborted`: the aborted transactions a read_committed fetch must be told about.

Plain functions over the Log's own objects: no asyncio, no sockets, not thread-safe
(the Log's caller serialises them).
"""
from __future__ import annotations

from typing import Iterable

from .control_records import read_marker
from .errors import DuplicateSequenceError, InvalidTxnStateError
from .producer_state import BatchMetadata, CompletedTxn, ProducerStateManager, TxnVerification
from .records import CONTROL_MASK, BatchHeader
from .segment import LogSegment
from .transaction_index import AbortedTxn


def stage_producers(producer_state: ProducerStateManager, records, headers: list[BatchHeader], *,
                    validate: bool, verification: TxnVerification | None = None) -> BatchMetadata | None:
    """Stage each producer batch of an append; return the original of a duplicate, if any.
    Replicated batches were checked by their leader and are only recorded.

    A duplicate is answered with its original offsets only when it is the whole append: in
    an append of several batches, acknowledging it would acknowledge the others, which were
    not written (DUPLICATE_SEQUENCE_NUMBER then). With `verification` (a client's append
    while KIP-890 verification is on), a transactional batch of a producer with no open
    transaction here needs the guard the coordinator's confirmation came with, else
    INVALID_TXN_STATE: no batch can open a transaction its coordinator does not know."""
    for i, header in enumerate(headers):
        if header.producer_id < 0:
            continue
        if header.attributes & CONTROL_MASK:
            if not header.records_count:
                continue   # a marker the cleaner emptied: its transaction is gone, nothing to apply (as Kafka)
            # Markers are rare (one batch per coordinator request): only they need a position.
            marker = read_marker(records, sum(h.size for h in headers[:i]), header)
            if validate:
                producer_state.check_marker(header, marker)
            producer_state.stage_marker(header, marker)
            continue
        if validate:
            duplicate = producer_state.find_duplicate(header)
            if duplicate is not None:
                if len(headers) > 1:
                    raise DuplicateSequenceError(
                        f"producer {header.producer_id} batch at sequence {header.base_sequence} was written "
                        f"already; the other batches of the append were not")
                return duplicate
            producer_state.check(header)
            if verification is not None and header.is_transactional \
                    and not producer_state.has_open_txn(header.producer_id) \
                    and not producer_state.is_verified(header.producer_id, verification.guard):
                raise InvalidTxnStateError(f"producer {header.producer_id}: the batch is not part of a transaction "
                                           f"its coordinator knows (KIP-890)")
        producer_state.stage(header, header.base_offset)
    return None


def index_completed(producer_state: ProducerStateManager, segment: LogSegment,
                    completed: Iterable[CompletedTxn]) -> None:
    """Write each aborted transaction to the .txnindex of `segment`, where its marker lies."""
    for txn in completed:
        if txn.aborted:
            segment.txn_index.append(AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset,
                                                producer_state.last_stable_offset_after(txn)))


def replay_segments(segments: list[LogSegment], producer_state: ProducerStateManager, start: int,
                    reindex: Iterable[LogSegment] = ()) -> None:
    """Replay every producer batch at or above `start` into the producer state. The
    `.txnindex` of each segment in `reindex` (the ones crash recovery validated) is cut to
    the markers below `start` and refilled by the replay."""
    reindex = {id(s) for s in reindex}
    for segment in segments:
        if id(segment) in reindex:
            segment.txn_index.truncate_to(start)
    for i, segment in enumerate(segments):
        following = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if following is not None and following <= start:
            continue
        for position, header in segment.batches_from(max(start, segment.base_offset)):
            if not header.has_producer_id or header.base_offset < start:
                continue
            marker = None
            if header.is_control:
                if not header.records_count:
                    continue   # a marker the cleaner emptied (see stage_producers)
                marker = read_marker(segment.log.read(position, header.size), 0, header)
            completed = producer_state.update(header, header.base_offset, marker)
            if id(segment) in reindex:
                index_completed(producer_state, segment, completed)


def collect_aborted(segments: list[LogSegment], fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
    """Aborted transactions overlapping [fetch_offset, upper_bound), from the segment
    holding fetch_offset onwards (a marker never precedes its data), stopping once an
    entry's LSO shows no later one can overlap (Kafka's collectAbortedTransactions)."""
    found: list[AbortedTxn] = []
    for i, segment in enumerate(segments):
        following = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if following is not None and following <= fetch_offset:
            continue
        txns, complete = segment.txn_index.collect(fetch_offset, upper_bound)
        found.extend(txns)
        if complete:
            break
    return found
