"""Sending work to Celery, with a readable answer at once when its broker (Redis) is down.

`enqueue()` publishes with one short retry and, when the broker cannot be reached, raises
`QueueUnavailable`: a sentence naming the broker and what was not queued. Each caller then
undoes or fails the row that waited for the task (an analytics run is failed with the reason,
a reassignment job goes back to its draft), so no row waits for a task that was never sent.

Results are never stored (settings: CELERY_TASK_IGNORE_RESULT): progress lives in the rows.
With a result backend, a task sent while Redis was down waited ~20 s on the backend's own
reconnect loop, and then left that backend broken until the process restarted.
"""
from __future__ import annotations

import logging
from urllib.parse import urlsplit

from kombu.exceptions import OperationalError

from console.errors import ConsoleError

log = logging.getLogger(__name__)

# Kombu's publish retry, shortened: one more try after a dropped connection, not a minute of them.
PUBLISH_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


class QueueUnavailable(ConsoleError):
    """The Celery broker cannot be reached: nothing was queued."""


def broker_name() -> str:
    """Where the broker is, for a sentence (never its password)."""
    from console.celery import app
    parts = urlsplit(app.conf.broker_url or "")
    return f"Redis at {parts.hostname or '?'}:{parts.port or 6379}"


def _unavailable(what: str, exc: Exception) -> QueueUnavailable:
    reason = str(exc).strip().rstrip(".") or type(exc).__name__
    return QueueUnavailable(f"The task queue ({broker_name()}) cannot be reached ({reason}), so {what} was not "
                            "queued. Start Redis (make run starts it) and try again.")


def enqueue(task, args: tuple = (), *, what: str, **options) -> None:
    """Publish `task(*args)`; QueueUnavailable naming `what` if the broker cannot take it."""
    try:
        task.apply_async(args, retry=True, retry_policy=PUBLISH_RETRY, **options)
    except (OperationalError, OSError) as exc:
        log.warning("could not queue %s: %s", what, exc)
        raise _unavailable(what, exc) from None
