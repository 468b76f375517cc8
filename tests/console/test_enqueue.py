"""Every Celery-backed action with its broker (a real Redis) killed with -9: a readable sentence
at once, and no row left waiting for a task that was never sent. With Redis back on the same
port, the same action queues for real."""
from __future__ import annotations

import pytest
import redis as redis_client
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from console.analytics.models import AnalyticsRun
from console.analytics.services import analytics_runs_schedule
from console.clusters.models import Cluster
from console.errors import ConsoleError
from console.reassignments import services as reassignment_services
from console.reassignments.models import PartitionLock, Reassignment, ReassignmentMove
from tests.support.celery_worker import celery_broker
from tests.support.redis_server import RedisServer

# on_commit hooks must run (they send the tasks): transactional tests.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def killed_redis(tmp_path):
    """A Redis this process's Celery sends to, killed -9 before the test acts; `start()` revives it."""
    server = RedisServer(tmp_path / "redis").start()
    with celery_broker(server.url):
        server.kill()
        yield server
    server.stop()


def queued_messages(server: RedisServer, queue: str) -> int:
    return redis_client.Redis.from_url(server.url).llen(queue)


def test_run_now_with_redis_killed_says_so_at_once_and_leaves_no_run_queued(killed_redis, users, operator_client):
    cluster = Cluster.objects.create(name="lake only", bootstrap_servers="127.0.0.1:1")
    url = reverse("analytics:run", args=[cluster.pk])
    page = operator_client.post(url, {"kind": "lake"}, follow=True).content.decode()
    assert f"Analytics not started: The task queue (Redis at 127.0.0.1:{killed_redis.port}) cannot be reached" in page
    assert not AnalyticsRun.objects.filter(state__in=AnalyticsRun.ACTIVE).exists()
    failed = AnalyticsRun.objects.get()
    assert failed.state == AnalyticsRun.FAILED and "cannot be reached" in failed.error
    assert AuditLogEntry.objects.get(action="analytics.run").result == AuditLogEntry.FAILED

    killed_redis.start()
    page = operator_client.post(url, {"kind": "lake"}, follow=True).content.decode()
    assert "queued" in page and "already" not in page
    assert AnalyticsRun.objects.filter(state=AnalyticsRun.QUEUED).count() == 1
    assert queued_messages(killed_redis, "analytics") == 1


def test_beats_scheduled_runs_with_redis_killed_are_failed_not_left_queued(killed_redis):
    Cluster.objects.create(name="one", bootstrap_servers="127.0.0.1:1")
    Cluster.objects.create(name="two", bootstrap_servers="127.0.0.1:2")
    analytics_runs_schedule()
    assert not AnalyticsRun.objects.filter(state__in=AnalyticsRun.ACTIVE).exists()
    clusters = Cluster.objects.count()
    assert AnalyticsRun.objects.filter(state=AnalyticsRun.FAILED).count() == clusters
    killed_redis.start()
    assert len(analytics_runs_schedule()) == clusters and queued_messages(killed_redis, "analytics") == clusters


def draft_job(cluster: Cluster) -> Reassignment:
    job = Reassignment.objects.create(cluster=cluster, name="move one", scenario="import", summary={"moves": 1})
    ReassignmentMove.objects.create(job=job, topic="orders", partition=0, replicas_before=[0], replicas_after=[1])
    return job


def test_starting_a_reassignment_with_redis_killed_leaves_the_plan_a_draft(killed_redis, users):
    cluster = Cluster.objects.create(name="c", bootstrap_servers="127.0.0.1:1")
    job = draft_job(cluster)
    with pytest.raises(ConsoleError, match=r"The task queue \(Redis at .*\) cannot be reached .*"
                                           r"so the job 'move one' was not queued"):
        reassignment_services.job_start(job=job, actor=users["operator"])
    job.refresh_from_db()
    assert job.state == Reassignment.DRAFT and job.started_at is None and not PartitionLock.objects.exists()
    assert AuditLogEntry.objects.get(action="reassignment.run").result == AuditLogEntry.FAILED

    killed_redis.start()
    job = reassignment_services.job_start(job=job, actor=users["operator"])
    assert job.state == Reassignment.RUNNING and queued_messages(killed_redis, "celery") == 1
