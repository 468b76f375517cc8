"""The consumer group protocol (KIP-848): ConsumerGroupHeartbeat for the groups this broker
coordinates (Kafka's GroupMetadataManager.consumerGroupHeartbeat).

One heartbeat: find or create the group and the member (epoch 0 joins, -1 leaves, -2 is a
static member's temporary leave), check the member epoch, apply the changed fields (a null
field means "unchanged"), bump the group epoch if the subscriptions, the server assignor or
the subscribed topics' metadata changed, recompute the target assignment when the group
epoch is ahead of it, and move this member one step towards its target (reconciliation.py).
The answer carries the member epoch and, on a full request or when it changed, the
partitions the member may use now.

Timers (`loop.call_later` on the engine's event loop): the session timeout (the group's
`consumer.session.timeout.ms`, else the brokers' `group.consumer.session.timeout.ms`),
restarted by every heartbeat, removes a silent member; the rebalance timeout (the member's `max.poll.interval.ms`) removes a member that
does not give up its revoked partitions in time. Both bump the group epoch, so the others
get its partitions.

Group types: a heartbeat that joins turns an empty classic group (offsets only) into a
consumer group with those offsets, as Kafka does. A classic group with members becomes a
consumer group too when `group.consumer.migration.policy` allows the upgrade and its members
speak the consumer protocol type (migration.py); its members stay, served by classic_members.py.
Otherwise it answers GROUP_ID_NOT_FOUND ("not a consumer group"). When a member leaves or is
removed and only classic members remain, the group goes back to a classic group if the policy
allows the downgrade (`on_downgrade`, which the coordinator carries out). A heartbeat for a group this coordinator does
not know (epoch > 0) gets UNKNOWN_MEMBER_ID, so the member rejoins (Kafka answers
GROUP_ID_NOT_FOUND, which librdkafka takes as fatal).

State changes are written to `__consumer_offsets` by the caller (GroupCoordinator, after
each heartbeat) and through `on_change` (after a timer removed a member); a group loaded
from there (`loaded`) carries on with its members, epochs and partitions.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any, Callable

import kafka.errors as Errors
import re2

from engine.clock import now_ms
from engine.coordinator import assignors, migration
from engine.coordinator.consumer_group import (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                               ConsumerGroup, ConsumerMember, MemberState, TopicPartition)
from engine.coordinator.group import CONSUMER_PROTOCOL_TYPE, GroupMetadata, GroupState, JoinResult, SyncResult
from engine.coordinator.offsets_records import group_key
from engine.coordinator.reconciliation import reconcile
from engine.errors import ApiError

log = logging.getLogger(__name__)


REGEX_CACHE_SIZE = 1024


@functools.lru_cache(maxsize=REGEX_CACHE_SIZE)
def topic_pattern(regex: str):
    """A member's SubscribedTopicRegex, compiled with RE2 as Kafka compiles it (RE2/J): linear
    time, so a hostile pattern cannot hold the event loop; re2.error when it is not valid."""
    return re2.compile(regex)


class InvalidRegularExpressionError(Errors.BrokerResponseError):
    """Kafka's INVALID_REGULAR_EXPRESSION (KIP-848), which kafka-python 3.0.12 does not define."""
    errno = 128
    message = "INVALID_REGULAR_EXPRESSION"
    description = "The regular expression is not valid."


class TopicFilter:
    """A member's `describable` filter with its last answer kept: a regex's matches stay the
    same frozenset until the metadata changes (_regex_topics), so every heartbeat of the group
    asks the authorizer about each matched topic once per change, not once per heartbeat."""

    def __init__(self, describable: Callable[[frozenset[str]], frozenset[str]]) -> None:
        self._describable = describable
        self._last: tuple[frozenset[str], frozenset[str]] | None = None

    def __call__(self, topics: frozenset[str]) -> frozenset[str]:
        if self._last is None or self._last[0] is not topics:
            self._last = (topics, self._describable(topics))
        return self._last[1]


