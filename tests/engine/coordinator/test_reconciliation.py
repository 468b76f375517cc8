"""One member's steps towards its target assignment (engine/coordinator/reconciliation.py)."""
from engine.coordinator.consumer_group import ConsumerMember, MemberState
from engine.coordinator.reconciliation import reconcile


def member(epoch: int, assigned, state=MemberState.STABLE, pending=()) -> ConsumerMember:
    return ConsumerMember("m", None, None, "c", "/h", 1000, member_epoch=epoch, state=state,
                          assigned=frozenset(assigned), pending_revocation=frozenset(pending))


def tps(*partitions):
    return frozenset(("t", p) for p in partitions)


def test_a_stable_member_at_the_target_epoch_stays():
    m = member(3, tps(0))
    assert reconcile(m, 3, tps(0, 1), lambda tp: None, None) is m


def test_free_partitions_are_assigned_at_once_and_the_epoch_moves_on():
    m = reconcile(member(1, tps(0)), 2, tps(0, 1), lambda tp: None, None)
    assert (m.member_epoch, m.previous_member_epoch, m.state, m.assigned) == (2, 1, MemberState.STABLE, tps(0, 1))


def test_partitions_another_member_owns_wait_until_released():
    owner = {("t", 1): "other"}
    m = reconcile(member(1, tps(0)), 2, tps(0, 1), owner.get, None)
    assert (m.member_epoch, m.state, m.assigned) == (2, MemberState.UNRELEASED_PARTITIONS, tps(0))
    m = reconcile(m, 2, tps(0, 1), {}.get, None)   # released meanwhile
    assert (m.state, m.assigned) == (MemberState.STABLE, tps(0, 1))


def test_revocation_comes_first_and_waits_for_the_members_heartbeat():
    m = reconcile(member(1, tps(0, 1, 2)), 2, tps(0, 3), lambda tp: None, None)
    assert (m.member_epoch, m.state, m.assigned, m.pending_revocation) == (
        1, MemberState.UNREVOKED_PARTITIONS, tps(0), tps(1, 2))
    # A heartbeat without its partitions, or still listing a revoked one, changes nothing.
    assert reconcile(m, 2, tps(0, 3), lambda tp: None, None) is m
    assert reconcile(m, 2, tps(0, 3), lambda tp: None, tps(0, 2)) is m
    done = reconcile(m, 2, tps(0, 3), lambda tp: None, tps(0))
    assert (done.member_epoch, done.state, done.assigned, done.pending_revocation) == (
        2, MemberState.STABLE, tps(0, 3), frozenset())
