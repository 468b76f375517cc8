"""One partition replica as its broker sees it: leader or follower, and the replication state.

As leader it tracks each follower's log end offset (LEO) from their fetches, keeps the high
watermark at the smallest LEO in the ISR, decides when the ISR should shrink (a follower not
caught up for `replica.lag.time.max.ms`) or grow (a follower that reached the high
watermark), and wakes the fetchers and acks=all producers that wait on it. As follower it
only appends what its fetcher brings and follows the leader's high watermark.

ISR changes are proposed to the controller (`alter_isr`, like Kafka's AlterPartition); the
partition applies them only when the controller's metadata comes back.

All methods run on the engine's event loop thread, which owns the partition.
"""
from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Callable

import kafka.errors as Errors

from engine.errors import ApiError
from engine.storage.errors import StorageError, is_io_failure
from engine.storage.log import Log
from engine.storage.producer_state import TxnVerification


@dataclass
class FollowerState:
    log_end_offset: int = -1
    last_caught_up_ms: int = 0
    last_fetch_leo: int = -1        # the leader's LEO at this follower's previous fetch
    last_fetch_ms: int = 0


class Partition:
    def __init__(self, topic: str, index: int, topic_id: uuid.UUID, log: Log, node_id: int) -> None:
        # Called with the error when the log dir fails under an append (the broker takes the dir offline).
        self.on_storage_failure = lambda exc: None
        self.topic = topic
        self.index = index
        self.topic_id = topic_id
        self.log = log
        self.node_id = node_id
        self.leader_id = -1
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.replicas: list[int] = []
        self.isr: list[int] = []
        self.pending_isr: list[int] | None = None   # proposed to the controller, not yet applied
        self.followers: dict[int, FollowerState] = {}
        self._high_watermark = 0
        self._fetch_waiters: set[asyncio.Future] = set()
        self._hw_waiters: list[tuple[int, asyncio.Future]] = []

    def __repr__(self) -> str:
        role = "leader" if self.is_leader else f"follower of {self.leader_id}"
        return f"Partition({self.topic}-{self.index} {role} epoch={self.leader_epoch} isr={self.isr})"

    # --- role changes (from the controller's metadata) --------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.node_id

    def make_leader(self, leader_epoch: int, partition_epoch: int, replicas: list[int], isr: list[int],
                    now_ms: int) -> None:
        new_epoch = leader_epoch != self.leader_epoch or not self.is_leader
        self.leader_id, self.leader_epoch, self.partition_epoch = self.node_id, leader_epoch, partition_epoch
        self.replicas, self.isr, self.pending_isr = list(replicas), list(isr), None
        if new_epoch:
            # Followers start "caught up now" so a new leader does not shrink the ISR at once.
            # The epoch enters the epoch cache with its first append (Log.append): until then
            # it holds no records, so "where does the previous epoch end" is the log end either way.
            self.followers = {r: FollowerState(last_caught_up_ms=now_ms) for r in replicas if r != self.node_id}
        for replica in replicas:
            if replica != self.node_id:
                self.followers.setdefault(replica, FollowerState(last_caught_up_ms=now_ms))
        for gone in set(self.followers) - set(replicas):
            del self.followers[gone]
        self._high_watermark = min(max(self._high_watermark, self.log.log_start_offset), self.log.log_end_offset)
        self.maybe_advance_high_watermark()
        if new_epoch:
            self.notify_fetchers()    # a fetch waiting on the old epoch is answered in the new one

    def make_follower(self, leader_id: int, leader_epoch: int, partition_epoch: int, replicas: list[int],
                      isr: list[int]) -> bool:
        """Follow `leader_id`; True if the leader or epoch changed (the fetcher must re-truncate)."""
        changed = leader_id != self.leader_id or leader_epoch != self.leader_epoch
        self.leader_id, self.leader_epoch, self.partition_epoch = leader_id, leader_epoch, partition_epoch
        self.replicas, self.isr, self.pending_isr = list(replicas), list(isr), None
        self.followers = {}
        self._high_watermark = min(self._high_watermark, self.log.log_end_offset)
        self._fail_hw_waiters()
        self.notify_fetchers()
        return changed

    def check_leader_epoch(self, current_leader_epoch: int) -> None:
        """KIP-320 fencing for Fetch, ListOffsets and OffsetForLeaderEpoch: a client's older epoch
        is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH; -1 means the client did not say."""
        if current_leader_epoch < 0 or current_leader_epoch == self.leader_epoch:
            return
        if current_leader_epoch < self.leader_epoch:
            raise ApiError(Errors.FencedLeaderEpochError)
        raise ApiError(Errors.UnknownLeaderEpochError)

    # --- offsets ------------------------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, offset: int) -> None:
        self._high_watermark = offset
        self.log.producer_state.on_high_watermark(offset)   # a follower's, from its leader

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """Where read_committed consumers stop: the first offset of a transaction still open
        (or whose marker is not replicated yet), else the high watermark. Same on followers."""
        first_unstable = self.log.producer_state.first_unstable_offset(self._high_watermark)
        if first_unstable is None:
            return self._high_watermark
        # DeleteRecords or retention may have moved the log start past an open transaction (as Kafka).
        return min(max(first_unstable, self.log.log_start_offset), self._high_watermark)

    def ongoing_transaction_first_offset(self, producer_id: int) -> int | None:
        return self.log.producer_state.ongoing_txn_first_offset(producer_id)

    def aborted_transactions(self, start_offset: int, upper_offset: int) -> list[tuple[int, int]]:
        """(producer_id, first_offset) of each aborted transaction overlapping [start_offset, upper_offset)."""
        return [(t.producer_id, t.first_offset) for t in self.log.aborted_transactions(start_offset, upper_offset)]

    def maybe_advance_high_watermark(self) -> bool:
        """HW = the smallest LEO in the ISR (the leader's own LEO included); it never moves back."""
        if not self.is_leader:
            return False
        leos = [self.log.log_end_offset]
        leos += [self.followers[r].log_end_offset for r in self.isr if r in self.followers]
        new_hw = min(leos)
        if new_hw <= self._high_watermark:
            return False
        self._high_watermark = new_hw
        self.log.producer_state.on_high_watermark(new_hw)
        self._release_hw_waiters()
        self.notify_fetchers()
        return True

    # --- leader: appends and follower fetches ---------------------------------------------------

    def append(self, records: bytearray, now_ms: int, *, control: bool = False, records_checked: bool = False,
               verification: TxnVerification | None = None):
        """Append as leader; `control`: transaction markers built by the broker;
        `records_checked`: compressed batches were checked off the loop (record_checks.py);
        `verification`: a client's transactional append, KIP-890 (Log.append)."""
        try:
            info = self.log.append(records, leader_epoch=self.leader_epoch, now_ms=now_ms, control=control,
                                   records_checked=records_checked, verification=verification)
        except OSError as exc:   # e.g. rolling a segment on a full disk
            self.on_storage_failure(exc)
            raise StorageError(f"append to {self.topic}-{self.index} failed: {exc}") from exc
        except StorageError as exc:
            if is_io_failure(exc):
                self.on_storage_failure(exc)
            raise
        if not info.duplicate:
            self.maybe_advance_high_watermark()   # a lone ISR member commits at once
            self.notify_fetchers()
        return info

    def record_follower_fetch(self, replica_id: int, fetch_offset: int, now_ms: int) -> None:
        """A follower fetched from `fetch_offset`: that is its LEO (as in Kafka's updateFollowerFetchState).
        A position past this leader's log end is none a replica can have reached: it changes nothing."""
        state = self.followers.get(replica_id)
        leader_leo = self.log.log_end_offset
        if state is None or fetch_offset > leader_leo:
            return
        if fetch_offset >= leader_leo:
            state.last_caught_up_ms = now_ms
        elif fetch_offset >= state.last_fetch_leo >= 0:
            state.last_caught_up_ms = max(state.last_caught_up_ms, state.last_fetch_ms)
        state.log_end_offset = fetch_offset
        state.last_fetch_leo, state.last_fetch_ms = leader_leo, now_ms
        self.maybe_advance_high_watermark()

    def isr_to_expand(self, live_brokers: Callable[[], set[int]]) -> list[int] | None:
        """The ISR plus live followers that caught up to the HW (and into this epoch), if any did.

        A stopping broker still fetches until it closes but may not rejoin (the controller would
        refuse it), so only live brokers are eligible. `live_brokers()` is asked only when a
        follower is out of the ISR: every follower fetch of every partition comes here."""
        if not self.is_leader or self.pending_isr is not None:
            return None
        outside = [r for r in self.followers if r not in self.isr]
        if not outside:
            return None
        eligible = live_brokers()
        epoch_start = self._epoch_start_offset()
        joiners = [r for r in outside if r in eligible
                   and self.followers[r].log_end_offset >= max(self._high_watermark, epoch_start)]
        return self.isr + sorted(joiners) if joiners else None

    def isr_to_shrink(self, now_ms: int, lag_time_max_ms: int) -> list[int] | None:
        """The ISR without followers that have not caught up within `replica.lag.time.max.ms`."""
        if not self.is_leader or self.pending_isr is not None:
            return None
        laggards = {r for r in self.isr if r != self.node_id and r in self.followers
                    and now_ms - self.followers[r].last_caught_up_ms > lag_time_max_ms}
        return [r for r in self.isr if r not in laggards] if laggards else None

    def _epoch_start_offset(self) -> int:
        """Where this leader's epoch starts: its first append, or, before any, the log end (as
        Kafka's makeLeader assigns it). Not 0: a follower that lost data could otherwise
        rejoin the ISR below records this leader had when it was elected."""
        entries = self.log.leader_epoch_cache.entries
        return next((offset for epoch, offset in reversed(entries) if epoch == self.leader_epoch),
                    self.log.log_end_offset)

    # --- waiting ---------------------------------------------------------------------------------

    def add_fetch_waiter(self, waiter: asyncio.Future) -> None:
        self._fetch_waiters.add(waiter)

    def remove_fetch_waiter(self, waiter: asyncio.Future) -> None:
        self._fetch_waiters.discard(waiter)

    def notify_fetchers(self) -> None:
        for waiter in self._fetch_waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._fetch_waiters.clear()

    def wait_for_high_watermark(self, offset: int) -> asyncio.Future:
        """A future resolved once the HW reaches `offset` (acks=all); failed if leadership is lost."""
        waiter = asyncio.get_running_loop().create_future()
        if self._high_watermark >= offset:
            waiter.set_result(True)
        else:
            self._hw_waiters.append((offset, waiter))
        return waiter

    def _release_hw_waiters(self) -> None:
        still = []
        for offset, waiter in self._hw_waiters:
            if waiter.done():
                continue
            if self._high_watermark >= offset:
                waiter.set_result(True)
            else:
                still.append((offset, waiter))
        self._hw_waiters = still

    def _fail_hw_waiters(self) -> None:
        for _, waiter in self._hw_waiters:
            if not waiter.done():
                waiter.set_result(False)
        self._hw_waiters = []

    def close(self) -> None:
        self._fail_hw_waiters()
        self.notify_fetchers()
