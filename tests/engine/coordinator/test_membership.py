"""The rebalance state machine, driven directly: delays, timeouts, static members, fencing.

The coordinator's timers are `loop.call_later` handles, and every scenario runs on an event
loop on virtual time (tests/support/virtual_time.py): the clock jumps to the next timer when
nothing else can run, so a 60 ms session against 10 ms heartbeats expires in the same order on
an idle machine and under full CPU load. The tests wait for effects with bounded polls and
never assert how long anything took.
"""
from __future__ import annotations

import asyncio

import kafka.errors as Errors
import pytest

from engine.coordinator.group import GroupState
from engine.errors import ApiError
from tests.support.virtual_time import run_in_virtual_time

NONE = 0
SUBSCRIPTION = [("range", b"sub")]


def join(coordinator, member_id="", *, group="g", instance=None, session=10_000, rebalance=10_000,
         protocol_type="consumer", protocols=None, client_id="client", require_known=False):
    return coordinator.join_group(
        group_id=group, member_id=member_id, group_instance_id=instance, require_known_member_id=require_known,
        client_id=client_id, client_host="/127.0.0.1", rebalance_timeout_ms=rebalance, session_timeout_ms=session,
        protocol_type=protocol_type, protocols=protocols or SUBSCRIPTION)


def sync(coordinator, member_id, generation, assignments=None, group="g", instance=None):
    return coordinator.sync_group(group_id=group, generation_id=generation, member_id=member_id,
                                  group_instance_id=instance, protocol_type=None, protocol_name=None,
                                  assignments=assignments or {})


def heartbeat(coordinator, member_id, generation, group="g", instance=None):
    return coordinator.heartbeat(group_id=group, member_id=member_id, group_instance_id=instance,
                                 generation_id=generation)


async def eventually(condition, timeout=30.0):     # a bound for a hung coordinator
    async def poll():
        while not condition():
            await asyncio.sleep(0.005)
    await asyncio.wait_for(poll(), timeout)


async def stable_pair(coordinator, **join_options):
    """Two members joined and synced: (leader id, follower id, generation)."""
    a, b = await asyncio.gather(join(coordinator, **join_options), join(coordinator, **join_options))
    assert a.error == b.error == NONE and a.generation_id == b.generation_id == 1
    leader, follower = (a, b) if a.leader_id == a.member_id else (b, a)
    synced = await asyncio.gather(
        sync(coordinator, leader.member_id, 1, {leader.member_id: b"A", follower.member_id: b"B"}),
        sync(coordinator, follower.member_id, 1))
    assert [s.assignment for s in synced] == [b"A", b"B"]
    return leader.member_id, follower.member_id, 1


def test_the_initial_delay_gathers_members_into_one_generation(make_coordinator):
    async def scenario():
        coordinator = make_coordinator({"group.initial.rebalance.delay.ms": "50"})
        results = await asyncio.gather(*(join(coordinator, client_id=f"c{i}") for i in range(3)))
        assert {r.generation_id for r in results} == {1} and {r.error for r in results} == {NONE}
        leader = next(r for r in results if r.member_id == r.leader_id)
        assert sorted(m for m, _, _ in leader.members) == sorted(r.member_id for r in results)
        assert all(r.members == [] for r in results if r is not leader)
        assert all(r.member_id.startswith(f"c{i}-") for i, r in enumerate(results))
    run_in_virtual_time(scenario())


