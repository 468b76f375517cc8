"""Members of the classic protocol in a consumer group (KIP-848's mixed groups; Kafka's
GroupMetadataManager.classicGroup*ToConsumerGroup): JoinGroup, SyncGroup, Heartbeat and
LeaveGroup answered by a consumer group, whose server-side assignor decides for them.

- JoinGroup reads the member's subscription (and, from v1 of the embedded protocol, the
  partitions it still owns) from its first protocol's metadata, applies it as a heartbeat
  would, and answers at once: the generation is the member's epoch, the protocol its first,
  and no member is the leader, so the client syncs as a follower. A new dynamic member on
  JoinGroup v4+ first gets MEMBER_ID_REQUIRED; a static member arriving with an unknown member
  id takes its instance's place and partitions. It must share a protocol with every classic
  member already in (INCONSISTENT_GROUP_PROTOCOL).
- SyncGroup answers the partitions the member may use now, in its subscription's version.
  While the group epoch is ahead of the member's (and it is not revoking) it answers
  REBALANCE_IN_PROGRESS, so the member joins again.
- Heartbeat answers REBALANCE_IN_PROGRESS while the member is behind the group epoch, must
  give partitions up, or could now collect partitions others released; the member rejoins,
  and each join moves it a step towards its target (reconciliation.py).
- LeaveGroup removes classic members (a consumer-protocol member named there is unknown).

Deadlines: the member's own session timeout, restarted by each of its requests; after a
join it must sync, and after REBALANCE_IN_PROGRESS join again, within its rebalance timeout,
else it is removed and the others get its partitions.
"""
from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import replace

import kafka.errors as Errors

from engine.clock import now_ms
from engine.coordinator.consumer_group import ClassicMemberMetadata, ConsumerGroup, ConsumerMember, MemberState
from engine.coordinator.group import CONSUMER_PROTOCOL_TYPE, JoinResult, SyncResult
from engine.coordinator.migration import (MalformedSubscriptionError, decode_subscription, encode_assignment,
                                          owned_partitions)
from engine.coordinator.reconciliation import reconcile
from engine.errors import ApiError

log = logging.getLogger(__name__)

NONE = 0


