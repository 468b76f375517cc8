"""The shared Celery worker fixture: a real worker process runs tasks sent by the test."""
import pytest

from console.celery import app
from tests.support.celery_worker import worker_database_url

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_a_real_worker_runs_a_task_sent_by_the_test_and_restarts_after_kill_9(celery_worker_factory):
    worker = celery_worker_factory()
    # celery.accumulate is Celery's built-in identity task: the answer comes back through Redis.
    assert app.send_task("celery.accumulate", args=(1, 2)).get(timeout=60) == [1, 2]
    worker.kill()
    assert not worker.alive()
    celery_worker_factory()
    assert app.send_task("celery.accumulate", args=(3,)).get(timeout=60) == [3]


def test_the_test_database_is_a_file_another_process_can_open():
    assert worker_database_url().startswith("sqlite:///")
    assert ":memory:" not in worker_database_url()