def test_member_id_required_then_a_pending_member_expires(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        first = await join(coordinator, require_known=True, session=30)
        assert first.error == Errors.MemberIdRequiredError.errno and first.member_id
        group = coordinator.store.get("g")
        assert first.member_id in group.pending_members
        await eventually(lambda: not group.pending_members)  # never came back within its session
        late = await join(coordinator, first.member_id, require_known=True)
        assert late.error == Errors.UnknownMemberIdError.errno
    run_in_virtual_time(scenario())


def test_a_silent_member_is_removed_after_its_session_timeout(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        a, b, generation = await stable_pair(coordinator, session=60)
        errors = []
        while not errors or errors[-1] == NONE:  # only a keeps heartbeating
            errors.append(heartbeat(coordinator, a, generation))
            await asyncio.sleep(0.01)
        assert errors[-1] == Errors.RebalanceInProgressError.errno
        rejoined = await join(coordinator, a, session=60)
        assert rejoined.generation_id == generation + 1 and [m for m, _, _ in rejoined.members] == [a]
        assert heartbeat(coordinator, b, generation) == Errors.UnknownMemberIdError.errno
    run_in_virtual_time(scenario())


def test_members_that_do_not_rejoin_within_the_rebalance_timeout_are_dropped(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        a, b, generation = await stable_pair(coordinator, rebalance=80)
        newcomer = asyncio.ensure_future(join(coordinator, rebalance=80))
        await eventually(lambda: coordinator.store.get("g").is_(GroupState.PREPARING_REBALANCE))
        rejoined_a, joined_c = await asyncio.gather(join(coordinator, a, rebalance=80), newcomer)  # b never does
        assert rejoined_a.generation_id == joined_c.generation_id == generation + 1
        assert sorted(m for m, _, _ in rejoined_a.members) == sorted([a, joined_c.member_id])
        assert b not in coordinator.store.get("g").members
    run_in_virtual_time(scenario())


def test_members_that_do_not_sync_in_time_are_removed(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        a, b = await asyncio.gather(join(coordinator, rebalance=80), join(coordinator, rebalance=80))
        leader = a if a.leader_id == a.member_id else b
        follower = b if leader is a else a
        synced = await sync(coordinator, leader.member_id, 1, {leader.member_id: b"L", follower.member_id: b"F"})
        assert synced.assignment == b"L"
        group = coordinator.store.get("g")
        await eventually(lambda: follower.member_id not in group.members)  # it never sent SyncGroup
        assert heartbeat(coordinator, leader.member_id, 1) == Errors.RebalanceInProgressError.errno
    run_in_virtual_time(scenario())


def test_a_static_member_restart_keeps_its_assignment_and_fences_its_old_id(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        a, b, generation = await stable_pair(coordinator, instance=None)
        # A new static member joins; the others rejoin in the rebalance that causes.
        static, leader_a, follower_b = await asyncio.gather(
            join(coordinator, instance="instance-s"), join(coordinator, a), join(coordinator, b))
        generation = static.generation_id
        assert leader_a.generation_id == follower_b.generation_id == generation == 2
        assert leader_a.leader_id == a
        assignments = {a: b"A", b: b"B", static.member_id: b"S"}
        await asyncio.gather(sync(coordinator, a, generation, assignments), sync(coordinator, b, generation),
                             sync(coordinator, static.member_id, generation, instance="instance-s"))
        restarted = await join(coordinator, instance="instance-s")  # no member id: a restarted instance
        assert restarted.error == NONE and restarted.generation_id == generation  # no rebalance
        assert restarted.member_id != static.member_id and restarted.leader_id == a
        assert coordinator.store.get("g").is_(GroupState.STABLE)
        again = await sync(coordinator, restarted.member_id, generation, instance="instance-s")
        assert again.assignment == b"S"
        assert heartbeat(coordinator, static.member_id, generation, instance="instance-s") == \
            Errors.FencedInstanceIdError.errno
        assert heartbeat(coordinator, restarted.member_id, generation, instance="instance-s") == NONE
        assert heartbeat(coordinator, a, generation) == NONE
        # The new member id was written: a reloaded coordinator knows it.
        reloaded = make_coordinator()
        assert heartbeat(reloaded, restarted.member_id, generation, instance="instance-s") == NONE
        assert reloaded.store.get("g").members[restarted.member_id].assignment == b"S"
    run_in_virtual_time(scenario())


def test_leave_by_instance_id_and_unknown_members(make_coordinator):
    async def scenario():
        coordinator = make_coordinator()
        joined = await join(coordinator, instance="i-1")
        await sync(coordinator, joined.member_id, joined.generation_id, {joined.member_id: b"x"}, instance="i-1")
        assert coordinator.leave_group("g", [("", "i-2"), ("nobody", None)]) == \
            (NONE, [Errors.UnknownMemberIdError.errno] * 2)
        assert coordinator.leave_group("g", [("", "i-1")]) == (NONE, [NONE])
        group = coordinator.store.get("g")
        await eventually(lambda: group.is_(GroupState.EMPTY))
        assert coordinator.leave_group("other", [("m", None)]) == (NONE, [Errors.UnknownMemberIdError.errno])
    run_in_virtual_time(scenario())


def test_group_max_size_and_session_timeout_bounds(make_coordinator):
    async def scenario():
        coordinator = make_coordinator({"group.max.size": "1", "group.max.session.timeout.ms": "1000"})
        assert (await join(coordinator, session=1000)).error == NONE
        assert (await join(coordinator, session=1000)).error == Errors.GroupMaxSizeReachedError.errno
        with pytest.raises(ApiError) as too_long:
            await join(coordinator, group="h", session=5000)
        assert too_long.value.code == Errors.InvalidSessionTimeoutError.errno
        with pytest.raises(ApiError) as no_id:
            await join(coordinator, group="", session=1000)
        assert no_id.value.code == Errors.InvalidGroupIdError.errno
    run_in_virtual_time(scenario())
