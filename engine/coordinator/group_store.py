"""The groups of the `__consumer_offsets` partitions this broker leads, and their records
(Kafka's GroupMetadataManager).

A group belongs to partition `abs(hashCode(group_id)) % partitions` of `__consumer_offsets`
(Java's String.hashCode and Kafka's Utils.abs, so a group maps to the same partition as on
Kafka), and the leader of that partition is the group's coordinator. The store keeps the
state of those groups in memory and writes every change to the partition's log as records
(offsets_records.py): offset commits, a group's metadata and assignment after each
rebalance, and tombstones for deleted offsets and groups. When the broker becomes leader of
a partition the store replays its log, so groups and offsets survive restarts and moves;
when it stops leading one, the groups are dropped.

Writes go straight to the partition's leader log (Partition.append), as Kafka's coordinator
appends to its own partitions rather than producing to them, and then wait, as acks=all
does, until the high watermark covers them (`offsets.commit.timeout.ms`): only then does
the in-memory state change and the caller answer, so an acknowledged commit survives the
loss of the leader. A commit is one batch (INVALID_COMMIT_OFFSET_SIZE beyond
max.message.bytes); a group's state records and tombstones go in as many batches as they
need, and a member whose record alone could never fit is refused before it changes its
group. Loading replays the log synchronously on the event loop;
`__consumer_offsets` is compacted, so its logs stay small. Not thread-safe: the engine's
event loop owns the store.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
from typing import Awaitable, Iterable

import kafka.errors as Errors

from engine.cluster import internal_topics, slices
from engine.coordinator import consumer_group_records as CGR
from engine.coordinator import offsets_records as R
from engine.coordinator import share_group_records as SGR
from engine.coordinator.consumer_group import ConsumerGroup
from engine.coordinator.group import GroupMetadata, GroupState, MemberMetadata
from engine.coordinator.offsets_records import OffsetAndMetadata
from engine.coordinator.share_group import ShareGroup
from engine.errors import ApiError
from engine.storage.errors import (InvalidProducerEpochError, OutOfOrderSequenceError, RecordTooLargeError,
                                   StorageError)

Records = list[tuple[bytes, bytes | None]]     # (key, value) records; a None value is a tombstone
log = logging.getLogger(__name__)

OFFSETS_TOPIC = internal_topics.OFFSETS_TOPIC
TopicPartition = tuple[str, int]


def java_string_hashcode(value: str) -> int:
    """Java's String.hashCode: over UTF-16 code units, in 32-bit two's complement."""
    data = value.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(group_id: str, num_partitions: int) -> int:
    """Kafka's `Utils.abs(groupId.hashCode) % groupMetadataTopicPartitionCount`."""
    h = java_string_hashcode(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % num_partitions


class GroupStore:
    def __init__(self, broker) -> None:
        self._broker = broker
        self._shards: dict[int, object] = {}        # offsets partition -> the Partition loaded
        self.groups: dict[str, GroupMetadata] = {}
        self.undecodable_records = 0                # skipped while loading, since start
        self._append_turns: dict[str, list] = {}    # group id -> [lock, writers holding or waiting]

    # --- ownership --------------------------------------------------------------------------
    def num_partitions(self) -> int:
        """The configured count, never the topic's live one (engine/cluster/internal_topics.py)."""
        return internal_topics.partition_count(OFFSETS_TOPIC, self._broker.config)

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions())

    def owns(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self._shards

    def owned_partitions(self) -> list[int]:
        return sorted(self._shards)

    def sync(self, now_ms: int) -> tuple[list[GroupMetadata], list[GroupMetadata]]:
        """Follow the broker's leadership of `__consumer_offsets`: load the partitions it
        gained, drop those it lost. Returns (loaded groups, unloaded groups)."""
        led = {index: p for (topic, index), p in self._broker.partitions.items()
               if topic == OFFSETS_TOPIC and p.is_leader}
        unloaded, loaded = [], []
        for index in [i for i, p in self._shards.items() if led.get(i) is not p]:
            unloaded += self._unload(index)
        for index, partition in sorted(led.items()):
            if index not in self._shards:
                loaded += self._load(index, partition, now_ms)
        return loaded, unloaded

    def unload_all(self) -> list[GroupMetadata]:
        unloaded = []
        for index in list(self._shards):
            unloaded += self._unload(index)
        return unloaded

    def _unload(self, index: int) -> list[GroupMetadata]:
        del self._shards[index]
        gone = [g for g in self.groups.values() if self.partition_for(g.group_id) == index]
        for group in gone:
            del self.groups[group.group_id]
        log.log(logging.INFO if gone else logging.DEBUG, "Broker %d: no longer coordinator for %s-%d "
                "(%d groups unloaded)", self._broker.node_id, OFFSETS_TOPIC, index, len(gone))
        return gone

    def _load(self, index: int, partition, now_ms: int) -> list[GroupMetadata]:
        offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        records: dict[str, R.GroupRecord] = {}
        removed: set[str] = set()
        consumer_groups: dict[str, dict[bytes, bytes]] = {}   # KIP-848 groups' records by key
        share_groups: dict[str, dict[bytes, bytes]] = {}      # KIP-932 groups' records by key

        def skip(offset: int, reason: str) -> None:
            # A record we cannot read must not stop the broker: Kafka's loaders skip unknown
            # record types too. Only the coordinator writes here, so this is damage or an old bug.
            self.undecodable_records += 1
            log.warning("Broker %d: skipped an undecodable record at %s-%d offset %d: %s",
                        self._broker.node_id, OFFSETS_TOPIC, index, offset, reason)

        def replay(batch, into: dict) -> None:
            for offset, key_bytes, value in batch:
                try:
                    if not CGR.replay(key_bytes, value, consumer_groups) \
                            and not SGR.replay(key_bytes, value, share_groups):
                        self._replay(R.decode_key(key_bytes), value, offset, into, records, removed)
                except R.DECODE_ERRORS as exc:
                    skip(offset, f"{type(exc).__name__}: {exc}")

        # Transactional offset commits count once their COMMIT marker follows; those still
        # open at the log end stay pending (TxnOffsetCommit).
        open_txns: dict[int, list] = {}
        for header, batch in R.read_batches(partition.log, on_undecodable=skip):
            if header.is_control:
                committed = open_txns.pop(header.producer_id, [])
                if batch and R.control_type(batch[0][1]) == 1:
                    completed: dict = {}
                    replay(committed, completed)
                    for group_id, group_offsets in completed.items():
                        complete_txn_offsets(offsets.setdefault(group_id, {}), group_offsets)
            elif header.is_transactional:
                open_txns.setdefault(header.producer_id, []).extend(batch)
            else:
                replay(batch, offsets)
        pending: dict[int, dict] = {pid: {} for pid in open_txns}
        for pid, batch in open_txns.items():
            replay(batch, pending[pid])
        loaded = []
        for group_id in sorted(set(records) | {g for g, o in offsets.items() if o} | set(consumer_groups)
                               | {g for by_group in pending.values() for g in by_group}
                               | {g for g, r in share_groups.items() if r}):
            group = self._consumer_group(group_id, consumer_groups.get(group_id), now_ms) \
                or self._share_group(group_id, share_groups.get(group_id), now_ms) \
                or _group_from_record(group_id, records.get(group_id), now_ms)
            group.offsets = offsets.get(group_id, {})
            group.pending_txn_offsets = {pid: by_group[group_id] for pid, by_group in pending.items()
                                         if by_group.get(group_id)}
            self.groups[group_id] = group
            loaded.append(group)
        self._shards[index] = partition
        log.log(logging.INFO if loaded else logging.DEBUG, "Broker %d: coordinator for %s-%d, loaded %d groups",
                self._broker.node_id, OFFSETS_TOPIC, index, len(loaded))
        return loaded

    def _consumer_group(self, group_id: str, records: dict[bytes, bytes] | None, now_ms: int) -> ConsumerGroup | None:
        if not records:
            return None
        by_id = self._broker.image.topics_by_id

        def topic_name(topic_id):
            state = by_id.get(topic_id)
            return state.name if state is not None else None
        try:
            return CGR.group_from_records(group_id, records, topic_name, now_ms)
        except R.DECODE_ERRORS as exc:
            self.undecodable_records += 1
            log.warning("Broker %d: consumer group %s has undecodable records: %s", self._broker.node_id,
                        group_id, exc)
            return None

    def _share_group(self, group_id: str, records: dict[bytes, bytes] | None, now_ms: int) -> ShareGroup | None:
        if not records:
            return None
        by_id = self._broker.image.topics_by_id

        def topic_name(topic_id):
            state = by_id.get(topic_id)
            return state.name if state is not None else None
        try:
            return SGR.group_from_records(group_id, records, topic_name, now_ms)
        except R.DECODE_ERRORS as exc:
            self.undecodable_records += 1
            log.warning("Broker %d: share group %s has undecodable records: %s", self._broker.node_id, group_id, exc)
            return None

    @staticmethod
    def _replay(key, value: bytes | None, offset: int, offsets: dict, records: dict, removed: set) -> None:
        if isinstance(key, R.OffsetKey):
            group_offsets = offsets.setdefault(key.group, {})
            if value is None:
                group_offsets.pop((key.topic, key.partition), None)
            else:
                committed = R.decode_offset_value(value)
                committed.record_offset = offset
                group_offsets[(key.topic, key.partition)] = committed
        elif isinstance(key, R.GroupKey):
            if value is None:
                records.pop(key.group, None)
                removed.add(key.group)
            else:
                records[key.group] = R.decode_group_value(value)
                removed.discard(key.group)

    # --- groups -----------------------------------------------------------------------------
    def get(self, group_id: str) -> GroupMetadata | None:
        return self.groups.get(group_id)

    def add(self, group: GroupMetadata) -> GroupMetadata:
        return self.groups.setdefault(group.group_id, group)

    def replace(self, group: GroupMetadata) -> GroupMetadata:
        """Put `group` in place of the group with its id (a group changing its type)."""
        self.groups[group.group_id] = group
        return group

    def remove(self, group_id: str) -> None:
        self.groups.pop(group_id, None)

    def groups_in(self, partitions: Iterable[int] | None = None) -> list[GroupMetadata]:
        wanted = set(self._shards if partitions is None else partitions)
        return [g for g in self.groups.values() if self.partition_for(g.group_id) in wanted]

    # --- writes (each raises ApiError; state changes only once the write is replicated) ----
    async def store_group(self, group: GroupMetadata, now_ms: int) -> None:
        """Write the group's metadata and every member's assignment; a group that is gone (it
        changed its type, or this broker no longer coordinates it) writes nothing more."""
        if group.is_(GroupState.DEAD):
            raise ApiError(Errors.CoordinatorNotAvailableError, f"Group {group.group_id} is no longer here.")
        record = R.GroupRecord(
            protocol_type=group.protocol_type or "", generation=group.generation_id, protocol=group.protocol_name,
            leader=group.leader_id, current_state_timestamp=group.state_timestamp,
            members=[R.MemberRecord(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                    m.rebalance_timeout_ms, m.session_timeout_ms,
                                    m.metadata(group.protocol_name or ""), m.assignment)
                     for m in group.members.values()])
        await self._write(group.group_id, [(R.group_key(group.group_id), R.group_value(record))], now_ms,
                          too_large=Errors.UnknownError)

    async def store_consumer_group(self, group: ConsumerGroup, now_ms: int) -> None:
        """Append the records of what changed in a consumer-protocol group since its last write
        (consumer_group_records.py). The written state is noted first, so writes that follow
        append only their own changes; a failed write forgets it, so the next one writes all."""
        if group.is_(GroupState.DEAD):
            return   # it changed its type (an online downgrade) or is no longer coordinated here
        image = self._broker.image

        def topic_id(name: str):
            state = image.topics.get(name)
            return state.topic_id if state is not None else None
        records = CGR.records_of(group, topic_id)
        changes = CGR.diff(group.written, records)
        if not changes:
            return
        before, group.written = group.written, records
        try:
            await self._write_in_batches(group.group_id, changes, now_ms)
        except ApiError:
            group.written = {key: b"" for key in set(before) | set(records)}   # matches nothing: all rewritten
            group.written_ok = False
            raise
        group.written_ok = True

    async def store_share_group(self, group: ShareGroup, now_ms: int) -> None:
        """Append the records of what changed in a share group since its last write
        (share_group_records.py), as store_consumer_group does for consumer groups."""
        image = self._broker.image

        def topic_id(name: str):
            state = image.topics.get(name)
            return state.topic_id if state is not None else None
        records = SGR.records_of(group, topic_id)
        changes = SGR.diff(group.written, records)
        if not changes:
            return
        before, group.written = group.written, records
        try:
            await self._write_in_batches(group.group_id, changes, now_ms)
        except ApiError:
            group.written = {key: b"" for key in set(before) | set(records)}
            group.written_ok = False
            raise
        group.written_ok = True

    async def forget_consumer_group(self, group: ConsumerGroup, now_ms: int) -> None:
        """Tombstones for a consumer-protocol group's records (it became a classic group)."""
        await self._write_in_batches(group.group_id, [(key, None) for key in group.written], now_ms)

    async def store_offsets(self, group: GroupMetadata, offsets: dict[TopicPartition, OffsetAndMetadata],
                            now_ms: int) -> None:
        if not offsets:
            return
        written_at = await self._write(group.group_id, self._offset_records(group.group_id, offsets), now_ms,
                                       too_large=Errors.InvalidCommitOffsetSizeError)
        group.offsets.update(_written_at(offsets, written_at))

    @staticmethod
    async def _offset_records(group_id: str, offsets: dict[TopicPartition, OffsetAndMetadata]
                              ) -> list[tuple[bytes, bytes]]:
        """The (key, value) records of a commit, in slices of the event loop."""
        return await slices.map_sliced(offsets.items(), lambda item: (R.offset_key(group_id, *item[0]),
                                                                      R.offset_value(item[1])))

    def shard_of(self, group_id: str):
        """The loaded `__consumer_offsets` Partition that holds the group, None if not loaded."""
        return self._shards.get(self.partition_for(group_id))

    async def store_txn_offsets(self, group: GroupMetadata, producer_id: int, producer_epoch: int,
                                offsets: dict[TopicPartition, OffsetAndMetadata], now_ms: int) -> None:
        """TxnOffsetCommit: the offsets as a transactional batch of the producer; pending until
        its transaction's marker reaches this partition (GroupCoordinator.on_txn_marker)."""
        if not offsets:
            return
        partition = self.shard_of(group.group_id)
        entry = partition.log.producer_state.producers.get(producer_id) if partition is not None else None
        sequence = entry.last_seq + 1 if entry is not None and entry.epoch == producer_epoch else 0
        records = self._offset_records(group.group_id, offsets)
        written_at = await self._write(group.group_id, records, now_ms, too_large=Errors.InvalidCommitOffsetSizeError,
                                       producer=(producer_id, producer_epoch, sequence))
        group.pending_txn_offsets.setdefault(producer_id, {}).update(_written_at(offsets, written_at))

    async def delete_offsets(self, group: GroupMetadata, partitions: Iterable[TopicPartition], now_ms: int) -> None:
        """Tombstones for these offsets (in as many batches as they need), then they are gone."""
        doomed = [tp for tp in partitions if tp in group.offsets]
        if doomed:
            await self._write_in_batches(group.group_id, [(R.offset_key(group.group_id, t, p), None)
                                                          for t, p in doomed], now_ms)
            for tp in doomed:
                group.offsets.pop(tp, None)

    async def delete_group(self, group: GroupMetadata, now_ms: int) -> None:
        """The group goes Dead and away, with tombstones for it and all its offsets (in as many
        batches as they need). If they cannot be written, the group is back as it was, so
        memory never says a group is gone that a restart would bring back."""
        before = group.state, group.state_timestamp
        group.transition_to(GroupState.DEAD, now_ms)
        self.remove(group.group_id)
        records = [(R.offset_key(group.group_id, t, p), None) for t, p in group.offsets]
        records.append((R.group_key(group.group_id), None))
        if isinstance(group, (ConsumerGroup, ShareGroup)):
            records += [(key, None) for key in group.written]
        try:
            await self._write_in_batches(group.group_id, records, now_ms)
        except ApiError:
            if group.group_id not in self.groups:   # no new group of that id meanwhile
                group.state, group.state_timestamp = before
                self.groups[group.group_id] = group
            raise
        group.offsets.clear()

    def check_member_fits(self, group_id: str, member_bytes: int) -> None:
        """Refuse, before it changes the group, a member whose record (at most `member_bytes`)
        could never be written: a batch of it alone would exceed the partition's
        max.message.bytes. Kafka refuses such a heartbeat before replaying it, with
        UNKNOWN_SERVER_ERROR; a member admitted anyway would fail every later write of its group."""
        partition = self.shard_of(group_id)
        if partition is None:
            return   # the write would answer NOT_COORDINATOR
        limit = partition.log.config.max_message_bytes
        if R.BATCH_OVERHEAD + member_bytes > limit:
            raise ApiError(Errors.UnknownError, f"The member's record of up to {member_bytes} bytes exceeds "
                           f"max.message.bytes={limit} of {OFFSETS_TOPIC}.")

    async def _write_in_batches(self, group_id: str, records: Records, now_ms: int) -> None:
        """A group's state records or tombstones in as many batches as they need, appended
        together: every record holds the whole state of its key, so a big group (a full rewrite
        after a failed write, a delete of thousands of offsets) is never too large to write.
        Offset commits stay one batch."""
        await self._write(group_id, records, now_ms, too_large=Errors.UnknownError, split=True)

    async def _write(self, group_id: str, records: Records | Awaitable[Records], now_ms: int, *,
                     too_large: type[Errors.BrokerResponseError], producer: tuple[int, int, int] = (-1, -1, -1),
                     split: bool = False) -> int:
        """Append `records` as one batch (`split`: as many as max.message.bytes needs, one after
        the other with nothing between) and wait until replicated; the first one's base offset.
        `records` may be a coroutine that builds them in slices: it runs in the group's turn."""
        partition = self._shards.get(self.partition_for(group_id))
        if partition is None or not partition.is_leader:
            if inspect.iscoroutine(records):
                records.close()
            raise ApiError(Errors.NotCoordinatorError)
        limit = partition.log.config.max_message_bytes
        try:
            async with self._in_turn(group_id):
                if inspect.isawaitable(records):
                    records = await records
                batches = [await R.build_batch_in_slices(run, now_ms, max_bytes=limit, producer_id=producer[0],
                                                         producer_epoch=producer[1], base_sequence=producer[2])
                           for run in (R.batches_within(records, limit) if split else [records])]
                if self._shards.get(self.partition_for(group_id)) is not partition or not partition.is_leader:
                    raise ApiError(Errors.NotCoordinatorError)     # moved while the batches were built
                infos = [partition.append(batch, now_ms) for batch in batches]
        except RecordTooLargeError as exc:
            raise ApiError(too_large, str(exc)) from None
        except (InvalidProducerEpochError, OutOfOrderSequenceError) as exc:
            raise ApiError(Errors.ProducerFencedError, str(exc)) from None
        except StorageError as exc:
            log.error("Broker %d: cannot write group %s to %s: %s", self._broker.node_id, group_id,
                      OFFSETS_TOPIC, exc)
            raise ApiError(Errors.NotCoordinatorError, str(exc)) from None
        timeout = self._broker.config.get("offsets.commit.timeout.ms") / 1000
        try:
            replicated = await asyncio.wait_for(partition.wait_for_high_watermark(infos[-1].last_offset + 1), timeout)
        except asyncio.TimeoutError:
            raise ApiError(Errors.CoordinatorNotAvailableError, "the write was not replicated in time") from None
        if not replicated:  # leadership moved while waiting
            raise ApiError(Errors.NotCoordinatorError)
        return infos[0].first_offset

    @contextlib.asynccontextmanager
    async def _in_turn(self, group_id: str):
        """A group's writes reach the log in the order they were asked for: a big batch is
        built in slices of the loop, and a later, smaller write of the same group must not be
        appended in the meantime, or the log (what a restart loads) would end with the older
        state. The lock is FIFO and costs no wait when the group has no other write."""
        turn = self._append_turns.setdefault(group_id, [asyncio.Lock(), 0])
        turn[1] += 1
        try:
            async with turn[0]:
                yield
        finally:
            turn[1] -= 1
            if not turn[1]:
                del self._append_turns[group_id]

    # --- expiry -----------------------------------------------------------------------------
    async def expire_offsets(self, now_ms: int, retention_ms: int) -> int:
        """Drop offsets past `offsets.retention.minutes` (KIP-211, KIP-496); return how many.

        An Empty group's offsets expire `retention` after the later of their commit and the
        moment the group became empty; a standalone group's (no protocol type) after their
        commit; a consumer group with members expires only offsets of topics no member
        subscribes to. Expired groups with nothing left become Dead and are deleted.
        """
        expired_total = 0
        for group in list(self.groups_in()):
            if isinstance(group, ShareGroup):   # no committed offsets; deleted only by DeleteGroups
                continue
            expired = [tp for tp, o in group.offsets.items() if _expired(group, tp, o, now_ms, retention_ms)]
            try:
                if expired:
                    await self.delete_offsets(group, expired, now_ms)
                    expired_total += len(expired)
                if group.is_(GroupState.EMPTY) and not group.offsets and not group.members \
                        and self.groups.get(group.group_id) is group:
                    await self.delete_group(group, now_ms)
            except ApiError as exc:
                log.warning("Offset expiry for group %s failed: %s", group.group_id, exc)
        return expired_total


def complete_txn_offsets(committed: dict[TopicPartition, OffsetAndMetadata],
                         pending: dict[TopicPartition, OffsetAndMetadata]) -> None:
    """A committed transaction's offsets join `committed`, each only where no offset written
    after it in the log was committed meanwhile (Kafka's replayEndTransactionMarker): a
    transaction never takes back a later commit of the group's own consumer, and the answer
    is the one compaction, which keeps the last record of each key, leaves after a reload."""
    for tp, offset in pending.items():
        current = committed.get(tp)
        if current is None or offset.record_offset > current.record_offset:
            committed[tp] = offset


def _written_at(offsets: dict[TopicPartition, OffsetAndMetadata], record_offset: int
                ) -> dict[TopicPartition, OffsetAndMetadata]:
    return {tp: dataclasses.replace(o, record_offset=record_offset) for tp, o in offsets.items()}


def _expired(group: GroupMetadata, tp: TopicPartition, offset: OffsetAndMetadata, now_ms: int,
             retention_ms: int) -> bool:
    if offset.expire_timestamp >= 0:
        return offset.expire_timestamp <= now_ms
    if group.is_(GroupState.EMPTY):
        base = offset.commit_timestamp if group.protocol_type is None else max(offset.commit_timestamp,
                                                                                 group.state_timestamp)
        return base + retention_ms <= now_ms
    if group.is_(GroupState.STABLE):
        subscribed = group.subscribed_topics()
        return subscribed is not None and tp[0] not in subscribed and offset.commit_timestamp + retention_ms <= now_ms
    return False


def _group_from_record(group_id: str, record: R.GroupRecord | None, now_ms: int) -> GroupMetadata:
    group = GroupMetadata(group_id, now_ms)
    if record is None:
        return group
    group.generation_id = record.generation
    group.protocol_type = record.protocol_type or None
    group.protocol_name = record.protocol
    group.state_timestamp = record.current_state_timestamp if record.current_state_timestamp >= 0 else now_ms
    for m in record.members:
        group.add(MemberMetadata(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                 m.rebalance_timeout_ms, m.session_timeout_ms, record.protocol_type,
                                 [(record.protocol or "", m.subscription)], assignment=m.assignment))
    group.leader_id = record.leader if record.leader in group.members else next(iter(group.members), None)
    if group.members:
        group.state = GroupState.STABLE
    return group
