"""The share groups' queue health rules (console/share_groups/health.py) on hand-made samples."""
from console.share_groups.health import LOCKS, OK, POISON, STALLED, UNKNOWN, Sample, evaluate, rise


def samples(starts, lags, poison=None, expiries=None, every=30.0):
    n = len(starts)
    poison = poison or [0] * n
    expiries = expiries or [0] * n
    return [Sample(i * every, s, lag, p, e) for i, (s, lag, p, e) in enumerate(zip(starts, lags, poison, expiries))]


def test_a_queue_that_moves_is_ok_and_says_how_far():
    status, flags = evaluate(samples([0, 10, 25], [30, 20, 5]))
    assert status == OK and "moved 25 in 1 min" in flags[0].reason


def test_archived_poison_records_are_flagged_with_their_count():
    status, flags = evaluate(samples([0, 5, 9], [10, 8, 6], poison=[1, 3, 7]))
    assert status == POISON and flags[0].reason.startswith("6 records archived in the last 1 min")


def test_lock_expiries_in_most_intervals_are_flagged_with_the_lock_duration():
    status, flags = evaluate(samples([0, 1, 2, 3], [9, 9, 9, 9], expiries=[0, 4, 9, 12]), lock_duration_ms=30000)
    assert status == LOCKS and "in 3 of the last 3 intervals" in flags[0].reason and "(30 s)" in flags[0].reason


def test_a_start_offset_that_does_not_move_while_records_wait_is_stalled():
    status, flags = evaluate(samples([7, 7, 7, 7], [4, 5, 9, 12]))
    assert status == STALLED and "stayed at 7" in flags[0].reason and "12 records waited" in flags[0].reason
    # Nothing waiting: an idle queue is not stalled.
    assert evaluate(samples([7, 7, 7], [0, 0, 0]))[0] == OK


def test_counters_that_restart_after_a_leader_change_count_what_came_since():
    assert rise([5, 9, 2, 4]) == (4 + 2 + 2, 3)


def test_unknown_counters_and_too_few_samples_are_said_as_such():
    status, flags = evaluate([Sample(0, 0, 5, None, None), Sample(30, 3, 2, None, None)])
    assert status == OK and "not known for this cluster" in flags[0].reason
    assert evaluate([Sample(0, 0, 5, 0, 0)])[0] == UNKNOWN
