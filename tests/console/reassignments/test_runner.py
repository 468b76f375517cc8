"""The job runner's steps, called in this process against a real engine (the Celery worker
tests in test_jobs.py run the same steps in a real worker process)."""
import pytest

from console.reassignments import runner, services
from console.reassignments.models import Reassignment, ReassignmentMove
from tests.console.conftest import make_topic
from tests.console.reassignments.conftest import replicas_of, throttle_configs
from tests.support.waiting import wait_until


def run_to_the_end(job, timeout=90):
    def step():
        job.refresh_from_db()
        return runner.job_step(job_id=job.pk, token=job.tick_token) is None
    wait_until(step, timeout=timeout, message="the job to end")
    job.refresh_from_db()
    return job


def test_a_plan_runs_to_its_target_with_throttles_removed_at_the_end(four_brokers, users, unique_topic):
    topic = make_topic(four_brokers, unique_topic(), assignments={p: [p % 3, (p + 1) % 3] for p in range(6)})
    job = services.plan_generate(cluster=four_brokers, actor=users["operator"], name="fill 3", scenario="add",
                                 topics=[topic], brokers=[3])
    planned = {m.partition: tuple(m.replicas_after) for m in job.moves.all()}
    assert planned and all(3 in r for r in planned.values())
    job = services.job_start(job=job, actor=users["operator"], throttle_bytes_per_sec=10 * 1024 * 1024,
                             per_broker_limit=1)
    assert job.state == Reassignment.RUNNING
    job = run_to_the_end(job)
    assert job.state == Reassignment.DONE, job.message
    after = replicas_of(four_brokers, topic)
    assert all(after[p] == r for p, r in planned.items())
    assert all(m.state == ReassignmentMove.DONE and m.attempts == 1 for m in job.moves.all())
    assert throttle_configs(four_brokers, [topic], [0, 1, 2, 3]) == {}
    assert not job.locks.exists()


def test_two_jobs_on_the_same_partitions_cannot_run_at_once(four_brokers, users, unique_topic):
    topic = make_topic(four_brokers, unique_topic(), assignments={p: [p % 3] for p in range(6)})
    first = services.plan_generate(cluster=four_brokers, actor=users["operator"], name="a", scenario="add",
                                   topics=[topic], brokers=[3])
    second = services.plan_generate(cluster=four_brokers, actor=users["operator"], name="b", scenario="add",
                                    topics=[topic], brokers=[3])
    services.job_start(job=first, actor=users["operator"])
    with pytest.raises(services.ConsoleError, match="Another job is moving"):
        services.job_start(job=second, actor=users["operator"])


def test_a_noop_plan_cannot_run(four_brokers, users, unique_topic):
    topic = make_topic(four_brokers, unique_topic(), assignments={0: [0, 1], 1: [1, 2], 2: [2, 3], 3: [3, 0]})
    job = services.plan_generate(cluster=four_brokers, actor=users["operator"], name="noop", scenario="rebalance",
                                 topics=[topic])
    assert job.summary["moves"] == 0
    with pytest.raises(services.ConsoleError, match="changes nothing"):
        services.job_start(job=job, actor=users["operator"])


def test_cancel_after_the_first_batch_returns_the_partition_to_its_old_replicas(four_brokers, users, unique_topic):
    from tests.console.reassignments.test_jobs import fill
    topic = make_topic(four_brokers, unique_topic(), assignments={0: [0, 1], 1: [1, 2]})
    fill(four_brokers, topic, 0, 1)
    job = services.plan_from_assignment(cluster=four_brokers, actor=users["operator"], name="c",
                                        assignment={(topic, 0): (0, 3), (topic, 1): (1, 3)})
    job = services.job_start(job=job, actor=users["operator"], throttle_bytes_per_sec=64 * 1024, per_broker_limit=1)
    assert runner.job_step(job_id=job.pk, token=job.tick_token) is not None
    assert job.moves.get(partition=0).state == ReassignmentMove.IN_FLIGHT
    services.job_cancel(job=job, actor=users["operator"])
    job = run_to_the_end(job)
    assert job.state == Reassignment.CANCELLED, job.message
    assert replicas_of(four_brokers, topic) == {0: (0, 1), 1: (1, 2)}
    assert throttle_configs(four_brokers, [topic], [0, 1, 2, 3]) == {}