class ClassicMembers:
    """The classic protocol's requests for the consumer groups `protocol` runs
    (consumer_protocol.ConsumerGroupProtocol); `config(name)` reads broker configs."""

    def __init__(self, protocol, config) -> None:
        self.protocol = protocol
        self._config = config

    # --- JoinGroup ------------------------------------------------------------------------------
    def join(self, group: ConsumerGroup, *, member_id: str, group_instance_id: str | None,
             require_known_member_id: bool, client_id: str, client_host: str, rebalance_timeout_ms: int,
             session_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]]) -> JoinResult:
        """The answer, once the caller has written the group's changes; raises ApiError."""
        unknown = member_id == ""
        member_id = member_id or str(uuid.uuid4())
        known = member_id in group.members or (
            group_instance_id is not None and group.static_member(group_instance_id) is not None)
        if not known and len(group.members) >= self._config("group.consumer.max.size"):
            raise ApiError(Errors.GroupMaxSizeReachedError, "The consumer group has reached its maximum capacity "
                           f"of {self._config('group.consumer.max.size')} members.")
        if not group.supports_classic_protocols(protocol_type, [name for name, _ in protocols]):
            raise ApiError(Errors.InconsistentGroupProtocolError)
        if unknown and group_instance_id is None and require_known_member_id:
            return JoinResult(Errors.MemberIdRequiredError.errno, member_id)
        try:
            subscription = decode_subscription(protocols[0][1])
        except MalformedSubscriptionError as exc:
            raise ApiError(Errors.InconsistentGroupProtocolError, str(exc)) from None
        now = now_ms()
        member = self._member(group, member_id, group_instance_id, unknown, client_id, client_host,
                              rebalance_timeout_ms, now)
        updated = replace(
            member, client_id=client_id, client_host=client_host, rebalance_timeout_ms=rebalance_timeout_ms,
            rack_id=getattr(subscription, "rack_id", None) or member.rack_id,
            subscribed_topics=frozenset(subscription.topics or ()),
            classic=ClassicMemberMetadata(session_timeout_ms, tuple((n, bytes(m)) for n, m in protocols)))
        bump = member.member_id not in group.members or updated.subscribed_topics != member.subscribed_topics
        group.put_member(updated, now)
        if self.protocol.refresh_subscription_metadata(group) or bump:
            group.group_epoch += 1
            log.info("Consumer group %s: epoch %d (classic member %s joined)", group.group_id, group.group_epoch,
                     updated.member_id)
        if group.group_epoch > group.assignment_epoch:
            self.protocol.compute_target_assignment(group)
        reconciled = reconcile(updated, group.assignment_epoch, group.target.get(updated.member_id, frozenset()),
                               group.owner_of.get, owned_partitions(subscription))
        group.put_member(reconciled, now)
        self.protocol.schedule_session_timeout(group, reconciled)
        self._deadline(group, reconciled, "did not send SyncGroup within the rebalance timeout", replace_timer=True)
        return JoinResult(NONE, reconciled.member_id, reconciled.member_epoch, CONSUMER_PROTOCOL_TYPE,
                          reconciled.classic.protocols[0][0], "", [])

    def _member(self, group: ConsumerGroup, member_id: str, instance_id: str | None, unknown: bool,
                client_id: str, client_host: str, rebalance_timeout_ms: int, now: int) -> ConsumerMember:
        existing = group.static_member(instance_id) if instance_id is not None else group.members.get(member_id)
        if existing is not None and existing.member_id == member_id:
            if not existing.uses_classic_protocol:
                raise ApiError(Errors.UnknownMemberIdError,
                               f"Member {member_id} uses the consumer protocol, not the classic one.")
            return existing
        if existing is None:
            log.info("Consumer group %s: classic member %s joins", group.group_id, member_id)
            return ConsumerMember(member_id, instance_id, None, client_id, client_host, rebalance_timeout_ms)
        if not unknown:
            raise ApiError(Errors.FencedInstanceIdError, f"Static member {member_id} with instance id {instance_id} "
                           f"was fenced by member {existing.member_id}.")
        # A new instance takes the static member's place and partitions, without a rebalance.
        target = group.target.get(existing.member_id, frozenset())
        group.remove_member(existing.member_id, now)
        successor = replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0,
                            session_timer=None, rebalance_timer=None)
        group.put_member(successor, now)
        group.target[member_id] = target
        log.info("Consumer group %s: static member %s rejoins as %s", group.group_id, instance_id, member_id)
        return successor

    # --- SyncGroup, Heartbeat, LeaveGroup ------------------------------------------------------
    def sync(self, group: ConsumerGroup, *, generation_id: int, member_id: str, group_instance_id: str | None,
             protocol_type: str | None, protocol_name: str | None) -> SyncResult:
        member = self._known(group, member_id, group_instance_id)
        _check_generation(member, generation_id)
        own_protocol = member.classic.protocols[0][0]
        if (protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE) or \
                (protocol_name is not None and protocol_name != own_protocol):
            raise ApiError(Errors.InconsistentGroupProtocolError)
        if group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
            raise ApiError(Errors.RebalanceInProgressError, f"A new rebalance is triggered in group "
                           f"{group.group_id} and member {member_id} should rejoin to catch up.")
        _cancel_deadline(member)
        self.protocol.schedule_session_timeout(group, member)
        return SyncResult(NONE, encode_assignment(member.assigned, member.classic), CONSUMER_PROTOCOL_TYPE,
                          own_protocol)

    def heartbeat(self, group: ConsumerGroup, *, member_id: str, group_instance_id: str | None,
                  generation_id: int) -> int:
        member = self._known(group, member_id, group_instance_id)
        _check_generation(member, generation_id)
        self.protocol.schedule_session_timeout(group, member)
        if member.member_epoch < group.group_epoch or member.state is MemberState.UNREVOKED_PARTITIONS or (
                member.state is MemberState.UNRELEASED_PARTITIONS and not _waits_for_others(group, member)):
            self._deadline(group, member, "did not rejoin within the rebalance timeout", replace_timer=False)
            return Errors.RebalanceInProgressError.errno
        return NONE

    def leave(self, group: ConsumerGroup, members: list[tuple[str, str | None]]) -> list[int]:
        """One error code per leaving member; the others share the leavers' partitions."""
        results = []
        for member_id, instance_id in members:
            try:
                if instance_id is not None and not member_id:   # an admin removes a static member
                    found = group.static_member(instance_id)
                    member_id = found.member_id if found is not None else ""
                member = self._known(group, member_id, instance_id)
            except ApiError as exc:
                results.append(exc.code)
                continue
            self.protocol.fence(group, member.member_id, "left the group", may_downgrade=False)
            results.append(NONE)
        return results

    def _known(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
        if instance_id is not None:
            member = group.static_member(instance_id)
            if member is None:
                raise ApiError(Errors.UnknownMemberIdError,
                               f"Member with instance id {instance_id} is not a member of group {group.group_id}.")
            if member.member_id != member_id:
                raise ApiError(Errors.FencedInstanceIdError)
        else:
            member = group.members.get(member_id)
        if member is None or not member.uses_classic_protocol:
            raise ApiError(Errors.UnknownMemberIdError,
                           f"Member {member_id} is not a classic member of group {group.group_id}.")
        return member

    # --- deadlines ----------------------------------------------------------------------------
    def _deadline(self, group: ConsumerGroup, member: ConsumerMember, reason: str, *, replace_timer: bool) -> None:
        """Remove the member unless it joins (or syncs) within its rebalance timeout."""
        if member.rebalance_timer is not None:
            if not replace_timer:
                return
            member.rebalance_timer.cancel()
        member.rebalance_timer = asyncio.get_running_loop().call_later(
            member.rebalance_timeout_ms / 1000, self.protocol.expire, group, member.member_id, reason)


def _cancel_deadline(member: ConsumerMember) -> None:
    if member.rebalance_timer is not None:
        member.rebalance_timer.cancel()
        member.rebalance_timer = None


def _check_generation(member: ConsumerMember, generation_id: int) -> None:
    if generation_id != member.member_epoch:
        raise ApiError(Errors.IllegalGenerationError, f"The member {member.member_id} has a generation "
                       f"{generation_id} while the group coordinator expects {member.member_epoch}.")


def _waits_for_others(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """True while a partition of the member's target is still owned by another member."""
    return any(group.owner_of.get(tp) not in (None, member.member_id)
               for tp in group.target.get(member.member_id, frozenset()) - member.assigned)
