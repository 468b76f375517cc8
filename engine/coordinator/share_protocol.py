"""Share group membership (KIP-932): ShareGroupHeartbeat for the share groups this broker
coordinates (Kafka's GroupMetadataManager.shareGroupHeartbeat).

One heartbeat: find or create the group and the member (epoch 0 joins, -1 leaves), check
the member epoch, apply the subscription if it changed (null means unchanged), bump the
group epoch if the subscriptions or the subscribed topics' partition counts changed,
recompute the target assignment (share_assignor.py) when the group epoch is ahead of it, and
hand the member its target at once: there is no revocation in a share group, since a
partition may be shared. The answer carries the member epoch and, on joining or when it
changed, the member's partitions.

Configs: the group's `share.session.timeout.ms` and `share.heartbeat.interval.ms` (dynamic
group configs, engine/coordinator/group_configs.py), else the brokers'
`group.share.session.timeout.ms` (45 s) and `group.share.heartbeat.interval.ms` (5 s);
`group.share.max.size` (200) members at most (GROUP_MAX_SIZE_REACHED). A member silent for
the session timeout is removed (a timer on the engine's loop) and the others share its
partitions from the next epoch on.

Group types: a group id that names a classic or consumer group answers GROUP_ID_NOT_FOUND
("not a share group"). A heartbeat for a share group this coordinator does not know (epoch
> 0) answers UNKNOWN_MEMBER_ID, so the member rejoins.

Changes are written to `__consumer_offsets` by the caller (GroupCoordinator, after each
heartbeat) and through `on_change` (after a timer removed a member).
"""
from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any, Callable

import kafka.errors as Errors

from engine.clock import now_ms
from engine.coordinator import share_assignor
from engine.coordinator.group import GroupState
from engine.coordinator.share_group import LEAVE_GROUP_MEMBER_EPOCH, ShareGroup, ShareMember, TopicPartition
from engine.errors import ApiError

log = logging.getLogger(__name__)


@dataclass
class ShareHeartbeatRequest:
    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None
    subscribed_topic_names: list[str] | None
    client_id: str
    client_host: str

    def record_fields(self, current_topics) -> list:
        """The variable fields of the member's record once this heartbeat applies (a null
        subscription keeps `current_topics`), for a size bound."""
        names = self.subscribed_topic_names if self.subscribed_topic_names is not None else current_topics
        return [self.group_id, self.member_id, self.rack_id, self.client_id, self.client_host, *(names or ())]


@dataclass
class ShareHeartbeatResult:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: frozenset[TopicPartition] | None = None
    changed: bool = True        # the group's state changed: its records must be written


