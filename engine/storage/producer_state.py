"""Idempotent-producer state of one partition (Kafka's ProducerStateManager)."""
from __future__ import annotations

import json
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple

from .control_records import EndTxnMarker
from .errors import (InvalidProducerEpochError, InvalidTxnStateError, OutOfOrderSequenceError,
                     TransactionCoordinatorFencedError)
from .log_files import (SNAPSHOT_SUFFIX, as_path, offset_file, offset_from_file, unlink_quietly,
                        write_atomically)
from .records import INT32_MAX, TRANSACTIONAL_MASK, BatchHeader

# Kafka remembers the last 5 batches per producer: a client has at most 5 in flight, so a
# retry of any of them can still be recognised as a duplicate.
NUM_BATCHES_TO_RETAIN = 5
SNAPSHOT_VERSION = 2   # 2 adds coordinator_epoch and txn_first_offset; 1 still loads
NO_TXN = -1


class BatchMetadata(NamedTuple):
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass
class ProducerEntry:
    producer_id: int
    epoch: int
    batches: deque = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))
    last_timestamp: int = -1
    coordinator_epoch: int = -1
    txn_first_offset: int = NO_TXN   # first offset of the open transaction, NO_TXN if none

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    def copy(self) -> ProducerEntry:
        return ProducerEntry(self.producer_id, self.epoch,
                             deque(self.batches, maxlen=NUM_BATCHES_TO_RETAIN), self.last_timestamp,
                             self.coordinator_epoch, self.txn_first_offset)

    def bump_epoch(self, epoch: int) -> None:
        if epoch != self.epoch:
            self.epoch = epoch
            self.batches.clear()

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        if header.producer_epoch != self.epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == header.base_sequence and batch.last_seq == header.last_sequence:
                return batch
        return None


class LastRecord(NamedTuple):
    """What the cleaner must not lose of an active producer (Kafka's LastRecord): the last
    offset of its last data batch (None once a marker bumped its epoch and no data followed),
    and its epoch."""
    last_data_offset: int | None
    producer_epoch: int


class TxnVerification(NamedTuple):
    """What a client's append brings for its transactional batches (KIP-890 part 1): the guard
    `start_verification` handed out, once the transaction coordinator confirmed the partition
    is in the producer's transaction; None if no confirmation was needed (or none came)."""
    guard: object | None = None