@dataclass
class HeartbeatRequest:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    subscribed_topic_names: list[str] | None
    subscribed_topic_regex: str | None
    server_assignor: str | None
    owned: frozenset[TopicPartition] | None     # topic ids already resolved to names
    client_id: str
    client_host: str
    # With an authorizer, the topics (among those given) the member's principal may describe:
    # its regex only ever matches those, as Kafka resolves a regex with the member's authorization.
    describable: Callable[[frozenset[str]], frozenset[str]] | None = None

    def record_fields(self, current: ConsumerMember | None) -> list:
        """The variable fields of the member's metadata record once this heartbeat applies to
        `current` (a null subscription keeps the current one), for a size bound."""
        names = self.subscribed_topic_names
        regex = self.subscribed_topic_regex
        if current is not None:
            names = current.subscribed_topics if names is None else names
            regex = current.subscribed_regex if regex is None else regex
        return [self.group_id, self.member_id, self.instance_id, self.rack_id, self.client_id, self.client_host,
                self.server_assignor, regex, *(names or ())]

    @property
    def is_full(self) -> bool:
        return self.member_epoch == 0 or (self.rebalance_timeout_ms != -1 and self.owned is not None and (
            self.subscribed_topic_names is not None or self.subscribed_topic_regex is not None))


@dataclass
class HeartbeatResult:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: frozenset[TopicPartition] | None = None
    changed: bool = True        # the group's state changed: its records must be written


