"""The group coordinator's share-group side (KIP-932): what ShareGroupHeartbeat,
ShareGroupDescribe, the share offsets APIs and DeleteGroups call for share groups.

- Heartbeats run the membership protocol (share_protocol.py); the group's records are
  written to `__consumer_offsets` before the answer.
- Partitions newly assigned to the group are initialized at the share coordinator
  (InitializeShareGroupState with start offset -1: the partition's leader decides it from
  `share.auto.offset.reset` at first use) and recorded as the group's (key 15), in the
  background.
- DescribeShareGroupOffsets reads each share partition's state (an admin read of
  ReadShareGroupState that fences nothing) and the partition's high watermark (ListOffsets
  to its leader) for the lag of KIP-1226: high watermark - start offset - the records after
  the start offset already acknowledged or archived.
- AlterShareGroupOffsets (an empty group) re-initializes each share partition with the new
  start offset and the next state epoch, so a leader still holding the old state is fenced.
- DeleteShareGroupOffsets (an empty group) and DeleteGroups delete the share partitions' state.
"""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import kafka.errors as Errors
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse

from engine.clock import now_ms
from engine.coordinator.group import GroupState
from engine.coordinator.group_configs import group_config
from engine.coordinator.share_group import ShareGroup
from engine.coordinator.record_types import fields_bytes_at_most
from engine.coordinator.share_protocol import ShareGroupProtocol, ShareHeartbeatRequest, ShareHeartbeatResult
from engine.coordinator.transactions.channel import PeerChannel
from engine.errors import ApiError

log = logging.getLogger(__name__)
TopicPartition = tuple[str, int]
LATEST_TIMESTAMP = -1


@dataclass
class ShareOffset:
    start_offset: int = -1
    leader_epoch: int = -1
    lag: int = -1
    error: int = 0
    message: str | None = None


