"""SharePartition: a share group's view of one topic partition, on the partition's leader
(Kafka's SharePartition).

It knows the share-partition start offset (SPSO: every record before it is done with), the
end of what it has handed out (`next_offset`, one past the SPEO), and the state of each
record in between: available, acquired (by one member, under a lock until a deadline),
acknowledged or archived, with its delivery count.

- Acquiring hands a member available records first (released or timed out, in offset
  order), then new ones from the log up to the high watermark (under
  `share.isolation.level=read_committed`, up to the last stable offset, archiving aborted
  transactions' records). Each acquisition counts a delivery and locks the records for
  `share.record.lock.duration.ms`. `share.partition.max.record.locks` bounds the records in
  flight (SPEO - SPSO). Batch-optimized acquisition takes whole batches; `record_limit`
  (KIP-1206) takes exactly up to the member's count.
- Acknowledging (ACCEPT, RELEASE, REJECT, GAP, RENEW - KIP-1222) applies to records the
  member holds; all of one partition's acknowledgements apply or none (INVALID_RECORD_STATE).
  Its batches come in offset order without overlapping, else none applies (INVALID_REQUEST,
  as Kafka), so no record is acknowledged twice in one go.
  RELEASE, and a lock that expires, make a record available again unless it was delivered
  `share.delivery.count.limit` times: then it is archived. RENEW extends the lock.
- Every change but acquisition is written to the share coordinator (persister.py) before it
  is answered, so an acknowledged record survives a crash; acquisitions are not written, so
  after a crash a record that was acquired and not acknowledged is available again.
- The SPSO advances over acknowledged and archived records.

Everything runs on the engine's event loop; a write in flight marks its records `pending`,
so neither a lock expiry nor another acknowledgement touches them meanwhile.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import kafka.errors as Errors

from engine.clock import now_ms
from engine.errors import ApiError
from engine.share.acquire import LogBatch, read_batches
from engine.share.state import ACKNOWLEDGED, ACQUIRED, ARCHIVED, AVAILABLE, UNINITIALIZED, ranges

log = logging.getLogger(__name__)
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
TERMINAL = (ACKNOWLEDGED, ARCHIVED)


class AcquiredRange(NamedTuple):
    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass
class Settings:
    """The group's effective share configs (group_configs.py), read at each use."""
    lock_duration_ms: int
    delivery_count_limit: int
    max_record_locks: int
    read_committed: bool
    auto_offset_reset: str          # latest | earliest | by_duration:<ms>


@dataclass
class Stats:
    """Counters since this broker became the partition's leader (for the console's queue health)."""
    deliveries: int = 0
    acknowledged: int = 0
    released: int = 0
    rejected: int = 0
    lock_expiries: int = 0
    renewals: int = 0
    archived: dict[str, int] = field(default_factory=lambda: {"delivery_limit": 0, "rejected": 0, "gap": 0,
                                                               "aborted": 0})


class InFlight:
    __slots__ = ("state", "count", "member", "deadline", "pending")

    def __init__(self, state: int, count: int, member: str | None = None, deadline: float = 0.0) -> None:
        self.state, self.count, self.member, self.deadline, self.pending = state, count, member, deadline, False