class CompletedTxn(NamedTuple):
    """A transaction its marker ended (Kafka's CompletedTxn): data from `first_offset`,
    marker at `last_offset`."""
    producer_id: int
    first_offset: int
    last_offset: int
    aborted: bool


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    """Per producer id: its epoch, the metadata of its last 5 batches, the epoch of the
    transaction coordinator that last wrote it a marker, and its open transaction.

    Transactions (KIP-98): a producer's first transactional batch opens a transaction at
    its offset; its COMMIT or ABORT marker closes it (`stage_marker`). The partition's
    first unstable offset is the smallest first offset of an open transaction, or of a
    completed one whose marker is not yet below the high watermark (Kafka keeps those
    "unreplicated" so read_committed consumers never pass a marker a new leader may lack).

    Snapshot file `<offset, 20 digits>.snapshot` in the partition dir holds the state
    after every batch below `offset`, as UTF-8 JSON:

        {"version": 2, "offset": N,
         "producers": [{"producer_id": P, "epoch": E, "last_timestamp": T,
                        "coordinator_epoch": C, "txn_first_offset": F (-1: none),
                        "batches": [[first_seq, last_seq, first_offset, last_offset, ts], ...]}]}

    Open transactions survive a restart or kill -9 through it: the loader replays only
    the batches after the newest snapshot, and a marker there closes what it opened.

    It is written to a temp file, fsynced and renamed, so a crash leaves the old or the
    new snapshot, never half of one.  A log rebuilds the state at open from its newest
    snapshot plus the batch headers after it.

    An append is checked and staged batch by batch (`check`, `stage`), then `commit`ted
    once the bytes are in the log, or `abort`ed: a request whose third batch is out of
    sequence leaves no trace of the first two.

    Not thread-safe: owned by its Log, called on the broker's event loop.
    """

    def __init__(self, partition_dir: Path) -> None:
        self.dir = as_path(partition_dir)
        self._entries: dict[int, ProducerEntry] = {}
        self._pending: dict[int, ProducerEntry] = {}
        self._ongoing: dict[int, int] = {}              # producer id -> txn first offset
        self._unreplicated: list[CompletedTxn] = []     # completed, marker not below the HW yet
        self._completed: list[CompletedTxn] = []        # staged by stage_marker
        self._newest_snapshot = -1                      # offset of the newest snapshot file; -1: none
        self._verifying: dict[int, tuple[object, int]] = {}   # producer id -> (guard, created at ms)

    @property
    def producers(self) -> Mapping[int, ProducerEntry]:
        return self._entries

    def _entry(self, producer_id: int) -> ProducerEntry | None:
        return self._pending.get(producer_id) or self._entries.get(producer_id)

    # --- validation --------------------------------------------------------------------
    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        """The written batch `header` repeats, among the producer's last 5. Only batches
        already in the log count (as Kafka's lastEntry): a batch staged by the same append
        is not written yet, so repeating it is a sequence error, never a duplicate."""
        entry = self._entries.get(header.producer_id)
        return entry.find_duplicate(header) if entry else None

    def check(self, header: BatchHeader) -> int | None:
        """The original first offset if `header` repeats one of the producer's last 5 written
        batches; otherwise None once epoch and sequence follow its (staged) state (else raise)."""
        duplicate = self.find_duplicate(header)
        if duplicate is not None:
            return duplicate.first_offset
        entry = self._entry(header.producer_id)
        if entry is None:
            return None  # unknown producer (new, or its batches were deleted): any sequence
        if header.producer_epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"producer {header.producer_id} epoch {header.producer_epoch} < {entry.epoch}")
        if header.producer_epoch > entry.epoch:
            if header.base_sequence != 0:
                raise OutOfOrderSequenceError(
                    f"producer {header.producer_id} new epoch {header.producer_epoch} "
                    f"must start at sequence 0, got {header.base_sequence}")
        elif not in_sequence(entry.last_seq, header.base_sequence):
            raise OutOfOrderSequenceError(
                f"producer {header.producer_id} sequence {header.base_sequence} "
                f"does not follow {entry.last_seq}")
        if entry.txn_first_offset != NO_TXN and not header.is_transactional:
            raise InvalidTxnStateError(
                f"producer {header.producer_id} has an open transaction: expected a transactional write")
        return None

    def check_marker(self, header: BatchHeader, marker: EndTxnMarker) -> None:
        """A coordinator's marker: an older producer epoch is INVALID_PRODUCER_EPOCH, an
        older coordinator epoch TRANSACTION_COORDINATOR_FENCED (Kafka's appendEndTxnMarker)."""
        entry = self._entry(header.producer_id)
        if entry is None:
            return
        if header.producer_epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"marker of producer {header.producer_id} epoch {header.producer_epoch} < {entry.epoch}")
        if marker.coordinator_epoch < entry.coordinator_epoch:
            raise TransactionCoordinatorFencedError(
                f"marker of coordinator epoch {marker.coordinator_epoch} < {entry.coordinator_epoch} "
                f"for producer {header.producer_id}")

    # --- updates -----------------------------------------------------------------------
    def _staged_entry(self, header: BatchHeader) -> ProducerEntry:
        pid = header.producer_id
        entry = self._pending.get(pid)
        if entry is None:
            current = self._entries.get(pid)
            entry = current.copy() if current else ProducerEntry(pid, header.producer_epoch)
            self._pending[pid] = entry
        return entry

    def stage(self, header: BatchHeader, first_offset: int) -> None:
        """Record a batch about to be appended at `first_offset`; visible to later checks."""
        entry = self._pending.get(header.producer_id) or self._staged_entry(header)
        if header.producer_epoch != entry.epoch:
            entry.bump_epoch(header.producer_epoch)
        entry.batches.append(BatchMetadata(
            header.base_sequence, header.last_sequence, first_offset,
            first_offset + header.last_offset_delta, header.max_timestamp))
        entry.last_timestamp = header.max_timestamp
        if header.attributes & TRANSACTIONAL_MASK:
            self._verifying.pop(header.producer_id, None)   # the transaction is open now, or was already
            if entry.txn_first_offset == NO_TXN:
                entry.txn_first_offset = first_offset

    def stage_marker(self, header: BatchHeader, marker: EndTxnMarker) -> CompletedTxn | None:
        """Record a COMMIT/ABORT marker at header.base_offset; the transaction it closes, if any."""
        entry = self._staged_entry(header)
        self._verifying.pop(header.producer_id, None)   # a verification from before the marker is stale
        completed = None
        if entry.txn_first_offset != NO_TXN:
            # A marker without data before it (an empty transaction) leaves no trace.
            completed = CompletedTxn(entry.producer_id, entry.txn_first_offset, header.base_offset,
                                     not marker.commit)
            self._completed.append(completed)
        entry.bump_epoch(header.producer_epoch)
        entry.coordinator_epoch = marker.coordinator_epoch
        entry.txn_first_offset = NO_TXN
        entry.last_timestamp = header.max_timestamp
        return completed

    def commit(self) -> list[CompletedTxn]:
        """Make the staged batches current; return the transactions their markers completed."""
        ongoing = self._ongoing
        for pid, entry in self._pending.items():
            if entry.txn_first_offset != NO_TXN:
                ongoing[pid] = entry.txn_first_offset
            elif ongoing:
                ongoing.pop(pid, None)
        self._entries.update(self._pending)
        self._pending.clear()
        if not self._completed:
            return []
        completed, self._completed = self._completed, []
        self._unreplicated.extend(completed)
        return completed

    def abort(self) -> None:
        self._pending.clear()
        self._completed.clear()

    def update(self, header: BatchHeader, first_offset: int, marker: EndTxnMarker | None = None
               ) -> list[CompletedTxn]:
        """Apply an appended (or replayed) batch without checks."""
        if marker is not None:
            self.stage_marker(header, marker)
        else:
            self.stage(header, first_offset)
        return self.commit()

    def clear(self) -> None:
        self._entries.clear()
        self._pending.clear()
        self._ongoing.clear()
        self._unreplicated.clear()
        self._completed.clear()
        self._verifying.clear()

    # --- transactions ------------------------------------------------------------------
    def ongoing_txn_first_offset(self, producer_id: int) -> int | None:
        return self._ongoing.get(producer_id)

    def has_open_txn(self, producer_id: int) -> bool:
        """The producer has a transaction open here, counting the batches staged so far."""
        entry = self._entry(producer_id)
        return entry is not None and entry.txn_first_offset != NO_TXN

    # KIP-890 part 1 (Kafka's VerificationStateEntry): before the transaction coordinator is
    # asked whether the partition is in the producer's transaction, the partition hands out
    # a guard; the append is taken only if the guard is still the current one. A marker (or
    # the transaction's first batch) clears it, so a verification that raced with an ABORT
    # cannot open a transaction the coordinator no longer knows.
    def start_verification(self, producer_id: int, now_ms: int) -> object | None:
        """The guard for the producer's next transactional append; None if it has a
        transaction open here already (the open transaction is the proof)."""
        if producer_id in self._ongoing:
            return None
        entry = self._verifying.get(producer_id)
        if entry is None:
            entry = self._verifying[producer_id] = (object(), now_ms)
        return entry[0]

    def is_verified(self, producer_id: int, guard: object | None) -> bool:
        entry = self._verifying.get(producer_id)
        return guard is not None and entry is not None and entry[0] is guard

    @property
    def ongoing_txns(self) -> Mapping[int, int]:
        """Producer id -> first offset of its open transaction."""
        return self._ongoing

    def last_stable_offset_after(self, txn: CompletedTxn) -> int:
        """The LSO once `txn` completed (Kafka's lastStableOffset(completedTxn)), stored in
        its .txnindex entry: the first open transaction of another producer, else past the marker."""
        others = [first for pid, first in self._ongoing.items() if pid != txn.producer_id]
        return min(others) if others else txn.last_offset + 1

    def on_high_watermark(self, high_watermark: int) -> None:
        """Forget the completed transactions whose marker is now below the high watermark."""
        if self._unreplicated:
            self._unreplicated = [t for t in self._unreplicated if t.last_offset >= high_watermark]

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """Smallest first offset of an open transaction or of one whose marker the high
        watermark has not passed yet; None if there is neither."""
        self.on_high_watermark(high_watermark)
        firsts = [t.first_offset for t in self._unreplicated]
        if self._ongoing:
            firsts.append(min(self._ongoing.values()))
        return min(firsts) if firsts else None

    def remove_expired(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers whose last batch is `producer.id.expiration.ms` old (Kafka's
        removeExpiredProducers), so the state does not grow with every producer ever seen;
        a forgotten producer that writes again is checked like a new one. Returns how many."""
        # A producer with an open transaction never expires (the coordinator ends it).
        expired = [pid for pid, entry in self._entries.items()
                   if entry.txn_first_offset == NO_TXN and now_ms - entry.last_timestamp >= expiration_ms]
        for pid in expired:
            del self._entries[pid]
        for pid in [pid for pid, (_, created) in self._verifying.items() if now_ms - created >= expiration_ms]:
            del self._verifying[pid]   # a verification the producer never followed with a batch
        return len(expired)

    def last_records_of_active_producers(self) -> dict[int, LastRecord]:
        """Producer id -> its LastRecord, for every producer not expired (Kafka's
        lastRecordsOfActiveProducers): the cleaner keeps the batch holding it, emptied if need
        be, so that a rebuild from the log still knows the producer's sequence and epoch."""
        return {pid: LastRecord(entry.batches[-1].last_offset if entry.batches else None, entry.epoch)
                for pid, entry in self._entries.items()}

    # --- snapshots ---------------------------------------------------------------------
    def snapshot_offsets(self, names: Iterable[str] | None = None) -> list[int]:
        """Offsets of the snapshot files, from `names` (the dir's listing) or a new listing."""
        offsets = (offset_from_file(name) for name in (os.listdir(self.dir) if names is None else names)
                   if name.endswith(SNAPSHOT_SUFFIX))
        return sorted(o for o in offsets if o is not None)

    def take_snapshot(self, offset: int) -> None:
        producers = [
            {"producer_id": e.producer_id, "epoch": e.epoch, "last_timestamp": e.last_timestamp,
             "coordinator_epoch": e.coordinator_epoch, "txn_first_offset": e.txn_first_offset,
             "batches": [list(b) for b in e.batches]}
            for e in self._entries.values()
        ]
        doc = {"version": SNAPSHOT_VERSION, "offset": offset, "producers": producers}
        write_atomically(offset_file(self.dir, offset, SNAPSHOT_SUFFIX),
                         json.dumps(doc, separators=(",", ":")).encode())
        self._newest_snapshot = offset

    def snapshot_needed(self, offset: int) -> bool:
        """Whether a snapshot at `offset` would say anything new (Kafka's takeSnapshot skips it
        otherwise): not when the newest snapshot is at `offset` already, nor for an empty log
        at 0 without one (there is nothing to replay). At 40,000 partitions, writing one per
        log at every shutdown cost two fsyncs each."""
        return offset != max(self._newest_snapshot, 0)

    def load(self, offsets: list[int] | None = None) -> int:
        """Load the newest readable snapshot (of `offsets`, if the caller listed them); return
        its offset, or 0 if there is none.

        An unreadable snapshot is deleted and the next older one is tried.
        """
        self.clear()
        for offset in reversed(self.snapshot_offsets() if offsets is None else offsets):
            path = offset_file(self.dir, offset, SNAPSHOT_SUFFIX)
            try:
                self._entries = self._parse(path.read_bytes())
                self._ongoing = {pid: e.txn_first_offset for pid, e in self._entries.items()
                                 if e.txn_first_offset != NO_TXN}
                self._newest_snapshot = offset
                return offset
            except (OSError, ValueError, KeyError, TypeError):
                unlink_quietly(path)
        self._newest_snapshot = -1
        return 0

    @staticmethod
    def _parse(data: bytes) -> dict[int, ProducerEntry]:
        doc = json.loads(data)
        if doc["version"] not in (1, SNAPSHOT_VERSION):
            raise ValueError(f"unknown snapshot version {doc['version']}")
        entries = {}
        for p in doc["producers"]:
            batches = deque((BatchMetadata(*b) for b in p["batches"]), maxlen=NUM_BATCHES_TO_RETAIN)
            entries[p["producer_id"]] = ProducerEntry(
                p["producer_id"], p["epoch"], batches, p["last_timestamp"],
                p.get("coordinator_epoch", -1), p.get("txn_first_offset", NO_TXN))
        return entries

    def truncate_and_reload(self, offset: int, names: Iterable[str] | None = None) -> int:
        """Forget snapshots above `offset` (their batches are gone) and load the newest
        remaining one; return its offset (0 if none).  Caller replays from there.
        `names`: the dir's listing, if the caller has one (saves listing it twice)."""
        kept = []
        for snapshot in self.snapshot_offsets(names):
            if snapshot > offset:
                unlink_quietly(offset_file(self.dir, snapshot, SNAPSHOT_SUFFIX))
            else:
                kept.append(snapshot)
        return self.load(kept)

    def delete_snapshots_below(self, offset: int) -> None:
        for snapshot in self.snapshot_offsets():
            if snapshot < offset:
                unlink_quietly(offset_file(self.dir, snapshot, SNAPSHOT_SUFFIX))
        if self._newest_snapshot < offset:
            self._newest_snapshot = -1

    def truncate_fully(self) -> None:
        """Drop all state and every snapshot (the log restarts empty)."""
        self.clear()
        self.delete_snapshots_below(2**63 - 1)
