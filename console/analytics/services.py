"""Writes for analytics: request a run of the Spark jobs, execute it (from the Celery task),
and take snapshots. Events go out after commit."""
from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.accounts.services import audited
from console.analytics.collector import SnapshotSummary, snapshot_collect
from console.analytics.models import AnalyticsRun
from console.analytics.storage import lake_compact_day, lake_days, lake_prune
from console.clusters.models import Cluster
from console.errors import ConsoleError, InvalidInput
from console.events import notify_on_commit

log = logging.getLogger(__name__)
JOB_DAYS = 7          # the jobs read this many days of the lake


def analytics_run_request(*, cluster: Cluster, actor) -> AnalyticsRun:
    """Queue a run of every job for the cluster, unless one is already queued or running."""
    from console.analytics.tasks import analytics_run
    with audited(actor=actor, cluster=cluster, action="analytics.run", target=cluster.name, details={}) as details:
        with transaction.atomic():
            Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
            active = AnalyticsRun.objects.filter(cluster=cluster, state__in=AnalyticsRun.ACTIVE).first()
            if active is not None:
                raise InvalidInput(f"Analytics are already {active.state} for {cluster.name} (run {active.pk}).")
            run = AnalyticsRun.objects.create(cluster=cluster, requested_by=actor if getattr(actor, "pk", None) else None)
            details["run"] = run.pk
            transaction.on_commit(lambda: analytics_run.delay(run.pk))
    notify_on_commit("analytics.queued", {"cluster": cluster.pk, "run": run.pk})
    return run


def analytics_runs_schedule() -> list[AnalyticsRun]:
    """Beat's periodic run for every cluster that has none queued or running (not audited: no one asked)."""
    from console.analytics.tasks import analytics_run
    queued = []
    for cluster in Cluster.objects.exclude(analytics_runs__state__in=AnalyticsRun.ACTIVE):
        run = AnalyticsRun.objects.create(cluster=cluster)
        transaction.on_commit(lambda pk=run.pk: analytics_run.delay(pk))
        queued.append(run)
    return queued


def analytics_run_execute(*, run_id: int, spark) -> AnalyticsRun | None:
    """Run the jobs of a queued run (idempotent: a run that is not queued any more is left alone)."""
    from console.analytics.launch import analytics_jobs_run
    with transaction.atomic():
        run = AnalyticsRun.objects.select_for_update().filter(pk=run_id, state=AnalyticsRun.QUEUED).first()
        if run is None:
            return None
        run.state, run.started_at = AnalyticsRun.RUNNING, timezone.now()
        run.save(update_fields=["state", "started_at"])
    notify_on_commit("analytics.progress", {"cluster": run.cluster_id, "run": run.pk, "progress": 0})

    def progress(step: str, percent: int) -> None:
        AnalyticsRun.objects.filter(pk=run.pk).update(step=step, progress=percent)
        notify_on_commit("analytics.progress", {"cluster": run.cluster_id, "run": run.pk, "progress": percent})

    try:
        timings = analytics_jobs_run(spark, lake_url=settings.ANALYTICS_LAKE, cluster_id=run.cluster_id,
                                     days=JOB_DAYS, today=dt.datetime.now(dt.timezone.utc).date(), progress=progress)
    except Exception as exc:  # noqa: BLE001 - any Spark failure ends the run with its message
        log.exception("analytics run %s failed", run.pk)
        _finish(run, state=AnalyticsRun.FAILED, error=str(exc).splitlines()[0][:2000] if str(exc) else repr(exc))
        return run
    _finish(run, state=AnalyticsRun.DONE, job_seconds=timings)
    return run


def _finish(run: AnalyticsRun, *, state: str, error: str = "", job_seconds: dict | None = None) -> None:
    run.refresh_from_db()
    run.state, run.finished_at, run.error = state, timezone.now(), error
    run.job_seconds = job_seconds or {}
    if state == AnalyticsRun.DONE:
        run.progress = 100
    run.save(update_fields=["state", "finished_at", "error", "job_seconds", "progress"])
    notify_on_commit(f"analytics.{state}", {"cluster": run.cluster_id, "run": run.pk})


def snapshots_take(*, lake_url: str) -> list[SnapshotSummary]:
    """One snapshot of every registered cluster; a cluster that cannot be asked is skipped (logged)."""
    taken = []
    for cluster in Cluster.objects.all():
        try:
            taken.append(snapshot_collect(cluster=cluster, lake_url=lake_url))
        except ConsoleError as exc:
            log.warning("no analytics snapshot of %s: %s", cluster.name, exc)
    return taken


def lake_upkeep(*, lake_url: str, retention_days: int, today: dt.date) -> None:
    """Compact finished days into one file per table, then drop days past the lake's retention."""
    for cluster_id in Cluster.objects.values_list("pk", flat=True):
        for day in lake_days(lake_url=lake_url, cluster_id=cluster_id):
            lake_compact_day(lake_url=lake_url, cluster_id=cluster_id, day=day, today=today)
    lake_prune(lake_url=lake_url, retention_days=retention_days, today=today)
