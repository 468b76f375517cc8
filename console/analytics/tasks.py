"""Celery tasks for analytics: thin wrappers around services.

`analytics_run` runs on the `analytics` queue (settings.CELERY_TASK_ROUTES), served by a
worker that keeps one warm SparkSession per process: with ANALYTICS_WARM_SPARK=1 the session
starts when the worker's pool does (`worker_process_init`, which the solo pool sends once in the
worker and prefork in each child; the threads pool starts it on the first job), not on the first
job, and runs every lake job once on a tiny lake (console/analytics/warmup.py). Snapshots and lake
upkeep are cheap and run on the default queue, from beat.
"""
from __future__ import annotations

import datetime as dt
import logging
import os

from celery import shared_task
from celery.signals import worker_process_init
from django.conf import settings

from console.analytics import services

log = logging.getLogger(__name__)


@worker_process_init.connect
def _warm_spark(**_) -> None:
    if os.environ.get("ANALYTICS_WARM_SPARK") == "1":
        from console.analytics.spark import spark_session
        from console.analytics.warmup import session_warm_up
        try:
            session_warm_up(spark_session(), lake_url=settings.ANALYTICS_LAKE)
        except Exception:  # noqa: BLE001 - the worker serves anyway: each run tries again, and fails with the reason
            log.exception("Spark did not start with the worker; the first run starts it")


@shared_task(acks_late=True, bind=True)
def analytics_run(self, run_id: int) -> None:
    from console.analytics.spark import spark_session
    services.analytics_run_execute(run_id=run_id, spark=spark_session,
                                   worker=f"{self.request.hostname or '?'}, pid {os.getpid()}")


@shared_task(acks_late=True)
def analytics_watchdog() -> dict:
    """Beat's sweep for runs whose worker died or whose task was lost (services)."""
    return services.analytics_watchdog_sweep()


@shared_task(acks_late=True)
def analytics_snapshot() -> int:
    return len(services.snapshots_take(lake_url=settings.ANALYTICS_LAKE))


@shared_task(acks_late=True)
def analytics_lake_upkeep() -> None:
    services.lake_upkeep(lake_url=settings.ANALYTICS_LAKE, retention_days=settings.ANALYTICS_LAKE_RETENTION_DAYS,
                         today=dt.datetime.now(dt.timezone.utc).date())


@shared_task(acks_late=True)
def analytics_runs_schedule() -> int:
    return len(services.analytics_runs_schedule())


@shared_task(acks_late=True)
def analytics_records_schedule() -> int:
    """Beat's run of the jobs over topic contents (compaction, record sizes and ages)."""
    from console.analytics.models import AnalyticsRun
    return len(services.analytics_runs_schedule(kind=AnalyticsRun.RECORDS))