class ShareGroups:
    def __init__(self, broker, store, check_group) -> None:
        self._broker = broker
        self.store = store
        self._check_group = check_group           # GroupCoordinator._check_group: NOT_COORDINATOR etc.
        self.protocol = ShareGroupProtocol(
            store, lambda group_id, name: group_config(broker.image, broker.config, group_id, name),
            lambda name: broker.config.get(name), lambda: broker.image, on_change=self._persist_later)
        self._channel = PeerChannel(broker)
        self._tasks: set[asyncio.Task] = set()
        self._initializing: set[tuple[str, str, int]] = set()

    def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._channel.close()

    # --- membership ---------------------------------------------------------------------------
    async def heartbeat(self, request: ShareHeartbeatRequest) -> ShareHeartbeatResult:
        self._check_group(request.group_id)
        group = self.store.get(request.group_id)
        current = group.members.get(request.member_id) if isinstance(group, ShareGroup) else None
        self.store.check_member_fits(request.group_id, fields_bytes_at_most(
            request.record_fields(current.subscribed_topics if current is not None else None)))
        result = self.protocol.heartbeat(request)
        group = self.store.get(request.group_id)
        if isinstance(group, ShareGroup):
            if result.changed or not group.written_ok:
                await self.store.store_share_group(group, now_ms())
            self._initialize_new_partitions(group)
        return result

    def describe(self, group_id: str) -> ShareGroup:
        self._check_group(group_id, allow_empty=True)
        if not group_id:
            raise ApiError(Errors.InvalidGroupIdError)
        group = self.store.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {group_id} not found.")
        if not isinstance(group, ShareGroup):
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {group_id} is not a share group.")
        return group

    def _persist_later(self, group: ShareGroup) -> None:
        self._spawn(self.store.store_share_group(group, now_ms()))

    def _spawn(self, work) -> None:
        async def logged():
            try:
                await work
            except ApiError as exc:      # the next heartbeat's write carries these changes again
                log.warning("Broker %d: a share group write failed: %s", self._broker.node_id, exc)
        task = asyncio.get_running_loop().create_task(logged())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- share partitions' initialization -----------------------------------------------------
    def _initialize_new_partitions(self, group: ShareGroup) -> None:
        assigned = {tp for partitions in group.target.values() for tp in partitions}
        fresh = sorted(assigned - group.initialized_partitions())
        fresh = [tp for tp in fresh if (group.group_id, *tp) not in self._initializing]
        if not fresh:
            return
        self._initializing.update((group.group_id, *tp) for tp in fresh)
        self._spawn(self._initialize(group, fresh))

    async def _initialize(self, group: ShareGroup, partitions: list[TopicPartition]) -> None:
        persister = self._broker.share_persister
        done: list[TopicPartition] = []
        try:
            for topic, index in partitions:
                state = self._broker.image.topics.get(topic)
                if state is None:
                    continue
                try:
                    await persister.initialize(group.group_id, state.topic_id, index, state_epoch=0, start_offset=-1)
                except ApiError as exc:
                    if exc.code != Errors.FencedStateEpochError.errno:   # fenced: it has state already
                        log.warning("Share group %s: initializing %s-%d failed: %s", group.group_id, topic, index, exc)
                        continue
                done.append((topic, index))
            if done and self.store.get(group.group_id) is group:
                self._mark_initialized(group, done)
                await self.store.store_share_group(group, now_ms())
        finally:
            self._initializing.difference_update((group.group_id, *tp) for tp in partitions)

    def _mark_initialized(self, group: ShareGroup, partitions: list[TopicPartition]) -> None:
        for topic, index in partitions:
            state = self._broker.image.topics.get(topic)
            if state is None:
                continue
            _, known = group.initialized.get(topic, (state.topic_id, frozenset()))
            group.initialized[topic] = (state.topic_id, known | {index})

    # --- offsets ------------------------------------------------------------------------------
    async def describe_offsets(self, group_id: str, topics: list[tuple[str, list[int]]] | None
                               ) -> dict[TopicPartition, ShareOffset]:
        """Start offset, leader epoch and lag of the share partitions asked for (None: all the
        group has state for); raises ApiError for the group."""
        self._check_group(group_id, allow_empty=True)
        group = self.store.get(group_id)
        if not isinstance(group, ShareGroup) or group.is_(GroupState.DEAD):
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {group_id} not found.")
        wanted = sorted(group.initialized_partitions()) if topics is None else \
            [(topic, p) for topic, partitions in topics for p in partitions]
        answers = await asyncio.gather(*(self._offset_of(group, topic, p) for topic, p in wanted))
        return dict(zip(wanted, answers))

    async def _offset_of(self, group: ShareGroup, topic: str, index: int) -> ShareOffset:
        state = self._broker.image.topics.get(topic)
        if state is None or index not in state.partitions:
            return ShareOffset(error=Errors.UnknownTopicOrPartitionError.errno)
        if (topic, index) not in group.initialized_partitions():
            return ShareOffset()
        try:
            share_state = await self._broker.share_persister.read(group.group_id, state.topic_id, index, -1)
            if share_state.start_offset < 0:
                return ShareOffset(leader_epoch=state.partitions[index].leader_epoch)
            high_watermark = await self._high_watermark(topic, index, state.partitions[index].leader)
        except ApiError as exc:
            return ShareOffset(error=exc.code, message=exc.message)
        lag = max(high_watermark - share_state.start_offset - share_state.delivery_complete_count(), 0)
        return ShareOffset(share_state.start_offset, state.partitions[index].leader_epoch, lag)

    async def _high_watermark(self, topic: str, index: int, leader: int) -> int:
        partition = self._broker.partitions.get((topic, index))
        if partition is not None and partition.is_leader:
            return partition.high_watermark
        R = ListOffsetsRequest
        request = R(replica_id=-1, isolation_level=0, timeout_ms=5000, topics=[R.ListOffsetsTopic(
            name=topic, partitions=[R.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=index, current_leader_epoch=-1, timestamp=LATEST_TIMESTAMP)])])
        response = await self._channel.request(leader, request, 7, ListOffsetsResponse, timeout_s=5.0)
        found = response.topics[0].partitions[0]
        if found.error_code:
            raise ApiError(Errors.for_code(found.error_code))
        return found.offset

    async def alter_offsets(self, group_id: str, offsets: dict[TopicPartition, int]) -> dict[TopicPartition, tuple]:
        """AlterShareGroupOffsets: (error code, message) per partition; raises ApiError for the group."""
        group = self._empty_group(group_id)
        persister = self._broker.share_persister
        results: dict[TopicPartition, tuple] = {}
        done = []
        for (topic, index), offset in offsets.items():
            state = self._broker.image.topics.get(topic)
            if state is None or index not in state.partitions:
                results[(topic, index)] = (Errors.UnknownTopicOrPartitionError.errno, None)
                continue
            if offset < 0:
                results[(topic, index)] = (Errors.InvalidRequestError.errno, f"Invalid start offset {offset}.")
                continue
            try:
                current = await persister.read(group_id, state.topic_id, index, -1)
                await persister.initialize(group_id, state.topic_id, index, state_epoch=current.state_epoch + 1,
                                           start_offset=offset)
            except ApiError as exc:
                results[(topic, index)] = (exc.code, exc.message)
                continue
            results[(topic, index)] = (0, None)
            done.append((topic, index))
        if done:
            self._mark_initialized(group, done)
            await self.store.store_share_group(group, now_ms())
        return results

    async def delete_offsets(self, group_id: str, topics: list[str]) -> dict[str, tuple]:
        """DeleteShareGroupOffsets: (error code, message, {partition: error}) per topic."""
        group = self._empty_group(group_id)
        results: dict[str, tuple] = {}
        for topic in topics:
            if topic not in group.initialized:
                results[topic] = (Errors.UnknownTopicOrPartitionError.errno,
                                  f"Group {group_id} has no share offsets on topic {topic}.", {})
                continue
            errors = await self._delete_topic_state(group, topic)
            results[topic] = (0, None, errors)
        await self.store.store_share_group(group, now_ms())
        return results

    async def delete_state(self, group: ShareGroup) -> None:
        """DeleteGroups: every share partition's state goes first; raises ApiError if one cannot."""
        for topic in sorted(group.initialized):
            errors = await self._delete_topic_state(group, topic)
            failed = [code for code in errors.values() if code]
            if failed:
                raise ApiError(Errors.for_code(failed[0]))

    async def _delete_topic_state(self, group: ShareGroup, topic: str) -> dict[int, int]:
        topic_id, partitions = group.initialized[topic]
        errors: dict[int, int] = {}
        for index in sorted(partitions):
            try:
                await self._broker.share_persister.delete(group.group_id, topic_id, index)
                errors[index] = 0
            except ApiError as exc:
                errors[index] = exc.code
        left = frozenset(p for p, code in errors.items() if code)
        if left:
            group.initialized[topic] = (topic_id, left)
        else:
            del group.initialized[topic]
        return errors

    def _empty_group(self, group_id: str) -> ShareGroup:
        self._check_group(group_id)
        group = self.store.get(group_id)
        if not isinstance(group, ShareGroup) or group.is_(GroupState.DEAD):
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {group_id} not found.")
        if group.members:
            raise ApiError(Errors.NonEmptyGroupError, f"The group {group_id} is not empty: it has "
                           f"{len(group.members)} member(s).")
        return group