class SharePartition:
    def __init__(self, group_id: str, partition, persister, settings: Callable[[], Settings]) -> None:
        self.group_id = group_id
        self.partition = partition                # engine.broker.partition.Partition (the leader)
        self.leader_epoch = partition.leader_epoch
        self._persister = persister
        self.settings = settings
        self.start_offset = 0
        self.next_offset = 0
        self.state_epoch = 0
        self.records: dict[int, InFlight] = {}
        self.stats = Stats()
        self._loading: asyncio.Task | None = None
        self._loaded = False
        self.refresh_when_idle = False            # re-read the state at the next use with nothing acquired
        self._waiters: set[asyncio.Future] = set()
        self._writes: set[asyncio.Task] = set()
        self._writes_in_flight = 0
        self._start_unsure = False                # writes overlapped: the written start may lag
        self._timers: list[asyncio.TimerHandle] = []
        self.closed = False

    @property
    def key(self):
        return self.group_id, self.partition.topic_id, self.partition.index

    def __repr__(self) -> str:
        return (f"SharePartition({self.group_id!r}, {self.partition.topic}-{self.partition.index}, "
                f"spso={self.start_offset}, next={self.next_offset})")

    # --- loading ------------------------------------------------------------------------------
    async def ensure_loaded(self) -> None:
        """Load the state, or re-read it if asked to and nothing is acquired. Every caller
        waits for a load in progress, so no acquisition is made on a state about to be replaced."""
        while True:
            if self._loading is not None and not self._loading.done():
                await asyncio.shield(self._loading)
                continue
            if self._loaded and not (self.refresh_when_idle and self._idle()):
                return
            self._loading = asyncio.get_running_loop().create_task(self._load())

    def _idle(self) -> bool:
        """Nothing acquired and nothing being written (a release written in the background
        would be lost to a state read before it lands)."""
        return not self._writes_in_flight and not any(r.state == ACQUIRED or r.pending for r in self.records.values())

    async def _load(self) -> None:
        group, topic_id, index = self.key
        state = await self._persister.read(group, topic_id, index, self.leader_epoch)
        start = state.start_offset
        if start == UNINITIALIZED:
            start = self._reset_offset()
            await self._persister.write(group, topic_id, index, state_epoch=state.state_epoch,
                                        leader_epoch=self.leader_epoch, start_offset=start, batches=[])
        self.records.clear()
        self.start_offset = self.next_offset = start
        self.state_epoch = state.state_epoch
        for batch in state.batches:
            for offset in range(max(batch.first_offset, start), batch.last_offset + 1):
                self.records[offset] = InFlight(batch.delivery_state, batch.delivery_count)
            self.next_offset = max(self.next_offset, batch.last_offset + 1)
        for offset in range(start, self.next_offset):    # acquired when the state was last written
            self.records.setdefault(offset, InFlight(AVAILABLE, 0))
        self._advance_start()
        self._loaded, self.refresh_when_idle = True, False
        log.debug("Loaded %r (state epoch %d)", self, self.state_epoch)

    def _reset_offset(self) -> int:
        """Where a share partition with no state starts (share.auto.offset.reset)."""
        reset = self.settings().auto_offset_reset
        if reset == "earliest":
            return self.partition.log_start_offset
        if reset.startswith("by_duration:"):
            found = self.partition.log.offset_for_timestamp(now_ms() - int(reset.split(":", 1)[1]))
            return found[0] if found is not None else self.partition.high_watermark
        return self.partition.high_watermark

    # --- acquisition --------------------------------------------------------------------------
    def acquire(self, member_id: str, max_records: int, *, record_limit: bool, max_bytes: int
                ) -> tuple[list[AcquiredRange], list[bytes]]:
        """Acquire up to `max_records` records (whole batches unless `record_limit`) for the
        member: (the acquired ranges, the bytes of the batches that hold them)."""
        settings = self.settings()
        self._skip_below_log_start()
        deadline = time.monotonic() + settings.lock_duration_ms / 1000
        taken: list[int] = []
        for offset in range(self.start_offset, self.next_offset):
            if len(taken) >= max_records:
                break
            record = self.records.get(offset)
            if record is not None and record.state == AVAILABLE and not record.pending:
                if record.count >= settings.delivery_count_limit:
                    self._archive(record, "delivery_limit")
                    continue
                record.state, record.member, record.deadline = ACQUIRED, member_id, deadline
                record.count += 1
                taken.append(offset)
        batches = self._batches_of(taken, max_bytes)
        new = self._acquire_new(member_id, max_records - len(taken), record_limit, max_bytes, settings, deadline)
        for batch, first, last in new:
            taken.extend(range(first, last + 1))
            batches.append(batch)
        if not taken:
            self._advance_start()
            return [], []
        self.stats.deliveries += len(taken)
        self._arm(settings.lock_duration_ms / 1000, member_id, tuple(taken))
        self._advance_start()
        seen: set[int] = set()
        ordered = [b for b in sorted(batches, key=lambda b: b.base_offset)
                   if b.base_offset not in seen and not seen.add(b.base_offset)]
        return self._ranges(sorted(taken)), [b.data for b in ordered]

    def _acquire_new(self, member_id: str, wanted: int, record_limit: bool, max_bytes: int, settings: Settings,
                     deadline: float) -> list[tuple[LogBatch, int, int]]:
        bound = self.partition.last_stable_offset if settings.read_committed else self.partition.high_watermark
        window = settings.max_record_locks - (self.next_offset - self.start_offset)
        if wanted <= 0 or self.next_offset >= bound or window <= 0:
            return []
        out = []
        for batch in read_batches(self.partition, self.next_offset, bound, max_bytes,
                                  read_committed=settings.read_committed, max_records=min(wanted, window)):
            first = max(batch.base_offset, self.next_offset)
            if batch.is_control or batch.aborted:
                state = ACKNOWLEDGED if batch.is_control else ARCHIVED
                for offset in range(first, batch.last_offset + 1):
                    self.records[offset] = InFlight(state, 0)
                if batch.aborted:
                    self.stats.archived["aborted"] += batch.last_offset - first + 1
                self.next_offset = batch.last_offset + 1
                continue
            if wanted <= 0 or window <= 0:
                break
            last = min(batch.last_offset, first + min(wanted, window) - 1) if record_limit else batch.last_offset
            for offset in range(first, last + 1):
                self.records[offset] = InFlight(ACQUIRED, 1, member_id, deadline)
            out.append((batch, first, last))
            wanted -= last - first + 1
            window -= last - first + 1
            self.next_offset = last + 1
        return out

    def _batches_of(self, offsets: list[int], max_bytes: int) -> list[LogBatch]:
        """The log batches holding these (re-acquired) offsets."""
        out: list[LogBatch] = []
        for run in self._ranges(offsets):
            for batch in read_batches(self.partition, run.first_offset, run.last_offset + 1, max_bytes,
                                      read_committed=False, max_records=run.last_offset - run.first_offset + 1):
                out.append(batch)
        return out

    def _ranges(self, offsets: list[int]) -> list[AcquiredRange]:
        states = ranges([(o, ACQUIRED, self.records[o].count) for o in offsets])
        return [AcquiredRange(b.first_offset, b.last_offset, b.delivery_count) for b in states]

    def _skip_below_log_start(self) -> None:
        """Records that retention or DeleteRecords removed are not delivered (Kafka archives them)."""
        log_start = self.partition.log_start_offset
        if self.start_offset >= log_start:
            return
        for offset in range(self.start_offset, min(log_start, self.next_offset)):
            record = self.records.get(offset)
            if record is not None and record.state != ACQUIRED and not record.pending:
                del self.records[offset]
        self.start_offset = min(log_start, min((o for o in self.records), default=log_start))
        self.next_offset = max(self.next_offset, log_start)

    # --- acknowledgement ----------------------------------------------------------------------
    async def acknowledge(self, member_id: str, batches: list[tuple[int, int, list[int]]]) -> None:
        """Apply one partition's acknowledgements, all or none; raises ApiError."""
        settings = self.settings()
        _check_batches(batches)
        changes: list[tuple[int, InFlight, int]] = []
        for first, last, types in batches:
            for i, offset in enumerate(range(first, last + 1)):
                record = self.records.get(offset)
                if record is None or record.state != ACQUIRED or record.member != member_id or record.pending \
                        or (changes and offset == changes[-1][0]):   # named twice: no longer acquired then
                    raise ApiError(Errors.InvalidRecordStateError,
                                   f"The record at offset {offset} is not acquired by member {member_id}.")
                changes.append((offset, record, types[0] if len(types) == 1 else types[i]))
        renewed = [(offset, record) for offset, record, kind in changes if kind == RENEW]
        for _, record in renewed:
            record.deadline = time.monotonic() + settings.lock_duration_ms / 1000
        self.stats.renewals += len(renewed)
        written = [(offset, record, _target(kind, record, settings), kind) for offset, record, kind in changes
                   if kind != RENEW]
        if not written:
            return
        for _, record, _, _ in written:
            record.pending = True
        start = self._start_after([(o, r, s) for o, r, s, _ in written])
        try:
            await self._write(ranges([(o, state, r.count) for o, r, state, _ in written]),
                              start if start != self.start_offset else -1)
        except ApiError:
            for _, record, _, _ in written:
                record.pending = False
            self._settle_start()
            raise
        tally: dict[tuple[int, int], int] = {}
        for _, record, state, kind in written:
            record.pending, record.state, record.member = False, state, None
            tally[(kind, state)] = tally.get((kind, state), 0) + 1
        for (kind, state), number in tally.items():
            self._count(kind, state, number)
        before = self.start_offset
        self._advance_start()
        if self.start_offset != start:      # records another write had pending were done meanwhile
            self._start_unsure = True
        self._settle_start()
        # Released records, or a start offset that moved (the in-flight window has room again),
        # may let a waiting fetch acquire.
        if self.start_offset != before or any(state == AVAILABLE for _, _, state, _ in written):
            self._notify()

    def _count(self, kind: int, state: int, number: int) -> None:
        if state == ACKNOWLEDGED:
            self.stats.acknowledged += number
        elif state == AVAILABLE:
            self.stats.released += number
        elif kind == REJECT:
            self.stats.rejected += number
            self.stats.archived["rejected"] += number
        elif kind == GAP:
            self.stats.archived["gap"] += number
        else:
            self.stats.archived["delivery_limit"] += number

    def release_member(self, member_id: str) -> None:
        """A member's share session closed: what it still holds is available again at once."""
        offsets = tuple(o for o, r in self.records.items() if r.state == ACQUIRED and r.member == member_id)
        if offsets:
            self._release(member_id, offsets, expired=False)

    def _arm(self, delay_s: float, member_id: str, offsets: tuple[int, ...]) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._timers = [t for t in self._timers if not t.cancelled() and t.when() > now]
        self._timers.append(loop.call_later(delay_s, self._expire, member_id, offsets))

    def _expire(self, member_id: str, offsets: tuple[int, ...]) -> None:
        """A lock timer fired: release what is still held under it, re-arm renewed ones."""
        if self.closed:
            return
        now = time.monotonic()
        due, later = [], []
        for offset in offsets:
            record = self.records.get(offset)
            if record is None or record.state != ACQUIRED or record.member != member_id:
                continue
            (later if record.deadline > now or record.pending else due).append(offset)
        if later:
            wait = max(min(self.records[o].deadline for o in later) - now, 0.05)
            self._arm(wait, member_id, tuple(later))
        if due:
            self._release(member_id, tuple(due), expired=True)

    def _release(self, member_id: str, offsets: tuple[int, ...], *, expired: bool) -> None:
        limit = self.settings().delivery_count_limit
        changed = []
        for offset in offsets:
            record = self.records[offset]
            state = ARCHIVED if record.count >= limit else AVAILABLE
            record.state, record.member = state, None
            if state == ARCHIVED:
                self.stats.archived["delivery_limit"] += 1
            changed.append((offset, state, record.count))
        self.stats.lock_expiries += len(offsets) if expired else 0
        self.stats.released += 0 if expired else len(offsets)
        start = self._start_after([])
        self._advance_start()
        self._notify()
        task = asyncio.get_running_loop().create_task(self._write_quietly(ranges(changed), start))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write_quietly(self, batches, start: int) -> None:
        """Releases are applied at once and written after (Kafka does the same on lock expiry):
        a failed write only means the delivery counts of these records are not durable."""
        try:
            await self._write(batches, start)
        except ApiError as exc:
            log.warning("%r: writing released records failed: %s", self, exc)
        self._settle_start()

    def _settle_start(self) -> None:
        """Each write carries the start offset as its own records leave it; when writes overlap,
        the start that records of another write let it reach is in none of them, and the
        share coordinator would keep an older start (every record after it acknowledged or
        archived: correct, but a start offset that looks stalled). Once no write is in
        flight, write the start as it is."""
        if not self._start_unsure or self._writes_in_flight or self.closed:
            return
        self._start_unsure = False
        task = asyncio.get_running_loop().create_task(self._write_quietly([], self.start_offset))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, batches, start: int) -> None:
        group, topic_id, index = self.key
        if self._writes_in_flight:
            self._start_unsure = True
        self._writes_in_flight += 1
        try:
            await self._persister.write(group, topic_id, index, state_epoch=self.state_epoch,
                                        leader_epoch=self.leader_epoch, start_offset=start, batches=batches)
        except ApiError as exc:
            if exc.code in (Errors.FencedStateEpochError.errno, Errors.FencedLeaderEpochError.errno):
                self._loaded = False     # reset or moved elsewhere: read the state again before the next use
            raise
        finally:
            self._writes_in_flight -= 1

    # --- offsets ------------------------------------------------------------------------------
    def _start_after(self, written: list) -> int:
        """The SPSO once `written` (offset, record, new state) is applied."""
        new_states = {offset: state for offset, _, state in written}
        offset = self.start_offset
        while offset < self.next_offset:
            record = self.records.get(offset)
            state = new_states.get(offset, record.state if record is not None else AVAILABLE)
            if state not in TERMINAL or (record is not None and record.pending and offset not in new_states):
                break
            offset += 1
        return offset

    def _advance_start(self) -> None:
        while self.start_offset < self.next_offset:
            record = self.records.get(self.start_offset)
            if record is None or record.state not in TERMINAL or record.pending:
                break
            del self.records[self.start_offset]
            self.start_offset += 1

    def _archive(self, record: InFlight, cause: str) -> None:
        record.state, record.member = ARCHIVED, None
        self.stats.archived[cause] += 1

    # --- waiting and reporting ----------------------------------------------------------------
    def add_waiter(self, waiter: asyncio.Future) -> None:
        self._waiters.add(waiter)

    def remove_waiter(self, waiter: asyncio.Future) -> None:
        self._waiters.discard(waiter)

    def _notify(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    def counts(self) -> dict[str, int]:
        out = {"available": 0, "acquired": 0, "acknowledged": 0, "archived": 0}
        names = {AVAILABLE: "available", ACQUIRED: "acquired", ACKNOWLEDGED: "acknowledged", ARCHIVED: "archived"}
        for record in self.records.values():
            out[names[record.state]] += 1
        out["in_flight"] = out["available"] + out["acquired"]
        return out

    def close(self) -> None:
        """The broker no longer leads the partition (or the state was deleted): stop the
        timers; what was acquired is available again wherever the state is loaded next."""
        self.closed = True
        self._notify()
        for timer in self._timers:
            timer.cancel()
        for task in list(self._writes):
            task.cancel()


def _check_batches(batches: list[tuple[int, int, list[int]]]) -> None:
    """Kafka's validateAcknowledgementBatches: each batch's range and types are well formed,
    and the batches come in offset order, none reaching back before the previous one's last
    offset (which Kafka lets a batch start at: that offset is then named twice, and refused as
    not acquired); else INVALID_REQUEST."""
    previous_last = -1
    for first, last, types in batches:
        if first > last or first < previous_last or len(types) not in (1, last - first + 1) \
                or any(t not in range(5) for t in types):
            raise ApiError(Errors.InvalidRequestError, f"Invalid acknowledgement batch {first}-{last}")
        previous_last = last


def _target(kind: int, record: InFlight, settings: Settings) -> int:
    if kind == ACCEPT:
        return ACKNOWLEDGED
    if kind == RELEASE:
        return ARCHIVED if record.count >= settings.delivery_count_limit else AVAILABLE
    return ARCHIVED            # REJECT and GAP
