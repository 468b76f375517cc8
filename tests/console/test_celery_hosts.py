"""Celery on several hosts: two workers under different node names (`a@host1`, `b@host2`) on one
Redis, as two hosts of a deployment run them (settings.CONSOLE_WORKERS), and beat twice by
mistake.

- A reassignment job's steps go to both workers; one of them killed with -9 mid-job, the job
  finishes on the other (beat's watchdog gives it a new chain), each move sent exactly once.
- Analytics runs queued together are shared: each worker takes one (one run per process).
- Two beats: only the one holding the lock in Redis sends; killed, the other takes over.
"""
from __future__ import annotations

import json
import re

import pytest
import redis
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from console.analytics.models import AnalyticsRun
from console.analytics.services import analytics_run_request
from console.brokers.services import broker_start, broker_stop
from console.clusters.models import Cluster
from console.clusters.services import cluster_create
from console.reassignments import services
from console.reassignments.models import Reassignment, ReassignmentMove
from tests.conftest import TEST_ADMIN_TOKEN_ENV
from tests.console.analytics.test_runs_and_pages import write_snapshots
from tests.console.conftest import STOPPABLE_ENGINE_CONFIGS, make_topic
from tests.support.celery_worker import CeleryBeat
from tests.support.partition_io import send_values
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.timeout(900)]
HOSTS = ("a@host1", "b@host2")
# Steps poll fast; a killed worker's step holds its job 8 s at most; beat's watchdog looks every
# 2 s for a job that has not moved for 6 s (20 polls); a dead beat's lock lasts 4 s.
FAST = {"REASSIGNMENT_POLL_SECONDS": "0.3", "REASSIGNMENT_STEP_LEASE_SECONDS": "8",
        "REASSIGNMENT_WATCHDOG_SECONDS": "2", "BEAT_LOCK_SECONDS": "4"}
STEP_RECEIVED = re.compile(r"Task console\.reassignments\.tasks\.reassignment_step\[[^\]]+\] received")


def two_hosts(celery_worker_factory, queues=("celery",), extra_env=None, **kwargs):
    return [celery_worker_factory(node_name=name, queues=queues, extra_env={**FAST, **(extra_env or {})}, **kwargs)
            for name in HOSTS]


def full_log(worker) -> str:
    return worker.log_path.read_text(errors="replace")


def test_a_job_whose_worker_is_killed_finishes_on_the_other_host_each_move_sent_once(
        engine_factory, users, unique_topic, celery_worker_factory, redis_server, tmp_path):
    engine = engine_factory(brokers=4, configs=STOPPABLE_ENGINE_CONFIGS)
    cluster = cluster_create(name="two hosts", bootstrap_servers=engine.bootstrap, admin_token_env=TEST_ADMIN_TOKEN_ENV)
    topic = make_topic(cluster, unique_topic(), assignments={p: [p % 3, (p + 1) % 3] for p in range(3)})
    for p in range(3):
        send_values(cluster.bootstrap_servers, topic, [bytes(1024)] * 1024, partition=p, acks="all", linger_ms=5)
    workers = dict(zip(HOSTS, two_hosts(celery_worker_factory)))
    beat = CeleryBeat(broker_url=redis_server.url, log_path=tmp_path / "beat.log", extra_env=FAST).start()
    try:
        job = services.plan_from_assignment(cluster=cluster, actor=users["operator"], name="all onto 3",
                                            assignment={(topic, p): (p % 3, 3) for p in range(3)})
        job = services.job_start(job=job, actor=users["operator"], throttle_bytes_per_sec=512 * 1024,
                                 per_broker_limit=1)

        def in_flight():
            return job.moves.filter(state=ReassignmentMove.IN_FLIGHT).exists()
        wait_until(in_flight, timeout=90, interval=0.1, message="a move in flight")
        # The target broker stopped: the move stays in flight and the job waits in steps, so the
        # kill below lands mid-job however slow the machine is.
        broker_stop(cluster=cluster, actor=users["admin"], broker_id=3)

        def waiting():
            job.refresh_from_db()
            return "Waiting for broker 3" in job.message
        wait_until(waiting, timeout=90, interval=0.2, message="the job waiting for broker 3")
        # Kill a worker that has run steps of the job (at least one has).
        victim = next(name for name, w in workers.items() if STEP_RECEIVED.search(full_log(w)))
        survivor = workers[next(name for name in HOSTS if name != victim)]
        workers[victim].kill()
        steps_before = len(STEP_RECEIVED.findall(full_log(survivor)))
        broker_start(cluster=cluster, actor=users["admin"], broker_id=3)

        def finished():
            job.refresh_from_db()
            return job.state in Reassignment.FINISHED
        wait_until(finished, timeout=300, interval=0.3, message=f"the job to finish\n{survivor.log_text()}")
        assert job.state == Reassignment.DONE, job.message
        assert [m.attempts for m in job.moves.all()] == [1, 1, 1]       # each move sent exactly once
        assert len(STEP_RECEIVED.findall(full_log(survivor))) > steps_before     # the other host finished it
    finally:
        beat.stop()


