"""The share coordinator of one broker (Kafka's ShareCoordinatorService and
ShareCoordinatorShard): it keeps share partitions' state durable in `__share_group_state`.

A share partition's key is "group:topicId:partition" (Kafka's SharePartitionKey, the topic id
in Kafka's base64 form); it belongs to partition `abs(hashCode(key)) % partitions` of
`__share_group_state`, whose leader is its coordinator. FindCoordinator key type 2 answers it.
When the broker becomes leader of such a partition it replays the log (ShareSnapshot records
replace a key's state, ShareUpdate records are combined onto it, tombstones delete it); when
it stops leading one it drops its keys.

Writes (WriteShareGroupState) append one record: a ShareSnapshot for a key's first write and
after `share.coordinator.snapshot.update.records.per.snapshot` (500) updates, else a
ShareUpdate; the in-memory state changes as the record is appended (the log order is the
order of the changes), and the answer waits until the record is replicated, as acks=all
does. Fencing as Kafka's: a write or read with a leader epoch older than the key's is
FENCED_LEADER_EPOCH, a write with an older state epoch FENCED_STATE_EPOCH. Initialize writes a
snapshot with a new state epoch (a reset start offset); an initialize with a state epoch not
above the key's answers FENCED_STATE_EPOCH, which the group coordinator reads as "already
initialized".

`__share_group_state` is created on first use (`share.coordinator.state.topic.*`: 50
partitions, replication capped at the live brokers, cleanup.policy=delete, retention.ms=-1).
It is pruned, every `share.coordinator.state.topic.prune.interval.ms`, below the oldest
record still needed: the latest snapshot of each key. Not thread-safe: the event loop owns it.
"""
from __future__ import annotations

import asyncio
import base64
import logging
import uuid
from dataclasses import dataclass, field

import kafka.errors as Errors

from engine.clock import now_ms
from engine.cluster import internal_topics
from engine.coordinator import offsets_records as R
from engine.coordinator.group_store import partition_for
from engine.errors import ApiError
from engine.share import state_records as SR
from engine.share.state import ShareState, StateBatch, combine
from engine.storage.errors import StorageError

log = logging.getLogger(__name__)
SHARE_STATE_TOPIC = internal_topics.SHARE_STATE_TOPIC
Key = SR.Key