class ConsumerGroupProtocol:
    """Runs the protocol for the consumer groups in `store`; `config(name)` reads broker
    configs, `group_config(group_id, name)` a group config with its broker fallback
    (group_configs.py), `image()` is the broker's current metadata image."""

    def __init__(self, store, config: Callable[[str], Any], group_config: Callable[[str, str], Any],
                 image: Callable[[], Any], on_change: Callable[[ConsumerGroup], None] = lambda group: None,
                 on_downgrade: Callable[[ConsumerGroup], None] | None = None) -> None:
        self.store = store
        self._config = config
        self._group_config = group_config
        self._image = image
        self._on_change = on_change
        self._on_downgrade = on_downgrade
        self._regex_matches: dict[str, tuple] = {}   # regex -> (image, its version, the topics it matches)

    def migration_policy(self) -> str:
        return self._config("group.consumer.migration.policy")

    def assignor_names(self) -> list[str]:
        return [assignors.assignor_name(n) for n in self._config("group.consumer.assignors").split(",")]

    # --- ConsumerGroupHeartbeat ---------------------------------------------------------------
    def heartbeat(self, request: HeartbeatRequest) -> HeartbeatResult:
        self._validate(request)
        now = now_ms()
        group = self._group(request)
        if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._leave(group, request, now)
        if request.member_epoch == 0 and request.member_id not in group.members \
                and len(group.members) >= self._config("group.consumer.max.size"):
            raise ApiError(Errors.GroupMaxSizeReachedError, "The consumer group has reached its maximum capacity "
                           f"of {self._config('group.consumer.max.size')} members.")
        member = self._member(group, request, now)
        is_new = member.member_id not in group.members
        updated = replace(
            member, client_id=request.client_id, client_host=request.client_host,
            instance_id=request.instance_id if request.instance_id is not None else member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(request.rebalance_timeout_ms if request.rebalance_timeout_ms != -1
                                  else member.rebalance_timeout_ms),
            server_assignor=request.server_assignor if request.server_assignor is not None else member.server_assignor,
            subscribed_topics=(frozenset(request.subscribed_topic_names)
                               if request.subscribed_topic_names is not None else member.subscribed_topics),
            subscribed_regex=(request.subscribed_topic_regex or None
                              if request.subscribed_topic_regex is not None else member.subscribed_regex),
            regex_filter=member.regex_filter or (request.describable and TopicFilter(request.describable)))
        bump = (is_new or updated.subscribed_topics != member.subscribed_topics
                or updated.subscribed_regex != member.subscribed_regex
                or updated.server_assignor != member.server_assignor)
        group.put_member(updated, now)
        epochs = (group.group_epoch, group.assignment_epoch)
        if self.refresh_subscription_metadata(group) or bump:
            group.group_epoch += 1
            log.info("Consumer group %s: epoch %d", group.group_id, group.group_epoch)
        if group.group_epoch > group.assignment_epoch:
            self.compute_target_assignment(group)
        reconciled = reconcile(updated, group.assignment_epoch, group.target.get(updated.member_id, frozenset()),
                               group.owner_of.get, request.owned)
        group.put_member(reconciled, now)
        self.schedule_session_timeout(group, reconciled)
        self._maybe_schedule_rebalance_timeout(group, updated, reconciled)
        result = HeartbeatResult(reconciled.member_id, reconciled.member_epoch,
                                 self._heartbeat_interval_ms(group),
                                 changed=is_new or reconciled != member or epochs != (group.group_epoch,
                                                                                        group.assignment_epoch))
        if request.is_full or is_new or reconciled.assigned != member.assigned:
            result.assignment = reconciled.assigned
        return result

    def _validate(self, request: HeartbeatRequest) -> None:
        def invalid(message: str):
            raise ApiError(Errors.InvalidRequestError, message)
        if not request.group_id:
            invalid("GroupId can't be empty.")
        if request.instance_id == "":
            invalid("InstanceId can't be empty.")
        if request.rack_id == "":
            invalid("RackId can't be empty.")
        epoch = request.member_epoch
        if epoch == 0:
            if request.rebalance_timeout_ms == -1:
                invalid("RebalanceTimeoutMs must be provided in first request.")
            if request.owned is None or request.owned:
                invalid("TopicPartitions must be empty when (re-)joining.")
            if not request.subscribed_topic_names and not request.subscribed_topic_regex:
                invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and request.instance_id is None:
            invalid("InstanceId can't be null.")
        elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            invalid("MemberEpoch is invalid.")
        if epoch != 0 and not request.member_id:
            invalid("MemberId can't be empty.")
        if request.subscribed_topic_regex:
            try:
                topic_pattern(request.subscribed_topic_regex)
            except re2.error as exc:
                raise ApiError(InvalidRegularExpressionError, f"SubscribedTopicRegex is invalid: {exc}") from None
        if request.server_assignor is not None and request.server_assignor not in self.assignor_names():
            raise ApiError(Errors.UnsupportedAssignorError, f"ServerAssignor {request.server_assignor} is not "
                           f"supported. Supported assignors: {', '.join(self.assignor_names())}.")

    def _group(self, request: HeartbeatRequest) -> ConsumerGroup:
        group = self.store.get(request.group_id)
        if isinstance(group, ConsumerGroup) and not group.is_(GroupState.DEAD):
            return group
        classic_empty = group is None or group.is_(GroupState.DEAD) or (group.is_(GroupState.EMPTY) and not group.members)
        if not classic_empty and request.member_epoch == 0:
            return self._upgrade(group)
        if not classic_empty:
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {request.group_id} is not a consumer group.")
        if request.member_epoch != 0:
            # Kafka answers GROUP_ID_NOT_FOUND, which librdkafka treats as fatal; this coordinator
            # does not keep consumer groups across a failover, so the member must rejoin instead.
            raise ApiError(Errors.UnknownMemberIdError, f"Consumer group {request.group_id} not found.")
        return self._convert(request.group_id, group)

    def _convert(self, group_id: str, classic: GroupMetadata | None) -> ConsumerGroup:
        group = ConsumerGroup(group_id, now_ms())
        if classic is not None:
            migration.carry_offsets(classic, group)
            group.state_timestamp = classic.state_timestamp
        self._take_place(classic, group)
        return group

    def _take_place(self, classic: GroupMetadata | None, group: ConsumerGroup) -> None:
        """`group` replaces the classic group of its id: that group's timers stop, and the first
        write of `group` carries the tombstone of the classic group's record."""
        if classic is not None:
            classic.cancel_timers()
        group.written = {group_key(group.group_id): b""}
        self.store.replace(group)

    def _upgrade(self, classic: GroupMetadata) -> ConsumerGroup:
        """A classic group with members becomes a consumer group that keeps them (migration.py)."""
        def refuse(reason: str):
            log.info("Consumer group %s: cannot upgrade the classic group: %s", classic.group_id, reason)
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {classic.group_id} is not a consumer group "
                           f"and cannot be upgraded: {reason}.")
        if not migration.upgrade_enabled(self.migration_policy()):
            refuse("the online upgrade is disabled (group.consumer.migration.policy)")
        if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
            refuse(f"its members use the protocol type {classic.protocol_type!r}, not 'consumer'")
        if len(classic.members) > self._config("group.consumer.max.size"):
            refuse("it has more members than group.consumer.max.size")
        image = self._image()
        try:
            group = migration.consumer_group_from_classic(classic, now_ms(), lambda topic: topic in image.topics)
        except migration.MalformedSubscriptionError as exc:
            refuse(str(exc))
        for member in classic.members.values():   # their rebalance is over: they rejoin this group
            member.complete_join(JoinResult(Errors.RebalanceInProgressError.errno, member.member_id))
            member.complete_sync(SyncResult(Errors.RebalanceInProgressError.errno))
        classic.state = GroupState.DEAD
        self.refresh_subscription_metadata(group)
        self._take_place(classic, group)
        for member in group.members.values():
            self.schedule_session_timeout(group, member)
        log.info("Consumer group %s: upgraded from a classic group of %d members at generation %d",
                 group.group_id, len(group.members), group.group_epoch)
        return group

    def _member(self, group: ConsumerGroup, request: HeartbeatRequest, now: int) -> ConsumerMember:
        if request.instance_id is None:
            member = group.members.get(request.member_id)
        else:
            member = self._static_member(group, request, now)
        if request.member_epoch == 0:
            if member is None:
                log.info("Consumer group %s: member %s joins", group.group_id, request.member_id)
                return ConsumerMember(request.member_id or str(uuid.uuid4()), request.instance_id, request.rack_id,
                                      request.client_id, request.client_host, request.rebalance_timeout_ms)
            if member.member_id == request.member_id and member.member_epoch != 0:
                # A member that rejoins (after FENCED_MEMBER_EPOCH, say) has dropped its partitions.
                return replace(member, member_epoch=0, previous_member_epoch=0, state=MemberState.STABLE,
                               assigned=frozenset(), pending_revocation=frozenset())
            return member
        if member is None:
            raise ApiError(Errors.UnknownMemberIdError,
                           f"Member {request.member_id} is not a member of group {group.group_id}.")
        _check_member_epoch(member, request)
        return member

    def _static_member(self, group: ConsumerGroup, request: HeartbeatRequest, now: int) -> ConsumerMember | None:
        existing = group.static_member(request.instance_id)
        if request.member_epoch != 0:
            if existing is None:
                raise ApiError(Errors.UnknownMemberIdError, f"Instance id {request.instance_id} is unknown.")
            if existing.member_id != request.member_id:
                raise ApiError(Errors.FencedInstanceIdError, f"Static member {request.member_id} with instance id "
                               f"{request.instance_id} was fenced by member {existing.member_id}.")
            return existing
        if existing is None or existing.member_id == request.member_id:
            return existing
        if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise ApiError(Errors.UnreleasedInstanceIdError, f"Static member {request.member_id} with instance id "
                           f"{request.instance_id} cannot join the group because the instance id is owned by "
                           f"{existing.member_id} member.")
        # The new instance takes the old one's place and partitions, without a rebalance.
        target = group.target.get(existing.member_id, frozenset())
        group.remove_member(existing.member_id, now)
        successor = replace(existing, member_id=request.member_id, member_epoch=0, previous_member_epoch=0,
                            session_timer=None, rebalance_timer=None)
        group.put_member(successor, now)
        group.target[successor.member_id] = target
        log.info("Consumer group %s: static member %s rejoins as %s", group.group_id, request.instance_id,
                 request.member_id)
        return successor

    def _leave(self, group: ConsumerGroup, request: HeartbeatRequest, now: int) -> HeartbeatResult:
        member = (group.members.get(request.member_id) if request.instance_id is None
                  else group.static_member(request.instance_id))
        if member is None:
            raise ApiError(Errors.UnknownMemberIdError,
                           f"Member {request.member_id} is not a member of group {group.group_id}.")
        if member.member_id != request.member_id:
            raise ApiError(Errors.FencedInstanceIdError)
        interval = self._heartbeat_interval_ms(group)
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # It keeps its partitions for a successor with the same instance id, until its session ends.
            left = replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
            group.put_member(left, now)
            self.schedule_session_timeout(group, left)
            return HeartbeatResult(member.member_id, LEAVE_GROUP_STATIC_MEMBER_EPOCH, interval)
        self.fence(group, member.member_id, "left the group")
        return HeartbeatResult(member.member_id, LEAVE_GROUP_MEMBER_EPOCH, interval)

    def fence(self, group: ConsumerGroup, member_id: str, reason: str, *, may_downgrade: bool = True) -> None:
        """Remove a member; the others share its partitions from the next group epoch on, or,
        when only classic members remain and the policy allows, in a classic group again."""
        if member_id not in group.members:
            return
        if may_downgrade and self._downgrade_allowed(group, member_id):
            group.remove_member(member_id, now_ms())
            log.info("Consumer group %s: member %s %s; only classic members remain: downgrading", group.group_id,
                     member_id, reason)
            self._on_downgrade(group)
            return
        group.remove_member(member_id, now_ms())
        group.group_epoch += 1
        self.refresh_subscription_metadata(group)
        log.info("Consumer group %s: member %s %s; epoch %d", group.group_id, member_id, reason, group.group_epoch)

    def _downgrade_allowed(self, group: ConsumerGroup, leaving_id: str) -> bool:
        """Kafka's validateOnlineDowngradeWithFencedMember."""
        remaining = len(group.members) - 1
        return (self._on_downgrade is not None and remaining >= 1 and group.all_classic_except(leaving_id)
                and migration.downgrade_enabled(self.migration_policy())
                and remaining <= self._config("group.max.size"))

    # --- assignment ---------------------------------------------------------------------------
    def _subscriptions(self, group: ConsumerGroup) -> dict[str, frozenset[str]]:
        """Each member's subscribed topics that exist, its regex matched against the topic names."""
        image = self._image()
        result = {}
        for member in group.members.values():
            topics = {t for t in member.subscribed_topics if t in image.topics}
            if member.subscribed_regex:
                matched = self._regex_topics(member.subscribed_regex, image)
                topics |= matched if member.regex_filter is None else member.regex_filter(matched)
            result[member.member_id] = frozenset(topics)
        return result

    def _regex_topics(self, regex: str, image) -> frozenset[str]:
        """The topics `regex` matches, matched once per regex and metadata image version: every
        heartbeat reads every member's subscription, and matching all topics each time would
        hold the event loop for members x topics matches."""
        cached = self._regex_matches.get(regex)
        if cached is not None and cached[0] is image and cached[1] == image.version:
            return cached[2]
        pattern = topic_pattern(regex)
        matched = frozenset(name for name, state in image.topics.items()
                            if not state.is_internal and pattern.fullmatch(name))
        if len(self._regex_matches) >= REGEX_CACHE_SIZE:
            del self._regex_matches[next(iter(self._regex_matches))]   # the oldest
        self._regex_matches[regex] = (image, image.version, matched)
        return matched

    def refresh_subscription_metadata(self, group: ConsumerGroup) -> bool:
        """True if a subscribed topic appeared, went, or changed its id or partition count."""
        image = self._image()
        topics = set().union(*self._subscriptions(group).values()) if group.members else set()
        metadata = {t: (image.topics[t].topic_id, len(image.topics[t].partitions)) for t in topics}
        if metadata == group.subscription_metadata:
            return False
        group.subscription_metadata = metadata
        return True

    def compute_target_assignment(self, group: ConsumerGroup) -> None:
        name = group.preferred_assignor(self.assignor_names()[0])
        counts = {topic: count for topic, (_, count) in group.subscription_metadata.items()}
        group.target = assignors.assign(name, self._subscriptions(group), counts, group.target)
        group.assignment_epoch = group.group_epoch
        group.assignor_name = name

    def _heartbeat_interval_ms(self, group: ConsumerGroup) -> int:
        return self._group_config(group.group_id, "consumer.heartbeat.interval.ms")

    # --- timers -------------------------------------------------------------------------------
    def schedule_session_timeout(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        if member.session_timer is not None:
            member.session_timer.cancel()
        timeout = (member.classic.session_timeout_ms if member.uses_classic_protocol
                   else self._group_config(group.group_id, "consumer.session.timeout.ms")) / 1000
        member.session_timer = asyncio.get_running_loop().call_later(
            timeout, self.expire, group, member.member_id, "session timeout expired")

    def _maybe_schedule_rebalance_timeout(self, group: ConsumerGroup, before: ConsumerMember,
                                          after: ConsumerMember) -> None:
        revoking = after.state is MemberState.UNREVOKED_PARTITIONS
        if revoking and before.state is MemberState.UNREVOKED_PARTITIONS \
                and before.member_epoch == after.member_epoch and after.rebalance_timer is not None:
            return  # still revoking the same partitions: the timer already runs
        if after.rebalance_timer is not None:
            after.rebalance_timer.cancel()
            after.rebalance_timer = None
        if revoking:
            after.rebalance_timer = asyncio.get_running_loop().call_later(
                after.rebalance_timeout_ms / 1000, self.expire, group, after.member_id,
                "did not revoke its partitions within the rebalance timeout")

    def expire(self, group: ConsumerGroup, member_id: str, reason: str) -> None:
        """A member's deadline passed (a timer's callback): remove it and write the change."""
        if self.store.get(group.group_id) is group and member_id in group.members:
            self.fence(group, member_id, reason)
            self._on_change(group)

    def loaded(self, group: ConsumerGroup) -> None:
        """A group read back from __consumer_offsets: its members get a full session to
        heartbeat here, and the subscribed topics' metadata comes from the image (no new epoch)."""
        self.refresh_subscription_metadata(group)
        for member in group.members.values():
            self.schedule_session_timeout(group, member)

    def unloaded(self, group: ConsumerGroup) -> None:
        """The broker no longer coordinates this group."""
        group.cancel_timers()
        group.state = GroupState.DEAD


def _check_member_epoch(member: ConsumerMember, request: HeartbeatRequest) -> None:
    """FENCED_MEMBER_EPOCH for an epoch ahead of the member's, or behind it - unless it is the
    previous epoch and the member owns a subset of its assignment (the answer that moved it on
    may have been lost)."""
    epoch = request.member_epoch
    if epoch > member.member_epoch or (epoch < member.member_epoch and (
            epoch != member.previous_member_epoch or request.owned is None or not request.owned <= member.assigned)):
        which = "greater" if epoch > member.member_epoch else "smaller"
        raise ApiError(Errors.FencedMemberEpochError,
                       f"The consumer group member has a {which} member epoch ({epoch}) than the one known by "
                       f"the group coordinator ({member.member_epoch}). The member must abandon all its "
                       "partitions and rejoin.")
