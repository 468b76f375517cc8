"""The group coordinator of one broker: the object the group and offset APIs talk to.

It coordinates the groups whose `__consumer_offsets` partition this broker leads
(group_store.py), runs the membership protocol for them (membership.py) and answers
OffsetCommit/OffsetFetch/OffsetDelete, ListGroups/DescribeGroups/DeleteGroups. The Broker
creates it, starts and stops it, and tells it whenever its partitions change
(`on_partitions_changed`) and which topics were deleted (`on_topics_deleted`); it reaches nothing else of the broker than its config, image,
controller (to create `__consumer_offsets`) and partitions.

Requests for a group this broker does not coordinate get NOT_COORDINATOR, so the client
looks the coordinator up again (FindCoordinator); a group whose partition this broker leads
but has not loaded yet gets COORDINATOR_LOAD_IN_PROGRESS, so the client retries here. Group-level failures are raised as
ApiError; per-partition results are returned.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging

import kafka.errors as Errors

from engine.clock import now_ms
from engine.cluster import internal_topics, slices
from engine.coordinator import migration
from engine.coordinator.classic_members import ClassicMembers
from engine.coordinator.consumer_group import GROUP_TYPE_CONSUMER, ConsumerGroup
from engine.coordinator.consumer_protocol import ConsumerGroupProtocol, HeartbeatRequest, HeartbeatResult
from engine.coordinator.group import CONSUMER_PROTOCOL_TYPE, GroupMetadata, GroupState
from engine.coordinator.group_configs import group_config
from engine.coordinator.group_store import OFFSETS_TOPIC, GroupStore, complete_txn_offsets
from engine.coordinator.membership import GroupMembership
from engine.coordinator.offsets_records import OffsetAndMetadata
from engine.coordinator.record_types import fields_bytes_at_most
from engine.coordinator.share_group import GROUP_TYPE_SHARE, ShareGroup
from engine.coordinator.share_groups import ShareGroups
from engine.coordinator.transactions.verification import check_offsets_partition
from engine.errors import ApiError

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
S = GroupState
GROUP_TYPE_CLASSIC = "classic"


class GroupCoordinator:
    def __init__(self, broker) -> None:
        self._broker = broker
        self.store = GroupStore(broker)
        self.membership = GroupMembership(self.store, self.config)
        self.consumer_protocol = ConsumerGroupProtocol(
            self.store, self.config, lambda group_id, name: group_config(broker.image, broker.config, group_id, name),
            lambda: broker.image, on_change=self._persist_later, on_downgrade=self._downgrade)
        self.classic_members = ClassicMembers(self.consumer_protocol, self.config)   # in consumer groups
        self._writes: set[asyncio.Task] = set()   # consumer group writes that outlive a request
        self.share = ShareGroups(broker, self.store, self._check_group)   # share groups (KIP-932)
        self._expiry_task: asyncio.Task | None = None

    def config(self, name: str):
        return self._broker.config.get(name)

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self._expiry_task = asyncio.get_running_loop().create_task(self._expire_offsets_periodically())

    def shutdown(self) -> None:
        if self._expiry_task is not None:
            self._expiry_task.cancel()
            self._expiry_task = None
        self.membership.shutdown()
        self.share.shutdown()
        for task in list(self._writes):
            task.cancel()
        for group in self.store.unload_all():
            self._unloaded(group)

    def on_partitions_changed(self) -> None:
        """The broker gained or lost partitions: load or unload `__consumer_offsets` ones."""
        internal_topics.report_count_mismatch(OFFSETS_TOPIC, self._broker.image, self._broker.config)
        loaded, unloaded = self.store.sync(now_ms())
        for group in unloaded:
            self._unloaded(group)
        for group in loaded:  # members of a loaded Stable group carry on if they heartbeat in time
            if isinstance(group, ConsumerGroup):
                self.consumer_protocol.loaded(group)
                continue
            if isinstance(group, ShareGroup):
                self.share.protocol.loaded(group)
                continue
            for member in group.members.values():
                self.membership.schedule_heartbeat(group, member, member.session_timeout_ms)

    def _unloaded(self, group: GroupMetadata) -> None:
        if isinstance(group, ConsumerGroup):
            self.consumer_protocol.unloaded(group)
        elif isinstance(group, ShareGroup):
            self.share.protocol.unloaded(group)
        else:
            self.membership.unloaded(group)

    async def _expire_offsets_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.config("offsets.retention.check.interval.ms") / 1000)
            try:
                expired = await self.store.expire_offsets(now_ms(), self.config("offsets.retention.minutes") * 60_000)
                if expired:
                    log.info("Broker %d: expired %d committed offsets", self._broker.node_id, expired)
            except Exception:  # noqa: BLE001 - keep the task alive; the next round retries
                log.exception("Offset expiry failed")

    # --- coordinator lookup -------------------------------------------------------------------
    def ensure_offsets_topic(self) -> bool:
        """Create `__consumer_offsets` on first use, as Kafka does; True once it exists.

        Replication factor: min(offsets.topic.replication.factor, live brokers), so a
        single-broker engine still gets one (Kafka would refuse until enough brokers exist).
        """
        image = self._broker.image
        if OFFSETS_TOPIC in image.topics:
            return True
        replication = min(self.config("offsets.topic.replication.factor"), len(self._broker.controller.live_brokers()))
        configs = {"cleanup.policy": "compact", "segment.bytes": self.config("offsets.topic.segment.bytes"),
                   "compression.type": "producer"}
        try:
            self._broker.controller.create_topic(OFFSETS_TOPIC, self.config("offsets.topic.num.partitions"),
                                                 max(replication, 1), configs=configs)
        except ApiError as exc:
            if exc.code != Errors.TopicAlreadyExistsError.errno:
                log.error("Cannot create %s: %s", OFFSETS_TOPIC, exc)
                return False
        return OFFSETS_TOPIC in self._broker.image.topics

    def coordinator_for(self, group_id: str) -> int | None:
        """The node id of the group's coordinator, None if it has no leader right now."""
        state = self._broker.image.partition(OFFSETS_TOPIC, self.store.partition_for(group_id))
        if state is None or state.leader not in self._broker.image.brokers:
            return None
        return state.leader

    def _check_group(self, group_id: str | None, *, allow_empty: bool = False) -> None:
        if group_id is None or (group_id == "" and not allow_empty):
            raise ApiError(Errors.InvalidGroupIdError)
        if not self._broker.running:
            raise ApiError(Errors.CoordinatorNotAvailableError)
        if not self.store.owns(group_id):
            if self.coordinator_for(group_id) == self._broker.node_id:
                # Ours by the metadata, but its partition is not loaded yet: the client retries
                # here, rather than look for another coordinator (Kafka answers the same).
                raise ApiError(Errors.CoordinatorLoadInProgressError)
            raise ApiError(Errors.NotCoordinatorError)

    # --- membership ---------------------------------------------------------------------------
    async def join_group(self, **request):
        self._check_group(request["group_id"])
        timeout = request["session_timeout_ms"]
        if not self.config("group.min.session.timeout.ms") <= timeout <= self.config("group.max.session.timeout.ms"):
            raise ApiError(Errors.InvalidSessionTimeoutError)
        group = self.store.get(request["group_id"])
        if isinstance(group, ShareGroup) and not group.is_(S.DEAD):
            raise ApiError(Errors.InconsistentGroupProtocolError)
        if isinstance(group, ConsumerGroup) and not group.is_(S.DEAD):
            if group.members:  # a classic member of a consumer group (KIP-848's mixed groups)
                return await self._join_consumer_group(group, request)
            self._to_classic(group)
        return await self.membership.join(**request)

    async def _join_consumer_group(self, group: ConsumerGroup, request: dict):
        # The record holds the protocols and the topic names read from them: at most twice their bytes.
        self.store.check_member_fits(group.group_id, fields_bytes_at_most(
            [group.group_id, request["member_id"] or "-" * 36, request["group_instance_id"], request["client_id"],
             request["client_host"], *(field for name, metadata in request["protocols"]
                                       for field in (name, metadata, metadata))]))
        replaced = self._last_consumer_member_replaced(group, request)
        result = self.classic_members.join(group, **{k: v for k, v in request.items() if k != "group_id"})
        if result.error == 0 and replaced and self._downgrade_allowed(group):
            # The static instance that spoke the consumer protocol came back speaking the classic
            # one: a classic group at once, Stable, the new instance holding the old one's partitions.
            classic = self._downgrade(group, rebalance=False)
            await self.store.store_group(classic, now_ms())
            return dataclasses.replace(result, generation_id=classic.generation_id)
        if self.store.get(group.group_id) is group:
            await self.store.store_consumer_group(group, now_ms())
        return result

    @staticmethod
    def _last_consumer_member_replaced(group: ConsumerGroup, request: dict) -> bool:
        """A new classic instance takes the place of the last consumer-protocol member (static)."""
        instance_id = request["group_instance_id"]
        existing = group.static_member(instance_id) if instance_id is not None else None
        return (request["member_id"] == "" and existing is not None and not existing.uses_classic_protocol
                and group.all_classic_except(existing.member_id))

    def _downgrade_allowed(self, group: ConsumerGroup) -> bool:
        return (migration.downgrade_enabled(self.config("group.consumer.migration.policy"))
                and all(m.uses_classic_protocol for m in group.members.values())
                and len(group.members) <= self.config("group.max.size"))

    def _downgrade(self, group: ConsumerGroup, *, rebalance: bool = True) -> GroupMetadata:
        """Only classic members remain in a consumer group: it becomes a classic group of them
        (migration.py), which rebalances, so that a leader assigns with the members' assignors,
        unless a static instance only came back under the other protocol."""
        classic = migration.classic_group_from_consumer(group, now_ms())
        group.cancel_timers()
        group.state = S.DEAD
        self.store.replace(classic)
        self._spawn(self.store.forget_consumer_group(group, now_ms()))
        for member in classic.members.values():
            self.membership.schedule_heartbeat(classic, member, member.session_timeout_ms)
        if rebalance:
            self.membership.rebalance(classic, "downgraded from the consumer protocol")
        return classic

    def _to_classic(self, group: ConsumerGroup) -> None:
        """An empty consumer group becomes a classic group that keeps its offsets, as in Kafka."""
        classic = GroupMetadata(group.group_id, now_ms())
        classic.offsets, classic.pending_txn_offsets = group.offsets, group.pending_txn_offsets
        group.cancel_timers()
        self.store.replace(classic)
        if group.written:   # tombstones for its records, before the classic group writes its own
            self._spawn(self.store.forget_consumer_group(group, now_ms()))

    def _consumer_group_of_classic_member(self, group_id: str) -> ConsumerGroup | None:
        """The consumer group whose classic members SyncGroup/Heartbeat/LeaveGroup address, None
        for a classic group; a share group has no classic members."""
        self._check_group(group_id)
        group = self.store.get(group_id)
        if isinstance(group, ShareGroup):
            raise ApiError(Errors.UnknownMemberIdError)
        if isinstance(group, ConsumerGroup):
            if group.is_(S.DEAD):
                raise ApiError(Errors.CoordinatorNotAvailableError)
            return group
        return None

    async def sync_group(self, **request):
        group = self._consumer_group_of_classic_member(request["group_id"])
        if group is None:
            return await self.membership.sync(**request)
        return self.classic_members.sync(group, generation_id=request["generation_id"],
                                         member_id=request["member_id"],
                                         group_instance_id=request["group_instance_id"],
                                         protocol_type=request["protocol_type"], protocol_name=request["protocol_name"])

    def heartbeat(self, **request) -> int:
        group = self._consumer_group_of_classic_member(request["group_id"])
        if group is None:
            return self.membership.heartbeat(**request)
        try:
            return self.classic_members.heartbeat(group, member_id=request["member_id"],
                                                  group_instance_id=request["group_instance_id"],
                                                  generation_id=request["generation_id"])
        except ApiError as exc:
            return exc.code

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]) -> tuple[int, list[int]]:
        group = self._consumer_group_of_classic_member(group_id)
        if group is None:
            return self.membership.leave(group_id, members)
        results = self.classic_members.leave(group, members)
        if 0 in results:   # someone left
            self._persist_later(group)
        return 0, results

    async def consumer_group_heartbeat(self, request: HeartbeatRequest) -> HeartbeatResult:
        """ConsumerGroupHeartbeat (KIP-848): answered once the group's changes are replicated
        in __consumer_offsets; raises ApiError."""
        self._check_group(request.group_id)
        self._not_share(request.group_id, "consumer")
        group = self.store.get(request.group_id)
        current = group.members.get(request.member_id) if isinstance(group, ConsumerGroup) else None
        self.store.check_member_fits(request.group_id, fields_bytes_at_most(request.record_fields(current)))
        result = self.consumer_protocol.heartbeat(request)
        group = self.store.get(request.group_id)
        if isinstance(group, ConsumerGroup) and (result.changed or not group.written_ok):
            await self.store.store_consumer_group(group, now_ms())
        return result

    def _not_share(self, group_id: str, kind: str) -> None:
        """A share group's id cannot be used by a consumer or classic group, nor its offsets."""
        group = self.store.get(group_id)
        if isinstance(group, ShareGroup) and not group.is_(S.DEAD):
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {group_id} is not a {kind} group.")

    def _persist_later(self, group: ConsumerGroup) -> None:
        if self.store.get(group.group_id) is not group:
            return   # it changed its type meanwhile (an online downgrade), and wrote its tombstones
        self._spawn(self.store.store_consumer_group(group, now_ms()))

    def _spawn(self, write) -> None:
        async def logged():
            try:
                await write
            except ApiError as exc:  # a heartbeat's: the next one's write carries these changes again
                log.warning("Broker %d: a group write failed: %s", self._broker.node_id, exc)
        task = asyncio.get_running_loop().create_task(logged())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    # --- offsets ------------------------------------------------------------------------------
    async def commit_offsets(self, *, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int,
                             offsets: dict[TopicPartition, OffsetAndMetadata], api_version: int = 9) -> None:
        """Validate the committer against the group (generation or member epoch fencing), then
        store; raises ApiError."""
        self._check_group(group_id, allow_empty=True)
        self._not_share(group_id, "consumer")
        group = self.store.get(group_id)
        if group is None:
            if generation_id >= 0:  # a member of a group this coordinator never saw: v9 says so (Kafka)
                raise ApiError(Errors.GroupIdNotFoundError if api_version >= 9 else Errors.IllegalGenerationError)
            group = self.store.add(GroupMetadata(group_id, now_ms()))  # offsets only, no membership
        if isinstance(group, ConsumerGroup):
            _validate_consumer_group_commit(group, member_id, generation_id, api_version)
        else:
            member = _validate_offset_commit(group, member_id, group_instance_id, generation_id)
            if member is not None:
                self.membership.schedule_heartbeat(group, member, member.session_timeout_ms)
        await self.store.store_offsets(group, offsets, now_ms())

    async def commit_txn_offsets(self, *, transactional_id: str, group_id: str, producer_id: int,
                                 producer_epoch: int, member_id: str, group_instance_id: str | None,
                                 generation_id: int, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """TxnOffsetCommit: store offsets that become visible when the producer's transaction
        commits. KIP-447: a member id or generation, when given, must be the group's current.
        KIP-890: the group's partition must be in the producer's open transaction."""
        self._check_group(group_id, allow_empty=True)
        self._not_share(group_id, "consumer")
        shard = self.store.shard_of(group_id)
        if shard is not None:
            await check_offsets_partition(self._broker, transactional_id, producer_id, producer_epoch, shard)
        group = self.store.get(group_id)
        if group is None:
            if generation_id >= 0:
                raise ApiError(Errors.IllegalGenerationError)
            group = self.store.add(GroupMetadata(group_id, now_ms()))
        if group.is_(S.DEAD):
            raise ApiError(Errors.CoordinatorNotAvailableError)
        if isinstance(group, ConsumerGroup):
            if generation_id >= 0 or member_id:
                member = group.members.get(member_id)
                if member is None:
                    raise ApiError(Errors.UnknownMemberIdError)
                if generation_id != member.member_epoch:
                    raise ApiError(Errors.IllegalGenerationError)
        elif generation_id >= 0 or member_id or group_instance_id is not None:
            if group_instance_id is not None and group.static_member_id(group_instance_id) not in (None, member_id):
                raise ApiError(Errors.FencedInstanceIdError)
            if member_id not in group.members:
                raise ApiError(Errors.UnknownMemberIdError)
            if generation_id != group.generation_id:
                raise ApiError(Errors.IllegalGenerationError)
        await self.store.store_txn_offsets(group, producer_id, producer_epoch, offsets, now_ms())

    def on_txn_marker(self, topic: str, partition: int, producer_id: int, commit: bool) -> None:
        """A transaction marker reached `__consumer_offsets`-`partition` (a txn marker listener):
        the producer's pending offsets there become committed offsets, or are dropped."""
        if topic != OFFSETS_TOPIC or partition not in self.store.owned_partitions():
            return
        for group in self.store.groups_in([partition]):
            pending = group.pending_txn_offsets.pop(producer_id, None)
            if commit and pending:
                complete_txn_offsets(group.offsets, pending)

    def unstable_partitions(self, group_id: str, partitions: list[TopicPartition] | None) -> set[TopicPartition]:
        """OffsetFetch require_stable: partitions with a transactional commit still pending."""
        group = self.store.get(group_id)
        if group is None:
            return set()
        pending = {tp for offsets in group.pending_txn_offsets.values() for tp in offsets}
        return pending if partitions is None else pending & set(partitions)

    def fetch_offsets(self, group_id: str, partitions: list[TopicPartition] | None, *,
                      member_id: str | None = None, member_epoch: int = -1
                      ) -> list[tuple[TopicPartition, OffsetAndMetadata | None]]:
        """Committed offsets of `partitions` (None: every partition with one). A member of a
        consumer-protocol group (OffsetFetch v9+) must name its current member epoch."""
        self._check_group(group_id, allow_empty=True)
        group = self.store.get(group_id)
        if isinstance(group, ConsumerGroup) and (member_id is not None or member_epoch >= 0):
            member = group.members.get(member_id or "")
            if member is None:
                raise ApiError(Errors.UnknownMemberIdError,
                               f"Member {member_id} is not a member of group {group_id}.")
            _check_member_epoch(member_epoch, member.member_epoch)
        committed = group.offsets if group is not None and not group.is_(S.DEAD) else {}
        if partitions is None:
            return sorted(committed.items())
        return [(tp, committed.get(tp)) for tp in partitions]

    async def delete_offsets(self, group_id: str, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """OffsetDelete: refused for topics the group's members subscribe to."""
        self._check_group(group_id)
        self._not_share(group_id, "consumer")
        group = self.store.get(group_id)
        if group is None or group.is_(S.DEAD):
            raise ApiError(Errors.GroupIdNotFoundError)
        if group.protocol_type == CONSUMER_PROTOCOL_TYPE or group.is_(S.EMPTY):
            subscribed = set() if group.is_empty else group.subscribed_topics()
        else:
            raise ApiError(Errors.NonEmptyGroupError)
        results, eligible = {}, []
        for tp in partitions:
            if subscribed is None or tp[0] in subscribed:
                results[tp] = Errors.GroupSubscribedToTopicError.errno
            else:
                results[tp] = 0
                eligible.append(tp)
        await self.store.delete_offsets(group, eligible, now_ms())
        return results

    def on_topics_deleted(self, names: set[str]) -> None:
        """Deleted topics' offsets go from every group coordinated here, with tombstones, as
        Kafka's onPartitionsDeleted: a topic created again under the name starts without them
        (a group would otherwise resume the new topic at the old topic's positions). Their
        pending transactional offsets are dropped too. The groups are walked in slices of the
        loop, each group's tombstones written by a task of its own."""
        async def walk():
            with slices.Pacer() as pacer:
                for group in list(self.store.groups.values()):
                    for pending in group.pending_txn_offsets.values():
                        for tp in [tp for tp in pending if tp[0] in names]:
                            del pending[tp]
                    doomed = [tp for tp in group.offsets if tp[0] in names]
                    if doomed:
                        self._spawn(self.store.delete_offsets(group, doomed, now_ms()))
                    await pacer.tick()
        if self.store.groups:
            self._spawn(walk())

    # --- groups -------------------------------------------------------------------------------
    async def delete_groups(self, group_ids: list[str]) -> dict[str, int]:
        results = {}
        for group_id in group_ids:
            try:
                self._check_group(group_id, allow_empty=True)
                group = self.store.get(group_id)
                if group is None or group.is_(S.DEAD):
                    raise ApiError(Errors.GroupIdNotFoundError)
                if not group.is_(S.EMPTY):
                    raise ApiError(Errors.NonEmptyGroupError)
                if isinstance(group, ShareGroup):   # its share partitions' state goes first
                    await self.share.delete_state(group)
                group.cancel_timers()
                await self.store.delete_group(group, now_ms())
                results[group_id] = 0
            except ApiError as exc:
                results[group_id] = exc.code
        return results

    def list_groups(self, states: list[str] | None = None, types: list[str] | None = None) -> list[GroupMetadata]:
        """Groups this broker coordinates, filtered by state and type names (any case)."""
        wanted_types = {t.lower() for t in types} if types else None
        wanted = {s.lower() for s in states} if states else None
        return sorted((g for g in self.store.groups_in() if not g.is_(S.DEAD)
                       and (wanted_types is None or group_type(g) in wanted_types)
                       and (wanted is None or group_state(g).lower() in wanted)), key=lambda g: g.group_id)

    def describe_group(self, group_id: str) -> GroupMetadata | None:
        self._check_group(group_id, allow_empty=True)
        group = self.store.get(group_id)
        return None if group is None or group.is_(S.DEAD) else group


def group_type(group: GroupMetadata) -> str:
    if isinstance(group, ShareGroup):
        return GROUP_TYPE_SHARE
    return GROUP_TYPE_CONSUMER if isinstance(group, ConsumerGroup) else GROUP_TYPE_CLASSIC


def group_state(group: GroupMetadata) -> str:
    """The state name Kafka lists: a consumer-protocol group's own (Assigning, Reconciling...),
    a share group's (Empty, Stable)."""
    if isinstance(group, ShareGroup):
        return group.share_state
    return group.consumer_state.value if isinstance(group, ConsumerGroup) else group.state.value


def _validate_consumer_group_commit(group: ConsumerGroup, member_id: str, member_epoch: int, api_version: int) -> None:
    """Kafka's ConsumerGroup.validateOffsetCommit: epoch -1 commits (admin tools) only to an
    empty group; a member must use OffsetCommit v9+ and its current member epoch, a classic
    member any version and its generation (its member epoch)."""
    if group.is_(S.DEAD):
        raise ApiError(Errors.CoordinatorNotAvailableError)
    if member_epoch < 0 and not group.members:
        return
    member = group.members.get(member_id)
    if member is None:
        raise ApiError(Errors.UnknownMemberIdError, f"Member {member_id} is not a member of group {group.group_id}.")
    if member.uses_classic_protocol:   # its generation is its member epoch
        if member_epoch != member.member_epoch:
            raise ApiError(Errors.IllegalGenerationError, f"The received generation id {member_epoch} does not "
                           f"match the expected generation id {member.member_epoch}.")
        return
    if api_version < 9:
        raise ApiError(Errors.UnsupportedVersionError,
                       "OffsetCommit version 9 or above must be used by members using the consumer group protocol")
    _check_member_epoch(member_epoch, member.member_epoch)


def _check_member_epoch(received: int, expected: int) -> None:
    if received != expected:
        raise ApiError(Errors.StaleMemberEpochError, f"The received member epoch {received} does not match "
                       f"the expected member epoch {expected}.")


def _validate_offset_commit(group: GroupMetadata, member_id: str, group_instance_id: str | None,
                            generation_id: int):
    """The committing member, None for a commit outside group membership; raises ApiError.

    Kafka's order (ClassicGroup.validateOffsetCommit): the member and its generation first, and
    only a valid member of the current generation hears REBALANCE_IN_PROGRESS, so a stale
    member learns it is stale (ILLEGAL_GENERATION) instead of retrying."""
    if group.is_(S.DEAD):
        raise ApiError(Errors.CoordinatorNotAvailableError)
    if generation_id < 0 and group.is_(S.EMPTY):
        return None   # admin tools and standalone consumers commit for an empty group
    if generation_id < 0 and not member_id and group_instance_id is None:
        raise ApiError(Errors.UnknownMemberIdError)
    if group_instance_id is not None:
        known = group.static_member_id(group_instance_id)
        if known is None:
            raise ApiError(Errors.UnknownMemberIdError)
        if known != member_id:
            raise ApiError(Errors.FencedInstanceIdError)
    member = group.members.get(member_id)
    if member is None:
        raise ApiError(Errors.UnknownMemberIdError)
    if generation_id != group.generation_id:
        raise ApiError(Errors.IllegalGenerationError)
    if group.is_(S.COMPLETING_REBALANCE):
        raise ApiError(Errors.RebalanceInProgressError)
    return member
