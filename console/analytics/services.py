"""Writes for analytics: request a run of the Spark jobs, execute it (from the Celery task),
and take snapshots. Events go out after commit."""
from __future__ import annotations

import datetime as dt
import logging
import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.accounts.services import audited
from console.analytics.collector import SnapshotSummary, snapshot_collect
from console.analytics.models import AnalyticsRun
from console.analytics.storage import lake_compact_day, lake_days, lake_prune
from console.clusters.models import Cluster
from console.enqueue import enqueue_on_commit
from console.errors import ConsoleError, InvalidInput
from console.events import notify_on_commit

log = logging.getLogger(__name__)
JOB_DAYS = 7          # the jobs read this many days of the lake
RUN_TASK = "console.analytics.tasks.analytics_run"


KIND_NAMES = {AnalyticsRun.LAKE: "Analytics", AnalyticsRun.RECORDS: "Topic contents analytics",
              AnalyticsRun.WHAT_IF: "A retention what-if"}


def analytics_run_request(*, cluster: Cluster, actor, kind: str = AnalyticsRun.LAKE, params: dict | None = None,
                          target: str = "") -> AnalyticsRun:
    """Queue a run of `kind` for the cluster, unless one of that kind is already queued or running."""
    action = {AnalyticsRun.LAKE: "analytics.run", AnalyticsRun.RECORDS: "analytics.records",
              AnalyticsRun.WHAT_IF: "analytics.what_if"}[kind]
    with audited(actor=actor, cluster=cluster, action=action, target=target or cluster.name,
                 details=dict(params or {})) as details:
        with transaction.atomic():
            Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
            active = AnalyticsRun.objects.filter(cluster=cluster, kind=kind, state__in=AnalyticsRun.ACTIVE).first()
            if active is not None:
                raise InvalidInput(f"{KIND_NAMES[kind]} run is already {active.state} for {cluster.name} "
                                   f"(run {active.pk}).")
            run = AnalyticsRun.objects.create(cluster=cluster, kind=kind, params=params or {},
                                              requested_by=actor if getattr(actor, "pk", None) else None)
            details["run"] = run.pk
            enqueue_on_commit(RUN_TASK, run.pk)
    notify_on_commit("analytics.queued", {"cluster": cluster.pk, "run": run.pk, "kind": kind})
    return run


def what_if_request(*, cluster: Cluster, actor, topic: str, retention_ms: int | None,
                    retention_bytes: int | None) -> AnalyticsRun:
    """Queue a retention what-if for one topic (None or -1: that limit is off, as in Kafka)."""
    retention_ms = None if retention_ms == -1 else retention_ms
    retention_bytes = None if retention_bytes == -1 else retention_bytes
    if retention_ms is None and retention_bytes is None:
        raise InvalidInput("Give retention.ms or retention.bytes (or both): with neither, nothing is deleted.")
    if retention_ms is not None and retention_ms < 1 or retention_bytes is not None and retention_bytes < 0:
        raise InvalidInput("retention.ms must be at least 1 and retention.bytes at least 0 (or -1: no limit).")
    return analytics_run_request(cluster=cluster, actor=actor, kind=AnalyticsRun.WHAT_IF, target=topic, params={
        "topic": topic, "retention_ms": retention_ms, "retention_bytes": retention_bytes})


def analytics_runs_schedule(*, kind: str = AnalyticsRun.LAKE) -> list[AnalyticsRun]:
    """Beat's periodic run of `kind` for every cluster that has none queued or running (not audited: no one asked)."""
    queued = []
    busy = AnalyticsRun.objects.filter(kind=kind, state__in=AnalyticsRun.ACTIVE).values("cluster")
    for cluster in Cluster.objects.exclude(pk__in=busy):
        run = AnalyticsRun.objects.create(cluster=cluster, kind=kind)
        enqueue_on_commit(RUN_TASK, run.pk)
        queued.append(run)
    return queued


def analytics_run_execute(*, run_id: int, spark) -> AnalyticsRun | None:
    """Run the jobs of a queued run (idempotent: a run that is not queued any more is left alone)."""
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
        timings, result = _execute(run, spark=spark, progress=progress)
    except Exception as exc:  # noqa: BLE001 - any Spark failure ends the run with its message
        log.exception("analytics run %s failed", run.pk)
        _finish(run, state=AnalyticsRun.FAILED, error=str(exc).splitlines()[0][:2000] if str(exc) else repr(exc))
        return run
    _finish(run, state=AnalyticsRun.DONE, job_seconds=timings, result=result)
    return run


def _execute(run: AnalyticsRun, *, spark, progress) -> tuple[dict[str, float], dict]:
    """Call the launcher of the run's kind: ({job: seconds}, result kept on the run row)."""
    from console.analytics import launch, launch_topics
    now = dt.datetime.now(dt.timezone.utc)
    since = now.date() - dt.timedelta(days=JOB_DAYS)
    lake_url = settings.ANALYTICS_LAKE
    if run.kind == AnalyticsRun.WHAT_IF:
        progress("what-if", 0)
        started = time.monotonic()
        result = launch_topics.what_if_run(spark, lake_url=lake_url, cluster_id=run.cluster_id, since=since, now=now,
                                           topic=run.params["topic"], retention_ms=run.params["retention_ms"],
                                           retention_bytes=run.params["retention_bytes"])
        return {"what_if": time.monotonic() - started}, result
    if run.kind == AnalyticsRun.RECORDS:
        return launch_topics.records_jobs_run(
            spark, lake_url=lake_url, cluster_id=run.cluster_id, since=since, now=now,
            source_options=source_options(run.cluster), per_partition=settings.ANALYTICS_RECORDS_PER_PARTITION,
            progress=progress), {}
    return launch.analytics_jobs_run(spark, lake_url=lake_url, cluster_id=run.cluster_id, days=JOB_DAYS,
                                     today=now.date(), progress=progress), {}


def source_options(cluster: Cluster) -> dict[str, str]:
    """The Kafka data source's options for the cluster (the SASL password only in memory, never logged)."""
    conn = cluster.connection_settings()
    options = {"kafka.bootstrap.servers": conn.bootstrap_servers, "kafka.security.protocol": conn.security_protocol}
    if conn.sasl_mechanism:
        options.update({"kafka.sasl.mechanism": conn.sasl_mechanism, "kafka.sasl.username": conn.sasl_username,
                        "kafka.sasl.password": conn.sasl_password})
    return options


def _finish(run: AnalyticsRun, *, state: str, error: str = "", job_seconds: dict | None = None,
            result: dict | None = None) -> None:
    run.refresh_from_db()
    run.state, run.finished_at, run.error = state, timezone.now(), error
    run.job_seconds, run.result = job_seconds or {}, result or {}
    if state == AnalyticsRun.DONE:
        run.progress = 100
    run.save(update_fields=["state", "finished_at", "error", "job_seconds", "result", "progress"])
    notify_on_commit(f"analytics.{state}", {"cluster": run.cluster_id, "run": run.pk, "kind": run.kind})


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
