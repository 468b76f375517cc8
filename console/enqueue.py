"""Queue a Celery task by its name once the current transaction commits.

Tasks call services, and services queue tasks: naming the task (a Celery signature by name)
instead of importing it keeps the import graph one way, tasks -> services. In a process that
has the task registered, the signature applies it as `task.apply_async` would (its routes and
options); elsewhere it is sent by name.
"""
from __future__ import annotations

from celery import signature
from django.db import transaction


def enqueue_on_commit(task_name: str, *args) -> None:
    """Send `task_name(*args)` after the commit, so a worker never reads rows that are not there yet."""
    transaction.on_commit(lambda: signature(task_name, args=args).apply_async())
