"""The shared Celery worker fixture: a real worker process runs tasks sent by the test."""
import pytest

from console.analytics.models import AnalyticsRun
from console.celery import app
from console.clusters.models import Cluster
from tests.support.celery_worker import worker_database_url
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_a_real_worker_runs_a_task_sent_by_the_test_and_restarts_after_kill_9(celery_worker_factory):
    # No task result is stored (the console reads rows, not results): the task's effect is a row.
    # Beat's scheduling task queues an analytics run per cluster, in the worker's process.
    Cluster.objects.all().delete()
    Cluster.objects.create(name="one", bootstrap_servers="127.0.0.1:1")
    worker = celery_worker_factory()
    app.send_task("console.analytics.tasks.analytics_runs_schedule")
    wait_until(lambda: AnalyticsRun.objects.count() == 1, timeout=60, message=f"the worker\n{worker.log_text()}")
    AnalyticsRun.objects.update(state=AnalyticsRun.FAILED)
    worker.kill()
    assert not worker.alive()
    celery_worker_factory()
    app.send_task("console.analytics.tasks.analytics_runs_schedule")
    wait_until(lambda: AnalyticsRun.objects.count() == 2, timeout=60, message="the restarted worker")


def test_the_test_database_is_a_file_another_process_can_open():
    assert worker_database_url().startswith("sqlite:///")
    assert ":memory:" not in worker_database_url()