def test_analytics_runs_queued_together_are_shared_by_the_two_workers(celery_worker_factory, users, settings,
                                                                      tmp_path):
    settings.ANALYTICS_LAKE = str(tmp_path / "lake")
    clusters = [Cluster.objects.create(name=f"lake {n}", bootstrap_servers="127.0.0.1:1") for n in range(2)]
    for cluster in clusters:
        write_snapshots(settings.ANALYTICS_LAKE, cluster.pk)
    two_hosts(celery_worker_factory, queues=("analytics",), pool="solo", concurrency=1, extra_env={
        "ANALYTICS_LAKE": settings.ANALYTICS_LAKE, "SPARK_MASTER": "sail"})
    runs = [analytics_run_request(cluster=cluster, actor=users["operator"], kind=AnalyticsRun.WHAT_IF,
                                  target="orders", params={"topic": "orders", "retention_ms": None,
                                                           "retention_bytes": 0})
            for cluster in clusters]

    def ended():
        for run in runs:
            run.refresh_from_db()
        return all(run.state in (AnalyticsRun.DONE, AnalyticsRun.FAILED) for run in runs)
    wait_until(ended, timeout=600, interval=0.5, message="both runs to end")
    assert [(r.state, r.error) for r in runs] == [(AnalyticsRun.DONE, "")] * 2
    assert sorted(r.worker.split(",")[0] for r in runs) == list(HOSTS)


def probe_origins(client: redis.Redis, queue: str) -> list[str]:
    """The sender (`gen<pid>@<host>`) of every message waiting in `queue`, oldest first."""
    return [json.loads(m)["headers"]["origin"] for m in reversed(client.lrange(queue, 0, -1))]


def test_two_beats_by_mistake_send_each_schedule_once(redis_server, tmp_path):
    client = redis.Redis.from_url(redis_server.url)
    queue = "beat-probe"              # no worker consumes it: every message beat sent stays there
    client.delete(queue)
    every_second = IntervalSchedule.objects.create(every=1, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.create(name="probe", task="console.analytics.tasks.analytics_watchdog",
                                interval=every_second, queue=queue)
    beats = [CeleryBeat(broker_url=redis_server.url, log_path=tmp_path / f"beat-{n}.log", extra_env=FAST).start()
             for n in range(2)]
    try:
        wait_until(lambda: client.llen(queue) >= 4, timeout=120, interval=0.2, message="beat's first sends")
        [holder] = set(probe_origins(client, queue))                     # one beat sends, the other waits
        holder_pid = int(holder[len("gen"):].split("@")[0])
        [killed] = [b for b in beats if b.process.pid == holder_pid]
        killed.kill()
        wait_until(lambda: len(set(probe_origins(client, queue))) == 2, timeout=120, interval=0.2,
                   message="the other beat to take over")
        origins = probe_origins(client, queue)
        # Never both at once: the first beat's messages, then only the other's.
        taken_over = origins.index(next(o for o in origins if o != holder))
        assert set(origins[:taken_over]) == {holder} and holder not in origins[taken_over:]
    finally:
        for beat in beats:
            beat.stop()
        client.delete(queue)
