"""Reassignment schedules: the PeriodicTask rows beat reads, the skew condition, and a real
beat + worker firing a schedule at its time."""
from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from console.errors import InvalidInput
from console.reassignments import schedules
from console.reassignments.models import Reassignment, ReassignmentSchedule
from tests.console.conftest import make_topic
from tests.console.reassignments.conftest import replicas_of
from tests.support.celery_worker import CeleryBeat
from tests.support.waiting import wait_until

# Every preferred leader on broker 0: leader skew far over 10%.
SKEWED = {0: [0, 1], 1: [0, 2], 2: [0, 3], 3: [0, 1]}


def test_a_cron_window_becomes_a_periodic_task_and_edits_follow(four_brokers, users):
    schedule = schedules.schedule_create(cluster=four_brokers, actor=users["operator"], name="nightly",
                                         kind=ReassignmentSchedule.REBALANCE, cron="0 2 * * *",
                                         min_leader_skew_percent=10)
    task = PeriodicTask.objects.get(pk=schedule.periodic_task_id)
    assert (task.crontab.minute, task.crontab.hour, task.enabled) == ("0", "2", True)
    schedules.schedule_update(schedule=schedule, actor=users["operator"], cron="30 3 * * 1-5", enabled=False)
    task.refresh_from_db()
    assert (task.crontab.minute, task.crontab.hour, task.crontab.day_of_week, task.enabled) == ("30", "3", "1-5",
                                                                                               False)
    with pytest.raises(InvalidInput, match="cron"):
        schedules.schedule_create(cluster=four_brokers, actor=users["operator"], name="bad",
                                  kind=ReassignmentSchedule.ELECT, cron="every night")
    schedules.schedule_delete(schedule=schedule, actor=users["operator"])
    assert not PeriodicTask.objects.filter(pk=task.pk).exists()


def test_the_skew_condition_is_read_when_the_schedule_fires(four_brokers, users, unique_topic):
    topic = make_topic(four_brokers, unique_topic(), assignments={0: [0, 1], 1: [1, 2], 2: [2, 3], 3: [3, 0]})
    schedule = schedules.schedule_create(cluster=four_brokers, actor=users["operator"], name="if skewed",
                                         kind=ReassignmentSchedule.REBALANCE, cron="0 2 * * *", topics=[topic],
                                         min_leader_skew_percent=10)
    result = schedules.schedule_fire(schedule_id=schedule.pk)
    assert result == "Leader skew 0.0% is not over 10%: nothing to do."
    assert not Reassignment.objects.exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_one_time_schedule_fires_at_its_time_in_real_beat_and_worker(four_brokers, users, unique_topic,
                                                                         celery_worker_factory, redis_server, tmp_path):
    topic = make_topic(four_brokers, unique_topic(), assignments=SKEWED)
    celery_worker_factory(extra_env={"REASSIGNMENT_POLL_SECONDS": "0.3"})
    beat = CeleryBeat(broker_url=redis_server.url, log_path=tmp_path / "beat.log").start()
    try:
        schedule = schedules.schedule_create(cluster=four_brokers, actor=users["operator"], name="soon",
                                             kind=ReassignmentSchedule.REBALANCE, topics=[topic],
                                             run_at=timezone.now() + timedelta(seconds=3),
                                             min_leader_skew_percent=10)

        def fired():
            schedule.refresh_from_db()
            return schedule.last_fired_at is not None
        wait_until(fired, timeout=90, interval=0.3, message="the schedule to fire\n" + beat.log_text())
        assert schedule.last_fired_at >= schedule.run_at
        assert schedule.last_result.startswith("Leader skew 300.0%: started"), schedule.last_result
        job = schedule.last_job

        def done():
            job.refresh_from_db()
            return job.state in Reassignment.FINISHED
        wait_until(done, timeout=90, interval=0.3, message="the scheduled job to end")
        assert job.state == Reassignment.DONE, job.message
        leaders = [r[0] for r in replicas_of(four_brokers, topic).values()]
        assert len(set(leaders)) == 4
    finally:
        beat.stop()


def test_an_election_schedule_puts_leaders_back_on_their_preferred_replicas(four_brokers, users, unique_topic):
    from console.brokers.services import broker_start, broker_stop
    from console.clusters.gateway import cluster_gateway
    from tests.console.conftest import wait_for_partitions

    topic = make_topic(four_brokers, unique_topic(), assignments={0: [3, 0], 1: [3, 1]})
    broker_stop(cluster=four_brokers, actor=users["admin"], broker_id=3)
    broker_start(cluster=four_brokers, actor=users["admin"], broker_id=3)
    wait_for_partitions(four_brokers, topic, lambda ps: all(3 in p.isr for p in ps), "broker 3 back in the ISRs")
    with cluster_gateway(four_brokers) as gw:
        assert all(p.leader != 3 for p in gw.metadata([topic]).topic(topic).partitions)   # no auto rebalance
    schedule = schedules.schedule_create(cluster=four_brokers, actor=users["operator"], name="elect",
                                         kind=ReassignmentSchedule.ELECT, cron="*/5 * * * *", topics=[topic])
    assert schedules.schedule_fire(schedule_id=schedule.pk).startswith("Elected 2 leaders")
    with cluster_gateway(four_brokers) as gw:
        assert all(p.leader == 3 for p in gw.metadata([topic]).topic(topic).partitions)
