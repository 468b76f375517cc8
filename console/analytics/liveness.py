"""Analytics runs that lost their worker or their task, found and settled by a watchdog.

A worker killed with -9 (or a machine that went away) leaves its run "running" forever, and a
task lost by Redis (killed before it saved it, or flushed) leaves its run "queued" forever;
either way every later request met "already queued" and beat skipped the cluster. So:

- While a run runs, a thread of its worker writes `heartbeat_at` every
  ANALYTICS_HEARTBEAT_SECONDS (`heartbeat`). The watchdog fails a running run whose heartbeat
  is older than STALE_HEARTBEATS of them, saying which worker went silent and since when. If
  that worker was only frozen and finishes after all, its result still lands (the run is done).
- A run queued longer than ANALYTICS_QUEUED_RESEND_SECONDS is sent again (a duplicate task
  finds the run no longer queued and does nothing), and one queued longer than
  ANALYTICS_QUEUED_MAX_SECONDS is failed: no analytics worker is consuming its queue.

Beat calls `services.analytics_watchdog_sweep` every minute (settings.CELERY_BEAT_SCHEDULE), as it does
the reassignment jobs' watchdog.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

from django.db import connection
from django.utils import timezone

from console.analytics.models import AnalyticsRun

log = logging.getLogger(__name__)


@contextlib.contextmanager
def heartbeat(*, run_id: int, every_seconds: float) -> Iterator[None]:
    """Write the run's heartbeat from a daemon thread until the block ends."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(every_seconds):
                AnalyticsRun.objects.filter(pk=run_id, state=AnalyticsRun.RUNNING).update(heartbeat_at=timezone.now())
        except Exception:  # noqa: BLE001 - a missed heartbeat is the watchdog's business, not the run's
            log.exception("analytics run %s: heartbeat stopped", run_id)
        finally:
            connection.close()      # this thread's own database connection
    thread = threading.Thread(target=beat, name=f"analytics-heartbeat-{run_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)
