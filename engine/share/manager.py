"""SharePartitionManager: what ShareFetch and ShareAcknowledge call on one broker (Kafka's
SharePartitionManager and DelayedShareFetch).

It owns the broker's share sessions (sessions.py) and its share partitions (partition.py),
one per (group, topic partition) this broker leads, created at first use and dropped when
the broker stops leading the partition (`on_partitions_changed`; what was acquired there is
available again where the state is loaded next).

ShareFetch: open, continue or close the member's share session; apply the acknowledgements
it carries, partition by partition; then, unless the session closes, acquire records from
the session's partitions in turn, within MaxRecords and MaxBytes (the first partition always
gets one batch), and if none are acquired wait until an append or a released record wakes
it, or MaxWaitMs passes. A new session makes the group's share partitions re-read their
state once they hold nothing acquired, so an offset reset done while the group was empty is
seen. ShareAcknowledge applies acknowledgements only.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

import kafka.errors as Errors

from engine.coordinator.group_configs import duration_ms, group_config
from engine.errors import ApiError
from engine.share.partition import AcquiredRange, Settings, SharePartition
from engine.share.sessions import FINAL_EPOCH, INITIAL_EPOCH, ShareSession, ShareSessionCache
from engine.storage.errors import StorageError

log = logging.getLogger(__name__)
TopicIdPartition = tuple[object, int]
RECORD_LIMIT = 1
RENEW_ONLY = -1             # the int8 255 of KIP-1222: 0xFF on the wire
SWEEP_INTERVAL_S = 1.0


@dataclass
class PartitionResult:
    error: int = 0
    error_message: str | None = None
    ack_error: int = 0
    ack_message: str | None = None
    ranges: list[AcquiredRange] = field(default_factory=list)
    records: list[bytes] = field(default_factory=list)


@dataclass
class FetchRequest:
    group_id: str
    member_id: str
    epoch: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    max_records: int
    acquire_mode: int
    partitions: dict[TopicIdPartition, list[tuple[int, int, list[int]]]]   # with their acknowledgements
    forgotten: set[TopicIdPartition]
    on_close: dict | None = None          # the connection's close callbacks (RequestContext.on_close)
    readable: Callable[[uuid.UUID], bool] | None = None   # may the member READ the topic (None: all)


class SharePartitionManager:
    def __init__(self, broker, persister) -> None:
        self._broker = broker
        self._persister = persister
        self.partitions: dict[tuple[str, object, int], SharePartition] = {}
        self.sessions = ShareSessionCache(lambda: broker.config.get("group.share.max.share.sessions"),
                                          lambda group: self._group_config(group, "share.session.timeout.ms") / 1000)
        self._rotation = 0
        self._sweeper: asyncio.Task | None = None

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_periodically())

    def shutdown(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for share_partition in self.partitions.values():
            share_partition.close()
        self.partitions.clear()

    def on_partitions_changed(self) -> None:
        """Drop the share partitions of partitions this broker no longer leads (or leads anew)."""
        for key, share_partition in list(self.partitions.items()):
            current = self._broker.partitions.get((share_partition.partition.topic, share_partition.partition.index))
            if current is not share_partition.partition or not current.is_leader \
                    or current.leader_epoch != share_partition.leader_epoch:
                share_partition.close()
                del self.partitions[key]

    async def _sweep_periodically(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_INTERVAL_S)
            for session in self.sessions.sweep():
                self._release(session)

    # --- configs ------------------------------------------------------------------------------
    def _group_config(self, group_id: str, name: str):
        return group_config(self._broker.image, self._broker.config, group_id, name)

    def settings(self, group_id: str) -> Settings:
        reset = self._group_config(group_id, "share.auto.offset.reset")
        if reset.startswith("by_duration:"):
            reset = f"by_duration:{duration_ms(reset.split(':', 1)[1]) or 0}"
        return Settings(lock_duration_ms=self._group_config(group_id, "share.record.lock.duration.ms"),
                        delivery_count_limit=self._group_config(group_id, "share.delivery.count.limit"),
                        max_record_locks=self._group_config(group_id, "share.partition.max.record.locks"),
                        read_committed=self._group_config(group_id, "share.isolation.level") == "read_committed",
                        auto_offset_reset=reset)

    # --- share partitions ---------------------------------------------------------------------
    def share_partition(self, group_id: str, topic_id, index: int) -> SharePartition:
        """The group's share partition of a partition this broker leads; raises ApiError."""
        topic = self._broker.image.topics_by_id.get(topic_id)
        if topic is None:
            raise ApiError(Errors.UnknownTopicIdError)
        partition = self._broker.leader_partition(topic.name, index)
        key = (group_id, topic_id, index)
        found = self.partitions.get(key)
        if found is not None and (found.partition is not partition or found.leader_epoch != partition.leader_epoch):
            found.close()
            found = None
        if found is None:
            found = self.partitions[key] = SharePartition(group_id, partition, self._persister,
                                                          lambda: self.settings(group_id))
        return found

    async def _loaded(self, group_id: str, topic_id, index: int) -> SharePartition:
        share_partition = self.share_partition(group_id, topic_id, index)
        await share_partition.ensure_loaded()
        return share_partition

    def lock_duration_ms(self, group_id: str) -> int:
        return self._group_config(group_id, "share.record.lock.duration.ms")

    # --- ShareFetch ---------------------------------------------------------------------------
    async def fetch(self, request: FetchRequest) -> dict[TopicIdPartition, PartitionResult]:
        """Raises ApiError for a top-level error (the session, a malformed request)."""
        session = self._session_for(request)
        results: dict[TopicIdPartition, PartitionResult] = {tp: PartitionResult() for tp in request.partitions}
        refused = _refuse(request.readable, session.partitions | set(request.partitions),
                          {tp for tp, batches in request.partitions.items() if batches}, results)
        acknowledged = {tp: batches for tp, batches in request.partitions.items() if tp not in refused}
        await self._acknowledge_all(request.group_id, request.member_id, acknowledged, results)
        if request.epoch == FINAL_EPOCH:
            self.sessions.close(session)
            self._release(session)
            return results
        if request.acquire_mode == RENEW_ONLY:
            return results
        deadline = time.monotonic() + max(request.max_wait_ms, 0) / 1000
        while True:
            acquired = await self._acquire(session, request, results, refused)
            remaining = deadline - time.monotonic()
            if acquired or remaining <= 0 or not self._broker.running \
                    or any(r.error for tp, r in results.items() if tp not in refused):
                return results
            await self._wait(session, request.group_id, remaining)

    def _session_for(self, request: FetchRequest) -> ShareSession:
        if not request.group_id:
            raise ApiError(Errors.InvalidRequestError, "The group id must not be empty.")
        if not request.member_id:
            raise ApiError(Errors.InvalidRequestError, "The member id must not be empty.")
        acks = any(batches for batches in request.partitions.values())
        if request.epoch == INITIAL_EPOCH:
            if acks:
                raise ApiError(Errors.InvalidRequestError, "Acknowledge data present on initial share fetch request.")
            session, gone = self.sessions.open(request.group_id, request.member_id, set(request.partitions))
            for old in gone:
                self._release(old)
            if request.on_close is not None:
                request.on_close[("share-session", request.group_id, request.member_id)] = \
                    functools.partial(self._connection_closed, session)
            for key, share_partition in self.partitions.items():
                if key[0] == request.group_id:
                    share_partition.refresh_when_idle = True
            return session
        if request.epoch == FINAL_EPOCH and request.forgotten:
            raise ApiError(Errors.InvalidRequestError, "Forgotten topics present in the final share fetch request.")
        session = self.sessions.use(request.group_id, request.member_id, request.epoch)
        session.partitions |= set(request.partitions)
        session.partitions -= request.forgotten
        return session

    async def _acknowledge_all(self, group_id: str, member_id: str,
                               partitions: dict[TopicIdPartition, list], results: dict) -> None:
        for (topic_id, index), batches in partitions.items():
            if not batches:
                continue
            result = results[(topic_id, index)]
            try:
                share_partition = await self._loaded(group_id, topic_id, index)
                await share_partition.acknowledge(member_id, batches)
            except ApiError as exc:
                result.ack_error, result.ack_message = exc.code, exc.message
            except StorageError as exc:
                result.ack_error, result.ack_message = exc.error_code, str(exc)

    async def _acquire(self, session: ShareSession, request: FetchRequest, results: dict,
                       refused: set[TopicIdPartition]) -> bool:
        order = sorted(session.partitions - refused, key=lambda tp: (str(tp[0]), tp[1]))
        if order:
            self._rotation = (self._rotation + 1) % len(order)
            order = order[self._rotation:] + order[:self._rotation]
        records_left, bytes_left, any_acquired = max(request.max_records, 1), request.max_bytes, False
        for tp in order:
            if records_left <= 0 or bytes_left <= 0:
                break
            try:
                share_partition = await self._loaded(request.group_id, *tp)
                ranges, batches = share_partition.acquire(
                    request.member_id, records_left, record_limit=request.acquire_mode == RECORD_LIMIT,
                    max_bytes=bytes_left)
            except ApiError as exc:
                results.setdefault(tp, PartitionResult()).error = exc.code
                results[tp].error_message = exc.message
                continue
            except StorageError as exc:
                results.setdefault(tp, PartitionResult()).error = exc.error_code
                continue
            if ranges:
                result = results.setdefault(tp, PartitionResult())
                result.ranges, result.records = ranges, batches
                records_left -= sum(r.last_offset - r.first_offset + 1 for r in ranges)
                bytes_left -= sum(len(b) for b in batches)
                any_acquired = True
        return any_acquired

    async def _wait(self, session: ShareSession, group_id: str, timeout: float) -> None:
        waiter = asyncio.get_running_loop().create_future()
        hosts = []
        for topic_id, index in session.partitions:
            share_partition = self.partitions.get((group_id, topic_id, index))
            if share_partition is not None:
                hosts += [share_partition, share_partition.partition]
                share_partition.add_waiter(waiter)
                share_partition.partition.add_fetch_waiter(waiter)
        try:
            await asyncio.wait_for(waiter, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            for host in hosts:
                (host.remove_waiter if isinstance(host, SharePartition) else host.remove_fetch_waiter)(waiter)

    # --- ShareAcknowledge ---------------------------------------------------------------------
    async def acknowledge(self, group_id: str, member_id: str, epoch: int,
                          partitions: dict[TopicIdPartition, list], readable: Callable[[uuid.UUID], bool] | None = None
                          ) -> dict[TopicIdPartition, PartitionResult]:
        if not group_id or not member_id:
            raise ApiError(Errors.InvalidRequestError, "The group id and member id must not be empty.")
        if epoch == INITIAL_EPOCH:
            raise ApiError(Errors.InvalidShareSessionEpochError,
                           "A share session cannot be opened by ShareAcknowledge (epoch 0).")
        session = self.sessions.use(group_id, member_id, epoch)
        results = {tp: PartitionResult() for tp in partitions}
        refused = _refuse(readable, set(partitions), set(partitions), results)
        await self._acknowledge_all(group_id, member_id,
                                    {tp: b for tp, b in partitions.items() if tp not in refused}, results)
        if epoch == FINAL_EPOCH:
            self.sessions.close(session)
            self._release(session)
        return results

    def _connection_closed(self, session: ShareSession) -> None:
        """The connection the session was opened on closed (as Kafka 4.1 on): the session
        ends and its member's acquired records are available again at once."""
        if self.sessions.get(session.group_id, session.member_id) is session:
            self.sessions.close(session)
            self._release(session)

    def _release(self, session: ShareSession) -> None:
        """A closed or evicted session: its member's acquired records are available again."""
        for topic_id, index in session.partitions:
            share_partition = self.partitions.get((session.group_id, topic_id, index))
            if share_partition is not None and not share_partition.closed:
                share_partition.release_member(session.member_id)

    # --- reporting ----------------------------------------------------------------------------
    def describe(self, group_id: str | None = None) -> list[dict]:
        """The share partitions this broker leads (of one group), with their counts and counters."""
        out = []
        for (group, _, _), sp in sorted(self.partitions.items(), key=lambda kv: (kv[0][0], str(kv[0][1]), kv[0][2])):
            if group_id is not None and group != group_id:
                continue
            out.append({"group": group, "topic": sp.partition.topic, "partition": sp.partition.index,
                        "start_offset": sp.start_offset, "end_offset": sp.next_offset - 1,
                        "high_watermark": sp.partition.high_watermark, **sp.counts(),
                        "deliveries": sp.stats.deliveries, "acknowledged_total": sp.stats.acknowledged,
                        "released_total": sp.stats.released, "rejected_total": sp.stats.rejected,
                        "lock_expiries_total": sp.stats.lock_expiries, "renewals_total": sp.stats.renewals,
                        "archived_total": dict(sp.stats.archived)})
        return out


def _refuse(readable, partitions: set[TopicIdPartition], acknowledged: set[TopicIdPartition],
            results: dict[TopicIdPartition, PartitionResult]) -> set[TopicIdPartition]:
    """The partitions of topics the member may not READ, answered TOPIC_AUTHORIZATION_FAILED (as
    their acknowledgement's error too, for those in `acknowledged`). They stay in the share
    session, but nothing is acquired or acknowledged on them until an ACL allows it, as
    KafkaApis filters them."""
    if readable is None:
        return set()
    refused = {tp for tp in partitions if not readable(tp[0])}
    code, message = Errors.TopicAuthorizationFailedError.errno, "Not authorized to read the topic."
    for tp in refused:
        result = results.setdefault(tp, PartitionResult())
        result.error, result.error_message = code, message
        if tp in acknowledged:
            result.ack_error, result.ack_message = code, message
    return refused