def kafka_uuid(topic_id: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def coordinator_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    """Kafka's SharePartitionKey.asCoordinatorKey."""
    return f"{group_id}:{kafka_uuid(topic_id)}:{partition}"


@dataclass
class _Entry:
    state: ShareState
    snapshot_epoch: int = 0
    updates: int = 0                  # ShareUpdate records since the last snapshot
    snapshot_offset: int = 0          # log offset of the latest snapshot: pruning keeps it


@dataclass
class _Shard:
    partition: object
    keys: dict[Key, _Entry] = field(default_factory=dict)


class ShareCoordinator:
    def __init__(self, broker) -> None:
        self._broker = broker
        self._shards: dict[int, _Shard] = {}
        self.undecodable_records = 0
        self._prune_task: asyncio.Task | None = None

    def config(self, name: str):
        return self._broker.config.get(name)

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self._prune_task = asyncio.get_running_loop().create_task(self._prune_periodically())

    def shutdown(self) -> None:
        if self._prune_task is not None:
            self._prune_task.cancel()
            self._prune_task = None
        self._shards.clear()

    def on_partitions_changed(self) -> None:
        led = {index: p for (topic, index), p in self._broker.partitions.items()
               if topic == SHARE_STATE_TOPIC and p.is_leader}
        for index in [i for i, shard in self._shards.items() if led.get(i) is not shard.partition]:
            del self._shards[index]
            log.info("Broker %d: no longer share coordinator for %s-%d", self._broker.node_id,
                     SHARE_STATE_TOPIC, index)
        for index, partition in sorted(led.items()):
            if index not in self._shards:
                self._shards[index] = self._load(index, partition)

    def _load(self, index: int, partition) -> _Shard:
        shard = _Shard(partition)

        def skip(offset: int, reason: str) -> None:
            self.undecodable_records += 1
            log.warning("Broker %d: skipped an undecodable record at %s-%d offset %d: %s",
                        self._broker.node_id, SHARE_STATE_TOPIC, index, offset, reason)

        for offset, key_bytes, value in R.read_log(partition.log, on_undecodable=skip):
            try:
                record = SR.decode(key_bytes, value)
            except R.DECODE_ERRORS as exc:
                skip(offset, f"{type(exc).__name__}: {exc}")
                continue
            if record is not None:
                _replay(shard, record, offset)
        log.log(logging.INFO if shard.keys else logging.DEBUG, "Broker %d: share coordinator for %s-%d, "
                "loaded %d share partitions", self._broker.node_id, SHARE_STATE_TOPIC, index, len(shard.keys))
        return shard

    # --- ownership ----------------------------------------------------------------------------
    def num_partitions(self) -> int:
        topic = self._broker.image.topics.get(SHARE_STATE_TOPIC)
        return len(topic.partitions) if topic else self.config("share.coordinator.state.topic.num.partitions")

    def partition_of(self, key: Key) -> int:
        return partition_for(coordinator_key(*key), self.num_partitions())

    def ensure_topic(self) -> bool:
        """Create `__share_group_state` on first use, as Kafka does; True once it exists."""
        if SHARE_STATE_TOPIC in self._broker.image.topics:
            return True
        controller = self._broker.controller
        replication = max(min(self.config("share.coordinator.state.topic.replication.factor"),
                              len(controller.live_brokers())), 1)
        configs = {"cleanup.policy": "delete", "retention.ms": -1, "compression.type": "producer",
                   "segment.bytes": self.config("share.coordinator.state.topic.segment.bytes"),
                   "min.insync.replicas": min(self.config("share.coordinator.state.topic.min.isr"), replication)}
        try:
            controller.create_topic(SHARE_STATE_TOPIC, self.config("share.coordinator.state.topic.num.partitions"),
                                    replication, configs=configs)
        except ApiError as exc:
            if exc.code != Errors.TopicAlreadyExistsError.errno:
                log.error("Cannot create %s: %s", SHARE_STATE_TOPIC, exc)
                return False
        return SHARE_STATE_TOPIC in self._broker.image.topics

    def coordinator_for(self, coordinator_key_text: str) -> int | None:
        """The node id of a key's share coordinator (FindCoordinator key type 2)."""
        state = self._broker.image.partition(SHARE_STATE_TOPIC,
                                             partition_for(coordinator_key_text, self.num_partitions()))
        if state is None or state.leader not in self._broker.image.brokers:
            return None
        return state.leader

    def _shard(self, key: Key) -> _Shard:
        if not self._broker.running:
            raise ApiError(Errors.CoordinatorNotAvailableError)
        index = self.partition_of(key)
        shard = self._shards.get(index)
        if shard is None or not shard.partition.is_leader:
            state = self._broker.image.partition(SHARE_STATE_TOPIC, index)
            if state is not None and state.leader == self._broker.node_id:
                raise ApiError(Errors.CoordinatorLoadInProgressError)
            raise ApiError(Errors.NotCoordinatorError)
        return shard

    def _check_topic(self, key: Key) -> None:
        topic = self._broker.image.topics_by_id.get(key[1])
        if topic is None or key[2] not in topic.partitions:
            raise ApiError(Errors.UnknownTopicOrPartitionError)

    # --- the internal APIs --------------------------------------------------------------------
    def read(self, key: Key, leader_epoch: int) -> ShareState:
        """ReadShareGroupState: the key's state (start offset -1 if it has none). A leader
        epoch of -1 is an admin read: it neither fences nor records an epoch."""
        shard = self._shard(key)
        self._check_topic(key)
        entry = shard.keys.get(key)
        if entry is None:
            return ShareState()
        if leader_epoch >= 0:
            if entry.state.leader_epoch > leader_epoch:
                raise ApiError(Errors.FencedLeaderEpochError)
            entry.state.leader_epoch = leader_epoch
        return ShareState(entry.state.start_offset, entry.state.state_epoch, entry.state.leader_epoch,
                          list(entry.state.batches))

    async def write(self, key: Key, *, state_epoch: int, leader_epoch: int, start_offset: int,
                    batches: list[StateBatch]) -> None:
        """WriteShareGroupState; raises ApiError."""
        shard = self._shard(key)
        self._check_topic(key)
        entry = shard.keys.get(key)
        if entry is not None:
            if entry.state.leader_epoch > leader_epoch:
                raise ApiError(Errors.FencedLeaderEpochError)
            if entry.state.state_epoch > state_epoch:
                raise ApiError(Errors.FencedStateEpochError)
        per_snapshot = self.config("share.coordinator.snapshot.update.records.per.snapshot")
        if entry is None or entry.updates >= per_snapshot:
            start = start_offset if start_offset >= 0 or entry is None else entry.state.start_offset
            merged = combine(entry.state.batches if entry else [], batches, start)
            state = ShareState(start, state_epoch if state_epoch >= 0 else (entry.state.state_epoch if entry else 0),
                               leader_epoch if leader_epoch >= 0 else (entry.state.leader_epoch if entry else -1),
                               merged)
            epoch = entry.snapshot_epoch + 1 if entry is not None else 0
            record = (SR.snapshot_key(key), SR.snapshot_value(epoch, state))
            await self._append(shard, record, lambda offset: _set(shard, key, _Entry(state, epoch, 0, offset)))
        else:
            record = (SR.update_key(key), SR.update_value(entry.snapshot_epoch, leader_epoch, start_offset, batches))
            await self._append(shard, record, lambda offset: _update(entry, leader_epoch, start_offset, batches))

    async def initialize(self, key: Key, *, state_epoch: int, start_offset: int) -> None:
        """InitializeShareGroupState: a fresh snapshot with this state epoch and start offset
        (-1: to be decided by the share partition's leader)."""
        shard = self._shard(key)
        self._check_topic(key)
        entry = shard.keys.get(key)
        if entry is not None and entry.state.state_epoch >= state_epoch:
            raise ApiError(Errors.FencedStateEpochError)
        state = ShareState(start_offset, state_epoch, entry.state.leader_epoch if entry else -1, [])
        epoch = entry.snapshot_epoch + 1 if entry is not None else 0
        await self._append(shard, (SR.snapshot_key(key), SR.snapshot_value(epoch, state)),
                           lambda offset: _set(shard, key, _Entry(state, epoch, 0, offset)))

    async def delete(self, key: Key) -> None:
        """DeleteShareGroupState: tombstones for both record types of the key."""
        shard = self._shard(key)
        if key not in shard.keys:
            return
        await self._append_many(shard, [(SR.snapshot_key(key), None), (SR.update_key(key), None)],
                                lambda offset: shard.keys.pop(key, None))

    def summary(self, key: Key) -> ShareState:
        """ReadShareGroupStateSummary: the state without fencing (start offset, epochs, batches)."""
        return self.read(key, -1)

    def keys_of_group(self, group_id: str) -> list[Key]:
        return sorted((k for shard in self._shards.values() for k in shard.keys if k[0] == group_id),
                      key=lambda k: (str(k[1]), k[2]))

    # --- the log ------------------------------------------------------------------------------
    async def _append(self, shard: _Shard, record: tuple[bytes, bytes | None], apply) -> None:
        await self._append_many(shard, [record], apply)

    async def _append_many(self, shard: _Shard, records: list[tuple[bytes, bytes | None]], apply) -> None:
        partition = shard.partition
        if not partition.is_leader:
            raise ApiError(Errors.NotCoordinatorError)
        now = now_ms()
        try:
            info = partition.append(R.build_batch(records, now), now)
        except StorageError as exc:
            log.error("Broker %d: cannot write to %s: %s", self._broker.node_id, SHARE_STATE_TOPIC, exc)
            raise ApiError(Errors.KafkaStorageError, str(exc)) from None
        apply(info.first_offset)
        timeout = self.config("share.coordinator.write.timeout.ms") / 1000
        try:
            replicated = await asyncio.wait_for(partition.wait_for_high_watermark(info.last_offset + 1), timeout)
        except asyncio.TimeoutError:
            raise ApiError(Errors.CoordinatorNotAvailableError, "the write was not replicated in time") from None
        if not replicated:
            raise ApiError(Errors.NotCoordinatorError)

    async def _prune_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.config("share.coordinator.state.topic.prune.interval.ms") / 1000)
            try:
                self.prune()
            except Exception:  # noqa: BLE001 - keep the task alive; the next round retries
                log.exception("Broker %d: pruning %s failed", self._broker.node_id, SHARE_STATE_TOPIC)

    def prune(self) -> int:
        """Delete each led partition's records below the oldest latest-snapshot it still
        needs; returns how many partitions moved their log start offset."""
        moved = 0
        for shard in self._shards.values():
            partition = shard.partition
            needed = min((e.snapshot_offset for e in shard.keys.values()), default=partition.high_watermark)
            bound = min(needed, partition.high_watermark)
            if partition.is_leader and bound > partition.log_start_offset:
                partition.log.delete_records_before(bound)
                moved += 1
        return moved


def _set(shard: _Shard, key: Key, entry: _Entry) -> None:
    shard.keys[key] = entry


def _update(entry: _Entry, leader_epoch: int, start_offset: int, batches: list[StateBatch]) -> None:
    state = entry.state
    if start_offset >= 0:
        state.start_offset = start_offset
    if leader_epoch >= 0:
        state.leader_epoch = leader_epoch
    state.batches = combine(state.batches, batches, state.start_offset)
    entry.updates += 1


def _replay(shard: _Shard, record: SR.StateRecord, offset: int) -> None:
    if record.state is None:
        shard.keys.pop(record.key, None)
        return
    if record.kind == SR.SNAPSHOT:
        shard.keys[record.key] = _Entry(record.state, record.snapshot_epoch, 0, offset)
        return
    entry = shard.keys.get(record.key)
    if entry is None:          # an update without its snapshot (pruned or damaged): start from it
        state = record.state
        state.state_epoch = 0
        shard.keys[record.key] = _Entry(state, record.snapshot_epoch, 1, offset)
        return
    _update(entry, record.state.leader_epoch, record.state.start_offset, record.state.batches)