class ShareGroupProtocol:
    """Runs the protocol for the share groups in `store`; `config(group_id, name)` reads a
    group config with its broker fallback, `broker_config(name)` a broker config, `image()`
    is the current metadata image."""

    def __init__(self, store, config: Callable[[str, str], Any], broker_config: Callable[[str], Any],
                 image: Callable[[], Any], on_change: Callable[[ShareGroup], None] = lambda group: None) -> None:
        self.store = store
        self._config = config
        self._broker_config = broker_config
        self._image = image
        self._on_change = on_change

    def heartbeat(self, request: ShareHeartbeatRequest) -> ShareHeartbeatResult:
        _validate(request)
        now = now_ms()
        group = self._group(request)
        interval = self._config(group.group_id, "share.heartbeat.interval.ms")
        if request.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            member = group.members.get(request.member_id)
            if member is None:
                raise ApiError(Errors.UnknownMemberIdError,
                               f"Member {request.member_id} is not a member of group {group.group_id}.")
            self.fence(group, member.member_id, "left the group")
            return ShareHeartbeatResult(member.member_id, LEAVE_GROUP_MEMBER_EPOCH, interval)
        member = self._member(group, request, now)
        is_new = member.member_id not in group.members
        updated = replace(member, client_id=request.client_id, client_host=request.client_host,
                          rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
                          subscribed_topics=(frozenset(request.subscribed_topic_names)
                                             if request.subscribed_topic_names is not None
                                             else member.subscribed_topics))
        bump = is_new or updated.subscribed_topics != member.subscribed_topics
        group.put_member(updated, now)
        epochs = (group.group_epoch, group.assignment_epoch)
        if self._refresh_subscription_metadata(group) or bump:
            group.group_epoch += 1
            log.info("Share group %s: epoch %d", group.group_id, group.group_epoch)
        if group.group_epoch > group.assignment_epoch:
            self._compute_target_assignment(group)
        target = group.target.get(updated.member_id, frozenset())
        current = updated
        if updated.member_epoch != group.assignment_epoch or updated.assigned != target:
            current = replace(updated, previous_member_epoch=updated.member_epoch,
                              member_epoch=group.assignment_epoch, assigned=target)
        group.put_member(current, now)
        self._schedule_session_timeout(group, current)
        result = ShareHeartbeatResult(current.member_id, current.member_epoch, interval,
                                      changed=is_new or current != member
                                      or epochs != (group.group_epoch, group.assignment_epoch))
        if request.member_epoch == 0 or current.assigned != member.assigned or is_new:
            result.assignment = current.assigned
        return result

    def _group(self, request: ShareHeartbeatRequest) -> ShareGroup:
        group = self.store.get(request.group_id)
        if isinstance(group, ShareGroup) and not group.is_(GroupState.DEAD):
            return group
        if group is not None and not group.is_(GroupState.DEAD):
            raise ApiError(Errors.GroupIdNotFoundError, f"Group {request.group_id} is not a share group.")
        if request.member_epoch != 0:
            raise ApiError(Errors.UnknownMemberIdError, f"Share group {request.group_id} not found.")
        return self.store.replace(ShareGroup(request.group_id, now_ms()))

    def _member(self, group: ShareGroup, request: ShareHeartbeatRequest, now: int) -> ShareMember:
        member = group.members.get(request.member_id)
        if request.member_epoch == 0:
            if member is not None:
                # A member that rejoins (after FENCED_MEMBER_EPOCH, say) starts over.
                return replace(member, member_epoch=0, previous_member_epoch=0, assigned=frozenset())
            limit = self._broker_config("group.share.max.size")
            if len(group.members) >= limit:
                raise ApiError(Errors.GroupMaxSizeReachedError,
                               f"The share group has reached its maximum capacity of {limit} members.")
            log.info("Share group %s: member %s joins", group.group_id, request.member_id)
            return ShareMember(request.member_id or str(uuid.uuid4()), request.rack_id, request.client_id,
                               request.client_host)
        if member is None:
            raise ApiError(Errors.UnknownMemberIdError,
                           f"Member {request.member_id} is not a member of group {group.group_id}.")
        epoch = request.member_epoch
        if epoch > member.member_epoch or (epoch < member.member_epoch and epoch != member.previous_member_epoch):
            which = "greater" if epoch > member.member_epoch else "smaller"
            raise ApiError(Errors.FencedMemberEpochError,
                           f"The share group member has a {which} member epoch ({epoch}) than the one known by "
                           f"the group coordinator ({member.member_epoch}). The member must abandon all its "
                           "partitions and rejoin.")
        return member

    def fence(self, group: ShareGroup, member_id: str, reason: str) -> None:
        """Remove a member; the others share its partitions from the next group epoch on."""
        if group.remove_member(member_id, now_ms()) is None:
            return
        group.group_epoch += 1
        self._refresh_subscription_metadata(group)
        if group.members:
            self._compute_target_assignment(group)
        else:
            group.assignment_epoch = group.group_epoch
        log.info("Share group %s: member %s %s; epoch %d", group.group_id, member_id, reason, group.group_epoch)

    # --- assignment ---------------------------------------------------------------------------
    def _subscriptions(self, group: ShareGroup) -> dict[str, frozenset[str]]:
        image = self._image()
        return {m.member_id: frozenset(t for t in m.subscribed_topics if t in image.topics and
                                       not image.topics[t].is_internal)
                for m in group.members.values()}

    def _refresh_subscription_metadata(self, group: ShareGroup) -> bool:
        """True if a subscribed topic appeared, went, or changed its id or partition count."""
        image = self._image()
        topics = set().union(*self._subscriptions(group).values()) if group.members else set()
        metadata = {t: (image.topics[t].topic_id, len(image.topics[t].partitions)) for t in topics}
        if metadata == group.subscription_metadata:
            return False
        group.subscription_metadata = metadata
        return True

    def _compute_target_assignment(self, group: ShareGroup) -> None:
        counts = {topic: count for topic, (_, count) in group.subscription_metadata.items()}
        group.target = share_assignor.assign(self._subscriptions(group), counts, group.target)
        group.assignment_epoch = group.group_epoch
        group.assignor_name = share_assignor.SIMPLE
        # Members take their new targets at their next heartbeat, each with the new epoch.

    # --- timers -------------------------------------------------------------------------------
    def _schedule_session_timeout(self, group: ShareGroup, member: ShareMember) -> None:
        if member.session_timer is not None:
            member.session_timer.cancel()
        timeout = self._config(group.group_id, "share.session.timeout.ms") / 1000
        member.session_timer = asyncio.get_running_loop().call_later(
            timeout, self._expire, group, member.member_id)

    def _expire(self, group: ShareGroup, member_id: str) -> None:
        if self.store.get(group.group_id) is group and member_id in group.members:
            self.fence(group, member_id, "session timeout expired")
            self._on_change(group)

    def loaded(self, group: ShareGroup) -> None:
        """A group read back from __consumer_offsets: its members get a full session to heartbeat here."""
        self._refresh_subscription_metadata(group)
        for member in group.members.values():
            self._schedule_session_timeout(group, member)

    def unloaded(self, group: ShareGroup) -> None:
        group.cancel_timers()
        group.state = GroupState.DEAD


def _validate(request: ShareHeartbeatRequest) -> None:
    def invalid(message: str):
        raise ApiError(Errors.InvalidRequestError, message)
    if not request.group_id:
        invalid("GroupId can't be empty.")
    if request.rack_id == "":
        invalid("RackId can't be empty.")
    if request.member_epoch == 0:
        if not request.subscribed_topic_names:
            invalid("SubscribedTopicNames must be set in first request.")
    elif request.member_epoch < LEAVE_GROUP_MEMBER_EPOCH:
        invalid("MemberEpoch is invalid.")
    if request.member_epoch != 0 and not request.member_id:
        invalid("MemberId can't be empty.")
