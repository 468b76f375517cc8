"""Moving one member of a consumer group towards its target assignment (KIP-848; Kafka's
CurrentAssignmentBuilder), one heartbeat at a time.

- STABLE at an older epoch: compute the next step towards the target.
- UNREVOKED_PARTITIONS: wait until the member's heartbeat no longer lists any partition it
  must give up (a heartbeat without a partition list changes nothing), then move on with the
  member epoch one higher.
- UNRELEASED_PARTITIONS: take whatever the other members have released meanwhile.

A step: partitions kept = owned ∩ target; to revoke = owned - target; to assign = target -
owned, minus those another member still owns. If anything is to be revoked, the member stays
at its epoch and is told to revoke (its answer lists only the kept partitions). Otherwise it
moves to the target epoch with the kept and the free new partitions, STABLE, or
UNRELEASED_PARTITIONS while some of its target is still owned elsewhere.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from engine.coordinator.consumer_group import ConsumerMember, MemberState, TopicPartition


def reconcile(member: ConsumerMember, target_epoch: int, target: frozenset[TopicPartition],
              owner_of: Callable[[TopicPartition], str | None],
              owned_in_request: frozenset[TopicPartition] | None) -> ConsumerMember:
    """The member after this heartbeat: the same object if nothing changed, else a copy."""
    if member.state is MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _next_step(member, member.member_epoch, target_epoch, target, owner_of, owned_in_request)
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owned_in_request is None or owned_in_request & member.pending_revocation:
            return member
        return _next_step(member, member.member_epoch + 1, target_epoch, target, owner_of, owned_in_request)
    return _next_step(member, member.member_epoch, target_epoch, target, owner_of, owned_in_request)


def _next_step(member: ConsumerMember, member_epoch: int, target_epoch: int, target: frozenset[TopicPartition],
               owner_of, owned_in_request) -> ConsumerMember:
    kept = member.assigned & target
    revoke = member.assigned - target
    wanted = target - kept
    free = frozenset(tp for tp in wanted if owner_of(tp) in (None, member.member_id))
    unreleased = bool(wanted - free)
    # A member whose heartbeat shows it gave the partitions up already need not be asked.
    still_holds = owned_in_request is None or bool(owned_in_request & revoke)
    if revoke and still_holds:
        return _moved(member, member_epoch, MemberState.UNREVOKED_PARTITIONS, kept, revoke)
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return _moved(member, target_epoch, state, kept | free, frozenset())


def _moved(member: ConsumerMember, epoch: int, state: MemberState, assigned: frozenset[TopicPartition],
           pending_revocation: frozenset[TopicPartition]) -> ConsumerMember:
    previous = member.member_epoch if epoch != member.member_epoch else member.previous_member_epoch
    return replace(member, member_epoch=epoch, previous_member_epoch=previous, state=state, assigned=assigned,
                   pending_revocation=pending_revocation)
