"""Services queue tasks by name (console/enqueue.py): each name they use is a registered task."""
from console.analytics.services import RUN_TASK
from console.celery import app
from console.reassignments.schedules import FIRE_TASK
from console.reassignments.services import STEP_TASK


def test_the_task_names_services_queue_are_registered_tasks():
    app.loader.import_default_modules()
    assert {RUN_TASK, STEP_TASK, FIRE_TASK} <= set(app.tasks)
