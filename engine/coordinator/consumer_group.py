"""A consumer group of the new consumer protocol (KIP-848): members, epochs and assignments
(Kafka's ConsumerGroup and ConsumerGroupMember).

- The group epoch goes up whenever what the assignor sees changes: a member joins or
  leaves, a subscription or the server assignor changes, a subscribed topic's partitions
  change (or the topic is created, deleted or re-created under a new id).
- The target assignment is the assignor's answer for a group epoch (`assignment_epoch`).
- Each member has a member epoch and its current assignment: the partitions it may use
  (`assigned`) and those it must give up first (`pending_revocation`). A partition is owned
  by at most one member at a time, across both sets (`owner_of`); a member reaches its
  target only as partitions are released (reconciliation.py).

States (Kafka's ConsumerGroupState): Empty (no members), Assigning (the group epoch is ahead
of the target assignment), Reconciling (some member is not at the target yet), Stable.

For the classic code paths that see every group (offset expiry, DeleteGroups, OffsetDelete)
it is a GroupMetadata whose classic `state` is EMPTY without members and STABLE with them;
its committed offsets live in `offsets` as a classic group's do. Everything runs on the
engine's event loop, which owns every group.
"""
from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import Callable

from engine.coordinator.group import CONSUMER_PROTOCOL_TYPE, GroupMetadata, GroupState

TopicPartition = tuple[str, int]
GROUP_TYPE_CONSUMER = "consumer"
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


@dataclass(frozen=True)
class ClassicMemberMetadata:
    """What a member of the classic protocol brought to a consumer group (KIP-848's online
    upgrade): its session timeout and its JoinGroup protocols, (name, metadata) in its order."""
    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]


class MemberState(enum.Enum):
    STABLE = "stable"                                 # at the target epoch, owns its target
    UNREVOKED_PARTITIONS = "unrevoked_partitions"     # must give partitions up first
    UNRELEASED_PARTITIONS = "unreleased_partitions"   # at the target epoch, waits for others


@dataclass
class ConsumerMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    subscribed_topics: frozenset[str] = frozenset()
    subscribed_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: frozenset[TopicPartition] = frozenset()
    pending_revocation: frozenset[TopicPartition] = frozenset()
    classic: ClassicMemberMetadata | None = None      # set for a member of the classic protocol
    # With an authorizer, the topics among those its regex matches that the member's principal may
    # describe (a TopicFilter of consumer_protocol.py); not stored in records: None after a load.
    regex_filter: Callable[[frozenset[str]], frozenset[str]] | None = field(default=None, repr=False, compare=False)
    # Timers are not state: a member whose heartbeat only restarted them has not changed.
    session_timer: asyncio.TimerHandle | None = field(default=None, repr=False, compare=False)
    # The rebalance timeout: a revocation's deadline, or a classic member's to join or sync.
    rebalance_timer: asyncio.TimerHandle | None = field(default=None, repr=False, compare=False)

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def owns(self) -> frozenset[TopicPartition]:
        return self.assigned | self.pending_revocation

    def cancel_timers(self) -> None:
        for name in ("session_timer", "rebalance_timer"):
            timer = getattr(self, name)
            if timer is not None:
                timer.cancel()
                setattr(self, name, None)

    # Classic code paths call this on every member of a group they unload or delete.
    cancel_heartbeat = cancel_timers


class ConsumerGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class ConsumerGroup(GroupMetadata):
    group_type = GROUP_TYPE_CONSUMER

    def __init__(self, group_id: str, now_ms: int) -> None:
        super().__init__(group_id, now_ms)
        self.protocol_type = CONSUMER_PROTOCOL_TYPE
        self.members: dict[str, ConsumerMember] = {}      # type: ignore[assignment]
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.target: dict[str, frozenset[TopicPartition]] = {}
        # topic -> (topic id, partition count) of every subscribed topic, as last assigned
        self.subscription_metadata: dict[str, tuple[object, int]] = {}
        self.owner_of: dict[TopicPartition, str] = {}
        self.assignor_name = ""                           # of the current target assignment
        # Its records as last appended to __consumer_offsets (consumer_group_records.py), and
        # whether that write succeeded (else the next heartbeat writes again, changed or not).
        self.written: dict[bytes, bytes] = {}
        self.written_ok = True

    def __repr__(self) -> str:
        return (f"ConsumerGroup({self.group_id!r}, {self.consumer_state.value}, epoch={self.group_epoch}, "
                f"members={list(self.members)})")

    @property
    def consumer_state(self) -> ConsumerGroupState:
        if self.state is GroupState.DEAD:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(m.member_epoch != self.assignment_epoch or m.state is not MemberState.STABLE
               for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    # --- members ----------------------------------------------------------------------------
    def put_member(self, member: ConsumerMember, now_ms: int) -> None:
        """Add or update a member, keeping partition ownership and the classic state in step."""
        old = self.members.get(member.member_id)
        if old is not None:
            self._release(old)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for tp in member.owns():
            self.owner_of[tp] = member.member_id
        self._classic_state(now_ms)

    def remove_member(self, member_id: str, now_ms: int) -> ConsumerMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        member.cancel_timers()
        self._release(member)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]
        self.target.pop(member_id, None)
        self._classic_state(now_ms)
        return member

    def _release(self, member: ConsumerMember) -> None:
        for tp in member.owns():
            if self.owner_of.get(tp) == member.member_id:
                del self.owner_of[tp]

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def _classic_state(self, now_ms: int) -> None:
        if self.state is GroupState.DEAD:
            return
        state = GroupState.STABLE if self.members else GroupState.EMPTY
        if state is not self.state:  # offset expiry counts from when the group became empty
            self.state, self.state_timestamp = state, now_ms

    # --- subscriptions ----------------------------------------------------------------------
    def subscribed_topics(self) -> set[str] | None:
        """Topics named by the members, and those their regexes matched at the last heartbeat."""
        named = {topic for member in self.members.values() for topic in member.subscribed_topics}
        return named | set(self.subscription_metadata)

    def preferred_assignor(self, default: str) -> str:
        """The server assignor most members ask for (ties: the default first, then by name)."""
        votes: dict[str, int] = {}
        for member in self.members.values():
            if member.server_assignor:
                votes[member.server_assignor] = votes.get(member.server_assignor, 0) + 1
        if not votes:
            return default
        return max(sorted(votes), key=lambda name: (votes[name], name == default))

    def cancel_timers(self) -> None:
        for member in self.members.values():
            member.cancel_timers()

    # --- members of the classic protocol (KIP-848's online upgrade) ---------------------------
    def classic_members(self) -> list[ConsumerMember]:
        return [m for m in self.members.values() if m.uses_classic_protocol]

    def all_classic_except(self, member_id: str) -> bool:
        """True if every member other than `member_id` speaks the classic protocol."""
        return all(m.uses_classic_protocol for m in self.members.values() if m.member_id != member_id)

    def supports_classic_protocols(self, protocol_type: str, names: list[str]) -> bool:
        """A classic member may join when it speaks the consumer protocol type and shares a
        protocol with every classic member already in (Kafka's supportsClassicProtocols)."""
        if protocol_type != CONSUMER_PROTOCOL_TYPE or not names:
            return False
        classic = self.classic_members()
        return not classic or any(all(name in m.classic.protocol_names() for m in classic) for name in names)