def test_pause_lets_moves_in_flight_finish_and_starts_no_new_one_until_resumed(four_brokers, users, unique_topic):
    topic = make_topic(four_brokers, unique_topic(), assignments={0: [0, 1], 1: [1, 2]})
    job = services.plan_from_assignment(cluster=four_brokers, actor=users["operator"], name="p",
                                        assignment={(topic, 0): (0, 3), (topic, 1): (1, 3)})
    job = services.job_start(job=job, actor=users["operator"], per_broker_limit=1)   # one move at a time
    runner.job_step(job_id=job.pk, token=job.tick_token)
    services.job_pause(job=job, actor=users["operator"])

    def first_done():
        runner.job_step(job_id=job.pk, token=job.tick_token)
        return job.moves.get(partition=0).state == ReassignmentMove.DONE
    wait_until(first_done, timeout=60, message="the move in flight to finish while paused")
    for _ in range(3):
        runner.job_step(job_id=job.pk, token=job.tick_token)
    assert job.moves.get(partition=1).state == ReassignmentMove.PENDING
    job.refresh_from_db()
    assert job.state == Reassignment.PAUSED
    services.job_resume(job=job, actor=users["operator"])
    assert run_to_the_end(job).state == Reassignment.DONE
    assert replicas_of(four_brokers, topic) == {0: (0, 3), 1: (1, 3)}


def test_a_broker_that_stops_mid_job_makes_it_wait_then_fail_cleanly(four_brokers, users, unique_topic, settings):
    from console.brokers.services import broker_start, broker_stop
    from tests.console.reassignments.test_jobs import fill
    topic = make_topic(four_brokers, unique_topic(), assignments={0: [0, 1]})
    fill(four_brokers, topic, 0, 1)
    job = services.plan_from_assignment(cluster=four_brokers, actor=users["operator"], name="b",
                                        assignment={(topic, 0): (0, 3)})
    job = services.job_start(job=job, actor=users["operator"], throttle_bytes_per_sec=32 * 1024)
    runner.job_step(job_id=job.pk, token=job.tick_token)
    assert job.moves.get().state == ReassignmentMove.IN_FLIGHT
    broker_stop(cluster=four_brokers, actor=users["admin"], broker_id=3)

    runner.job_step(job_id=job.pk, token=job.tick_token)
    job.refresh_from_db()
    assert (job.state, job.message) == (Reassignment.RUNNING, "Waiting for broker 3 to come back.")

    settings.REASSIGNMENT_BROKER_WAIT_SECONDS = 0
    job = run_to_the_end(job)
    assert job.state == Reassignment.FAILED
    assert "Broker 3 stayed down" in job.message
    assert job.moves.get().state == ReassignmentMove.CANCELLED
    assert replicas_of(four_brokers, topic) == {0: (0, 1)}
    broker_start(cluster=four_brokers, actor=users["admin"], broker_id=3)
    # Broker 3 was down when the job ended: its throttle could not be removed, and the job says so.
    assert "broker 3" in job.message and job.throttled_brokers == [3]
    assert set(throttle_configs(four_brokers, [topic], [0, 1, 2])) == set()
    # Once it is back, the watchdog's retry removes it.
    def watchdog_cleared():
        services.job_watchdog_sweep()      # what beat's watchdog task runs
        job.refresh_from_db()
        return not job.throttled_brokers
    wait_until(watchdog_cleared, timeout=60, interval=0.5, message="the leftover throttle to go")
    job.refresh_from_db()
    assert job.throttled_brokers == [] and "Throttle" not in job.message
    assert throttle_configs(four_brokers, [topic], [0, 1, 2, 3]) == {}


def test_a_job_run_at_a_later_time_waits_in_short_steps_then_runs(four_brokers, users, unique_topic):
    from datetime import timedelta

    from django.utils import timezone
    topic = make_topic(four_brokers, unique_topic(), assignments={0: [0, 1]})
    job = services.plan_from_assignment(cluster=four_brokers, actor=users["operator"], name="later",
                                        assignment={(topic, 0): (0, 3)})
    job = services.job_start(job=job, actor=users["operator"], run_at=timezone.now() + timedelta(hours=6))
    assert job.state == Reassignment.SCHEDULED
    assert runner.job_step(job_id=job.pk, token=job.tick_token) == 300.0   # well under Redis's visibility timeout
    assert job.moves.get().state == ReassignmentMove.PENDING
    Reassignment.objects.filter(pk=job.pk).update(run_at=timezone.now() - timedelta(seconds=1))   # time passes
    assert run_to_the_end(job).state == Reassignment.DONE
    assert replicas_of(four_brokers, topic) == {0: (0, 3)}
