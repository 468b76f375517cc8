"""The classic group membership protocol: JoinGroup, SyncGroup, Heartbeat and LeaveGroup
(the rebalance half of Kafka's GroupCoordinator).

A rebalance: a join (or a leave, or a lost member) moves the group to PreparingRebalance.
Every known member must send JoinGroup again within the rebalance timeout (the largest of
the members' `max.poll.interval.ms`); the JoinGroup requests wait, as futures, until all
have rejoined or the timeout passes, and members that did not rejoin are dropped (static
members are kept). Then the generation goes up, a protocol all members support is chosen
by vote, and every waiter gets its answer - the leader also gets all members' metadata.
In CompletingRebalance the members send SyncGroup; the leader's carries the assignment,
which is stored and handed to each waiting member, and the group is Stable. Members that
do not send SyncGroup within the rebalance timeout are removed and the group rebalances.

Timers, all `loop.call_later` handles on the engine's event loop:
- session timeout per member, restarted by every heartbeat, join and sync; members
  awaiting a join or sync response are exempt (the rebalance timeout governs them), except
  new ones, which get 5 minutes (Kafka's NewMemberJoinTimeoutMs) to see their first join out;
- the first rebalance of an Empty group waits `group.initial.rebalance.delay.ms`, extended
  by as much again while new members keep arriving, up to the rebalance timeout;
- members told MEMBER_ID_REQUIRED (JoinGroup v4+, KIP-394) must come back within their
  session timeout.

Static membership (KIP-345): a member with a `group.instance.id` that rejoins under a new
member id takes over its old identity and assignment without a rebalance when the group is
Stable and its protocols still fit; the old member id is fenced (FENCED_INSTANCE_ID).
Zombies are fenced by generation: requests carrying an old generation get
ILLEGAL_GENERATION, unknown member ids UNKNOWN_MEMBER_ID, and heartbeats during a rebalance
REBALANCE_IN_PROGRESS, telling the member to rejoin.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

import kafka.errors as Errors

from engine.clock import now_ms
from engine.coordinator.group import GroupMetadata, GroupState, JoinResult, MemberMetadata, SyncResult
from engine.coordinator.group_store import GroupStore
from engine.errors import ApiError

log = logging.getLogger(__name__)

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
NONE = 0
S = GroupState


class GroupMembership:
    """Runs the protocol for the groups in `store`; `config(name)` reads broker configs."""

    def __init__(self, store: GroupStore, config: Callable[[str], Any]) -> None:
        self.store = store
        self._config = config
        self._writes: set[asyncio.Task] = set()   # group metadata writes that outlive a request

    def _spawn(self, write) -> None:
        task = asyncio.get_running_loop().create_task(write)
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    @property
    def writes_in_flight(self) -> int:
        return len(self._writes)

    def shutdown(self) -> None:
        for task in list(self._writes):
            task.cancel()

    # --- JoinGroup -------------------------------------------------------------------------
    async def join(self, *, group_id: str, member_id: str, group_instance_id: str | None,
                   require_known_member_id: bool, client_id: str, client_host: str, rebalance_timeout_ms: int,
                   session_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]]) -> JoinResult:
        waiter = asyncio.get_running_loop().create_future()
        unknown = member_id == ""
        group = self.store.get(group_id)
        if group is None and not unknown:
            return JoinResult(Errors.UnknownMemberIdError.errno, member_id)
        if group is None:
            group = self.store.add(GroupMetadata(group_id, now_ms()))
        joining = dict(client_id=client_id, client_host=client_host, rebalance_timeout_ms=rebalance_timeout_ms,
                       session_timeout_ms=session_timeout_ms, protocol_type=protocol_type, protocols=protocols)
        if (unknown or member_id not in group.members) and member_id not in group.pending_members \
                and len(group.members) >= self._config("group.max.size"):
            return JoinResult(Errors.GroupMaxSizeReachedError.errno, member_id)
        if unknown:
            self._join_new_member(group, waiter, group_instance_id, require_known_member_id, joining)
        else:
            self._join_known_member(group, waiter, member_id, group_instance_id, joining)
        if group.is_(S.PREPARING_REBALANCE):
            self._try_complete_join(group)
        return await waiter

    def _join_new_member(self, group: GroupMetadata, waiter: asyncio.Future, group_instance_id: str | None,
                         require_known_member_id: bool, joining: dict) -> None:
        if group.is_(S.DEAD):
            return waiter.set_result(JoinResult(Errors.CoordinatorNotAvailableError.errno, ""))
        if not group.supports_protocols(joining["protocol_type"], [n for n, _ in joining["protocols"]]):
            return waiter.set_result(JoinResult(Errors.InconsistentGroupProtocolError.errno, ""))
        new_id = group.new_member_id(joining["client_id"], group_instance_id)
        if group_instance_id is not None:
            old_id = group.static_member_id(group_instance_id)
            if old_id is not None:
                return self._replace_static_member(group, waiter, group_instance_id, old_id, new_id, joining)
        elif require_known_member_id:
            timeout = joining["session_timeout_ms"] / 1000
            group.pending_members[new_id] = asyncio.get_running_loop().call_later(
                timeout, self._expire_pending_member, group, new_id)
            return waiter.set_result(JoinResult(Errors.MemberIdRequiredError.errno, new_id))
        self._add_member_and_rebalance(group, waiter, new_id, group_instance_id, joining)

    def _join_known_member(self, group: GroupMetadata, waiter: asyncio.Future, member_id: str,
                           group_instance_id: str | None, joining: dict) -> None:
        def fail(error) -> None:
            waiter.set_result(JoinResult(error.errno, member_id))
        if group.is_(S.DEAD):
            return fail(Errors.CoordinatorNotAvailableError)
        if not group.supports_protocols(joining["protocol_type"], [n for n, _ in joining["protocols"]]):
            return fail(Errors.InconsistentGroupProtocolError)
        if member_id in group.pending_members:
            if group_instance_id is not None:
                return fail(Errors.UnknownMemberIdError)
            group.pending_members.pop(member_id).cancel()
            return self._add_member_and_rebalance(group, waiter, member_id, None, joining)
        if group.is_static_member_fenced(member_id, group_instance_id):
            return fail(Errors.FencedInstanceIdError)
        member = group.members.get(member_id)
        if member is None or (group_instance_id is not None and group.static_member_id(group_instance_id) is None):
            return fail(Errors.UnknownMemberIdError)
        protocols = joining["protocols"]
        if group.is_(S.PREPARING_REBALANCE):
            self._update_member_and_rebalance(group, waiter, member, joining)
        elif group.is_(S.COMPLETING_REBALANCE):
            if member.matches(protocols):  # a retry of a join whose answer was lost
                waiter.set_result(self._current_generation(group, member_id, with_members=group.is_leader(member_id)))
            else:
                self._update_member_and_rebalance(group, waiter, member, joining)
        elif group.is_(S.STABLE):
            # The leader's rejoin forces a rebalance: it may have seen metadata change.
            if group.is_leader(member_id) or not member.matches(protocols):
                self._update_member_and_rebalance(group, waiter, member, joining)
            else:
                waiter.set_result(self._current_generation(group, member_id, with_members=False))
        else:
            fail(Errors.UnknownMemberIdError)

    def _current_generation(self, group: GroupMetadata, member_id: str, *, with_members: bool,
                            leader_id: str | None = None) -> JoinResult:
        return JoinResult(NONE, member_id, group.generation_id, group.protocol_type, group.protocol_name,
                          leader_id if leader_id is not None else group.leader_id or "",
                          group.current_member_metadata() if with_members else [])

    def _add_member_and_rebalance(self, group: GroupMetadata, waiter: asyncio.Future, member_id: str,
                                  group_instance_id: str | None, joining: dict) -> None:
        member = MemberMetadata(member_id, group_instance_id, is_new=True, join_waiter=waiter, **joining)
        if group.is_(S.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member)
        # A new member cannot heartbeat before its first join answer; if that never comes
        # (the client went away), it is dropped after this long.
        self.schedule_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(group, f"new member {member_id} joined")

    def _update_member_and_rebalance(self, group: GroupMetadata, waiter: asyncio.Future, member: MemberMetadata,
                                     joining: dict) -> None:
        if member.join_waiter is not None:  # a second join while one waits (e.g. another connection)
            member.complete_join(JoinResult(Errors.RebalanceInProgressError.errno, member.member_id))
        member.protocols = joining["protocols"]
        member.rebalance_timeout_ms = joining["rebalance_timeout_ms"]
        member.session_timeout_ms = joining["session_timeout_ms"]
        member.join_waiter = waiter
        self._maybe_prepare_rebalance(group, f"member {member.member_id} rejoined")

    def _replace_static_member(self, group: GroupMetadata, waiter: asyncio.Future, instance_id: str,
                               old_id: str, new_id: str, joining: dict) -> None:
        log.info("Static member %s of group %s rejoined as %s", instance_id, group.group_id, new_id)
        member = group.members[old_id]
        member.complete_join(JoinResult(Errors.FencedInstanceIdError.errno, old_id))  # the old instance's
        member.complete_sync(SyncResult(Errors.FencedInstanceIdError.errno))          # requests, if any
        leader_before = group.leader_id
        old_protocols = member.protocols
        group.replace_static_member(instance_id, old_id, new_id)
        member.protocols = joining["protocols"]
        member.rebalance_timeout_ms = joining["rebalance_timeout_ms"]
        member.session_timeout_ms = joining["session_timeout_ms"]
        member.client_id, member.client_host = joining["client_id"], joining["client_host"]
        self.schedule_heartbeat(group, member, member.session_timeout_ms)
        member.join_waiter = waiter
        if group.is_(S.STABLE):
            if group.protocol_name != group.select_protocol():
                return self._prepare_rebalance(group, f"static member {instance_id} changed protocols")
            self._spawn(self._persist_static_member(group, member, waiter, instance_id, old_id, old_protocols,
                                                    leader_before or ""))
        elif group.is_(S.COMPLETING_REBALANCE):
            # The leader may be assigning to the old member id: start over.
            self._prepare_rebalance(group, f"static member {instance_id} rejoined during a rebalance")

    async def _persist_static_member(self, group: GroupMetadata, member: MemberMetadata, waiter: asyncio.Future,
                                     instance_id: str, old_id: str, old_protocols, leader_before: str) -> None:
        new_id = member.member_id
        try:
            await self.store.store_group(group, now_ms())  # the new member id must survive a restart
        except ApiError as exc:
            if member.join_waiter is waiter and group.members.get(new_id) is member:
                group.replace_static_member(instance_id, new_id, old_id)
                member.protocols = old_protocols
                member.complete_join(JoinResult(exc.code, ""))
            return
        if member.join_waiter is waiter and group.is_(S.STABLE):
            # The old leader id goes back, so a restarted leader does not assign needlessly:
            # a Stable group would not hand a new assignment out anyway.
            member.complete_join(self._current_generation(group, new_id, with_members=False, leader_id=leader_before))

    # --- rebalance ----------------------------------------------------------------------------
    def rebalance(self, group: GroupMetadata, reason: str) -> None:
        """Start a rebalance of a group that got its members another way (an online downgrade)."""
        self._maybe_prepare_rebalance(group, reason)

    def _maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.is_(S.COMPLETING_REBALANCE):
            self._propagate_assignment_error(group, Errors.RebalanceInProgressError.errno)
        _cancel(group, "sync_timer")
        group.pending_sync.clear()
        initial = group.is_(S.EMPTY)
        log.info("Preparing to rebalance group %s in state %s with old generation %d: %s",
                 group.group_id, group.state.value, group.generation_id, reason)
        group.transition_to(S.PREPARING_REBALANCE, now_ms())
        _cancel(group, "join_timer")
        loop = asyncio.get_running_loop()
        if initial:
            delay = self._config("group.initial.rebalance.delay.ms")
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            group.in_initial_delay = True
            group.join_timer = loop.call_later(delay / 1000, self._initial_delay_over, group, remaining)
        else:
            group.in_initial_delay = False
            group.join_timer = loop.call_later(group.rebalance_timeout_ms() / 1000, self._complete_join, group)
            self._try_complete_join(group)

    def _initial_delay_over(self, group: GroupMetadata, remaining: int) -> None:
        if group.new_member_added and remaining > 0:
            group.new_member_added = False
            delay = min(self._config("group.initial.rebalance.delay.ms"), remaining)
            group.join_timer = asyncio.get_running_loop().call_later(
                delay / 1000, self._initial_delay_over, group, max(remaining - delay, 0))
            return
        group.in_initial_delay = False
        self._complete_join(group)

    def _try_complete_join(self, group: GroupMetadata) -> None:
        if group.is_(S.PREPARING_REBALANCE) and not group.in_initial_delay and group.has_all_members_joined():
            self._complete_join(group)

    def _complete_join(self, group: GroupMetadata) -> None:
        _cancel(group, "join_timer")
        group.in_initial_delay = False
        if not group.is_(S.PREPARING_REBALANCE):
            return
        for member in group.not_yet_rejoined():
            if not member.is_static:
                self._drop(group, member)
        if group.members and not group.elect_joined_leader():
            # Only static members that have not rejoined are left: give them another round.
            group.join_timer = asyncio.get_running_loop().call_later(
                group.rebalance_timeout_ms() / 1000, self._complete_join, group)
            return
        group.init_next_generation(now_ms())
        if group.is_(S.EMPTY):
            log.info("Group %s with generation %d is now empty", group.group_id, group.generation_id)
            self._spawn(self._store_quietly(group))
            return
        log.info("Stabilized group %s generation %d (%s) with %d members", group.group_id, group.generation_id,
                 group.protocol_name, len(group.members))
        for member in group.members.values():
            member.complete_join(self._current_generation(group, member.member_id,
                                                          with_members=group.is_leader(member.member_id)))
            member.is_new = False
            self.schedule_heartbeat(group, member, member.session_timeout_ms)
        group.pending_sync = set(group.members)
        group.sync_timer = asyncio.get_running_loop().call_later(
            group.rebalance_timeout_ms() / 1000, self._expire_pending_sync, group, group.generation_id)

    def _expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        group.sync_timer = None
        if generation_id != group.generation_id or not group.is_(S.COMPLETING_REBALANCE, S.STABLE):
            return
        if group.pending_sync:
            missing = sorted(group.pending_sync)
            for member_id in missing:
                member = group.members.get(member_id)
                if member is not None:
                    self._drop(group, member)
            self._prepare_rebalance(group, f"members {missing} sent no SyncGroup in time")

    async def _store_quietly(self, group: GroupMetadata) -> None:
        try:
            await self.store.store_group(group, now_ms())
        except ApiError as exc:
            log.warning("Failed to write metadata of group %s: %s", group.group_id, exc)

    def _propagate_assignment_error(self, group: GroupMetadata, error: int) -> None:
        for member in group.members.values():
            member.assignment = b""
            member.complete_sync(SyncResult(error))

    # --- SyncGroup ---------------------------------------------------------------------------
    async def sync(self, *, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None,
                   protocol_type: str | None, protocol_name: str | None, assignments: dict[str, bytes]) -> SyncResult:
        group = self.store.get(group_id)
        error = self._check_member(group, member_id, group_instance_id, generation_id)
        if error:
            return SyncResult(error)
        if (protocol_type is not None and protocol_type != group.protocol_type) or \
                (protocol_name is not None and protocol_name != group.protocol_name):
            return SyncResult(Errors.InconsistentGroupProtocolError.errno)
        member = group.members[member_id]
        if group.is_(S.PREPARING_REBALANCE):
            return SyncResult(Errors.RebalanceInProgressError.errno)
        group.pending_sync.discard(member_id)
        self.schedule_heartbeat(group, member, member.session_timeout_ms)
        if group.is_(S.STABLE):
            return SyncResult(NONE, member.assignment, group.protocol_type, group.protocol_name)
        waiter = asyncio.get_running_loop().create_future()
        member.complete_sync(SyncResult(Errors.RebalanceInProgressError.errno))  # a superseded sync
        member.sync_waiter = waiter
        if group.is_leader(member_id):
            # A task, so the assignment is stored and handed out even if the leader goes away.
            self._spawn(self._assign(group, group.generation_id, assignments))
        return await waiter

    async def _assign(self, group: GroupMetadata, generation_id: int, assignments: dict[str, bytes]) -> None:
        for member_id, member in group.members.items():
            member.assignment = assignments.get(member_id, b"")
        try:
            await self.store.store_group(group, now_ms())
        except ApiError as exc:
            if group.is_(S.COMPLETING_REBALANCE) and group.generation_id == generation_id:
                self._propagate_assignment_error(group, exc.code)
                self._maybe_prepare_rebalance(group, f"storing the assignment failed: {exc}")
            return
        if not (group.is_(S.COMPLETING_REBALANCE) and group.generation_id == generation_id):
            return  # a rebalance began meanwhile and answered the waiters itself
        for member in group.members.values():
            member.complete_sync(SyncResult(NONE, member.assignment, group.protocol_type, group.protocol_name))
            self.schedule_heartbeat(group, member, member.session_timeout_ms)
        group.transition_to(S.STABLE, now_ms())

    # --- Heartbeat and LeaveGroup -------------------------------------------------------------
    def heartbeat(self, *, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int) -> int:
        group = self.store.get(group_id)
        error = self._check_member(group, member_id, group_instance_id, generation_id)
        if error:
            return error
        member = group.members[member_id]
        self.schedule_heartbeat(group, member, member.session_timeout_ms)
        return Errors.RebalanceInProgressError.errno if group.is_(S.PREPARING_REBALANCE) else NONE

    def _check_member(self, group: GroupMetadata | None, member_id: str, group_instance_id: str | None,
                      generation_id: int) -> int:
        if group is None or group.is_(S.EMPTY):
            return Errors.UnknownMemberIdError.errno
        if group.is_(S.DEAD):
            return Errors.CoordinatorNotAvailableError.errno
        if group.is_static_member_fenced(member_id, group_instance_id):
            return Errors.FencedInstanceIdError.errno
        if member_id not in group.members:
            return Errors.UnknownMemberIdError.errno
        if generation_id != group.generation_id:
            return Errors.IllegalGenerationError.errno
        return NONE

    def leave(self, group_id: str, members: list[tuple[str, str | None]]) -> tuple[int, list[int]]:
        """(group-level error, one error per leaving member)."""
        group = self.store.get(group_id)
        if group is None:
            return NONE, [Errors.UnknownMemberIdError.errno] * len(members)
        if group.is_(S.DEAD):
            return Errors.CoordinatorNotAvailableError.errno, []
        return NONE, [self._leave_one(group, member_id, instance_id) for member_id, instance_id in members]

    def _leave_one(self, group: GroupMetadata, member_id: str, group_instance_id: str | None) -> int:
        if member_id == "" and group_instance_id is not None:
            member_id = group.static_member_id(group_instance_id) or ""
        elif group.is_static_member_fenced(member_id, group_instance_id):
            return Errors.FencedInstanceIdError.errno
        if member_id in group.pending_members:
            group.pending_members.pop(member_id).cancel()
            self._try_complete_join(group)
            return NONE
        member = group.members.get(member_id)
        if member is None:
            return Errors.UnknownMemberIdError.errno
        self.remove_member(group, member, "left the group")
        return NONE

    # --- members ----------------------------------------------------------------------------
    def schedule_heartbeat(self, group: GroupMetadata, member: MemberMetadata, timeout_ms: int) -> None:
        member.cancel_heartbeat()
        member.heartbeat_timer = asyncio.get_running_loop().call_later(
            timeout_ms / 1000, self._heartbeat_expired, group, member)

    def _heartbeat_expired(self, group: GroupMetadata, member: MemberMetadata) -> None:
        member.heartbeat_timer = None
        if group.members.get(member.member_id) is not member:
            return
        if not member.is_new and (member.is_awaiting_join or member.is_awaiting_sync):
            return  # in a rebalance: the rebalance timeout decides
        self.remove_member(group, member, "session timeout expired")

    def _expire_pending_member(self, group: GroupMetadata, member_id: str) -> None:
        if group.pending_members.pop(member_id, None) is not None:
            self._try_complete_join(group)

    def remove_member(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        log.info("Member %s of group %s removed: %s", member.member_id, group.group_id, reason)
        self._drop(group, member)
        if group.is_(S.STABLE, S.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, f"member {member.member_id} {reason}")
        elif group.is_(S.PREPARING_REBALANCE):
            self._try_complete_join(group)

    def _drop(self, group: GroupMetadata, member: MemberMetadata) -> None:
        member.complete_join(JoinResult(Errors.UnknownMemberIdError.errno, member.member_id))
        member.complete_sync(SyncResult(Errors.UnknownMemberIdError.errno))
        member.cancel_heartbeat()
        group.remove(member.member_id)

    def unloaded(self, group: GroupMetadata) -> None:
        """The broker no longer coordinates this group: answer its waiters, stop its timers."""
        group.cancel_timers()
        for member in group.members.values():
            member.complete_join(JoinResult(Errors.NotCoordinatorError.errno, member.member_id))
            member.complete_sync(SyncResult(Errors.NotCoordinatorError.errno))
        group.state = S.DEAD


def _cancel(group: GroupMetadata, name: str) -> None:
    timer = getattr(group, name)
    if timer is not None:
        timer.cancel()
        setattr(group, name, None)
