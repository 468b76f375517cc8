"""Queue a Celery task by its name, with a readable answer at once when the broker is down.

Tasks call services, and services queue tasks: naming the task (a Celery signature by name)
instead of importing it keeps the import graph one way, tasks -> services. In a process that
has the task registered, the signature applies it as `task.apply_async` would (its routes and
options); elsewhere it is sent by name.

When Redis cannot be reached, publishing tries once more and then raises `QueueUnavailable`:
a sentence naming the broker and what was not queued. The caller undoes or fails the row that
waited for the task (an analytics run is failed with the reason, a reassignment start is a
draft again), so no row waits for a task that was never sent. Results are never stored
(settings: CELERY_TASK_IGNORE_RESULT): with a result backend, a task sent while Redis was down
waited ~20 s on the backend's own reconnect loop, and left it broken until the process restarted.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from celery import current_app, signature
from django.db import transaction
from kombu.exceptions import OperationalError

from console.errors import ConsoleError

log = logging.getLogger(__name__)

# Kombu's publish retry, shortened: one more try after a dropped connection, not a minute of them.
PUBLISH_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


class QueueUnavailable(ConsoleError):
    """The Celery broker cannot be reached: nothing was queued."""


def broker_name() -> str:
    """Where the broker is, for a sentence (never its password)."""
    parts = urlsplit(current_app.conf.broker_url or "")
    return f"Redis at {parts.hostname or '?'}:{parts.port or 6379}"


def enqueue(task_name: str, *args, what: str) -> None:
    """Send `task_name(*args)` now; QueueUnavailable naming `what` if the broker cannot take it."""
    try:
        signature(task_name, args=args).apply_async(retry=True, retry_policy=PUBLISH_RETRY)
    except (OperationalError, OSError) as exc:
        log.warning("could not queue %s: %s", what, exc)
        reason = str(exc).strip().rstrip(".") or type(exc).__name__
        raise QueueUnavailable(f"The task queue ({broker_name()}) cannot be reached ({reason}), so {what} was not "
                               "queued. Start Redis (make run starts it) and try again.") from None


def enqueue_on_commit(task_name: str, *args, what: str = "",
                      on_failure: Callable[[QueueUnavailable], bool] | None = None) -> None:
    """Send `task_name(*args)` after the commit, so a worker never reads rows that are not there
    yet. If the broker cannot take it, `on_failure(exc)` runs (it undoes or fails the row), and
    QueueUnavailable goes on to the caller (out of the commit) unless on_failure returns False."""
    def send() -> None:
        try:
            enqueue(task_name, *args, what=what or f"the task {task_name}")
        except QueueUnavailable as exc:
            if on_failure is None or on_failure(exc) is not False:
                raise
    transaction.on_commit(send)
