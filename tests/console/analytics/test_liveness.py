"""Analytics runs that lose their worker (kill -9) or their task (Redis killed -9) are found by
the watchdog: a silent running run is failed with the worker's name, a queued run nobody took
is sent again, and failed once it waited too long. Real Redis, real Celery workers."""
from __future__ import annotations

import pytest
import redis as redis_client

from console.analytics.models import AnalyticsRun
from console.analytics.services import analytics_run_request, analytics_watchdog_sweep
from console.clusters.models import Cluster
from tests.support.celery_worker import celery_broker
from tests.support.redis_server import RedisServer
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.timeout(300)]


def test_a_run_whose_worker_is_killed_is_failed_by_the_watchdog(celery_worker_factory, users, settings, tmp_path):
    settings.ANALYTICS_HEARTBEAT_SECONDS = 0.5
    cluster = Cluster.objects.create(name="lake only", bootstrap_servers="127.0.0.1:1")
    # A Spark master nobody answers: the worker's Spark keeps trying for a minute, so the run is
    # still running (and beating) when its worker is killed.
    worker = celery_worker_factory(queues=("analytics",), pool="solo", concurrency=1, extra_env={
        "ANALYTICS_LAKE": str(tmp_path / "lake"), "SPARK_MASTER": "spark://127.0.0.1:1",
        "ANALYTICS_HEARTBEAT_SECONDS": "0.5"})
    run = analytics_run_request(cluster=cluster, actor=users["operator"])

    def beating() -> bool:
        run.refresh_from_db()
        return run.state == AnalyticsRun.RUNNING and run.heartbeat_at > run.started_at
    wait_until(beating, timeout=120, message=f"the worker to run and beat\n{worker.log_text()}")
    assert "pid" in run.worker
    worker.kill()

    wait_until(lambda: run.pk in analytics_watchdog_sweep()["failed_silent"], timeout=60, interval=0.5,
               message="the watchdog to find the silent run")
    run.refresh_from_db()
    assert run.state == AnalyticsRun.FAILED and "stopped while it ran" in run.error and run.worker in run.error
    again = analytics_run_request(cluster=cluster, actor=users["operator"])      # not "already running"
    assert again.state == AnalyticsRun.QUEUED


def test_a_run_whose_task_redis_lost_is_sent_again_then_failed_if_nobody_takes_it(users, settings, tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    queue = redis_client.Redis.from_url(server.url)
    cluster = Cluster.objects.create(name="lake only", bootstrap_servers="127.0.0.1:1")
    try:
        with celery_broker(server.url):
            run = analytics_run_request(cluster=cluster, actor=users["operator"])
            assert queue.llen("analytics") == 1
            server.kill()                 # the queued task dies with it
            server.start()
            assert queue.llen("analytics") == 0
            assert analytics_watchdog_sweep() == {"failed_silent": [], "resent": [], "failed_unclaimed": []}

            settings.ANALYTICS_QUEUED_RESEND_SECONDS = 0
            assert analytics_watchdog_sweep()["resent"] == [run.pk]
            assert queue.llen("analytics") == 1

            settings.ANALYTICS_QUEUED_MAX_SECONDS = 0
            assert analytics_watchdog_sweep()["failed_unclaimed"] == [run.pk]
            run.refresh_from_db()
            assert run.state == AnalyticsRun.FAILED and "No analytics worker took this run" in run.error
    finally:
        server.stop()
