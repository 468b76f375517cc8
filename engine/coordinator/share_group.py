"""A share group (KIP-932): members, epochs, the assignment, and the share partitions whose
state the share coordinator holds (Kafka's ShareGroup and ShareGroupMember).

A share group is a queue over its topics: several members may be assigned the same
partition, and the share partitions (engine/share/) hand each record to one member at a
time. So, unlike a consumer group, there is no revocation step: a member gets its target
assignment at once, and its member epoch is the group's assignment epoch.

- The group epoch goes up when what the assignor sees changes: a member joins or leaves, a
  subscription changes, a subscribed topic's partition count changes.
- The target assignment is the simple assignor's answer for a group epoch (`assignment_epoch`).
- `initialized` names the share partitions the share coordinator has state for (Kafka's
  ShareGroupStatePartitionMetadata): DescribeShareGroupOffsets and DeleteShareGroupOffsets
  work on them.

States (Kafka's ShareGroupState): Empty (no members), Stable, Dead. For the classic code paths
that see every group it is a GroupMetadata whose `state` is EMPTY without members and STABLE
with them. It holds no committed offsets: a share group's progress is its share partitions'
state in `__share_group_state`. Everything runs on the engine's event loop.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from engine.coordinator.group import GroupMetadata, GroupState

TopicPartition = tuple[str, int]
GROUP_TYPE_SHARE = "share"
SHARE_PROTOCOL_TYPE = "share"
LEAVE_GROUP_MEMBER_EPOCH = -1


@dataclass
class ShareMember:
    member_id: str
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topics: frozenset[str] = frozenset()
    member_epoch: int = 0
    previous_member_epoch: int = -1
    assigned: frozenset[TopicPartition] = frozenset()
    # Timers are not state: a member whose heartbeat only restarted one has not changed.
    session_timer: asyncio.TimerHandle | None = field(default=None, repr=False, compare=False)

    def cancel_timers(self) -> None:
        if self.session_timer is not None:
            self.session_timer.cancel()
            self.session_timer = None

    # Classic code paths call this on every member of a group they unload or delete.
    cancel_heartbeat = cancel_timers


class ShareGroup(GroupMetadata):
    group_type = GROUP_TYPE_SHARE

    def __init__(self, group_id: str, now_ms: int) -> None:
        super().__init__(group_id, now_ms)
        self.protocol_type = SHARE_PROTOCOL_TYPE
        self.members: dict[str, ShareMember] = {}          # type: ignore[assignment]
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.target: dict[str, frozenset[TopicPartition]] = {}
        self.subscription_metadata: dict[str, tuple[object, int]] = {}   # topic -> (topic id, partitions)
        # topic -> (topic id, partitions with state at the share coordinator)
        self.initialized: dict[str, tuple[object, frozenset[int]]] = {}
        self.assignor_name = "simple"
        # Its records as last appended to __consumer_offsets (share_group_records.py).
        self.written: dict[bytes, bytes] = {}
        self.written_ok = True

    def __repr__(self) -> str:
        return f"ShareGroup({self.group_id!r}, {self.share_state}, epoch={self.group_epoch}, members={list(self.members)})"

    @property
    def share_state(self) -> str:
        """Kafka's ShareGroupState name: Empty, Stable or Dead."""
        if self.state is GroupState.DEAD:
            return "Dead"
        return "Stable" if self.members else "Empty"

    def put_member(self, member: ShareMember, now_ms: int) -> None:
        self.members[member.member_id] = member
        self._classic_state(now_ms)

    def remove_member(self, member_id: str, now_ms: int) -> ShareMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        member.cancel_timers()
        self.target.pop(member_id, None)
        self._classic_state(now_ms)
        return member

    def _classic_state(self, now_ms: int) -> None:
        if self.state is GroupState.DEAD:
            return
        state = GroupState.STABLE if self.members else GroupState.EMPTY
        if state is not self.state:
            self.state, self.state_timestamp = state, now_ms

    def subscribed_topics(self) -> set[str] | None:
        return {topic for member in self.members.values() for topic in member.subscribed_topics}

    def initialized_partitions(self) -> set[TopicPartition]:
        return {(topic, p) for topic, (_, partitions) in self.initialized.items() for p in partitions}

    def cancel_timers(self) -> None:
        for member in self.members.values():
            member.cancel_timers()
