"""Writes for analytics: request a run of the Spark jobs, execute it (from the Celery task),
and take snapshots. Events go out after commit."""
from __future__ import annotations

import datetime as dt
import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models import Q
from django.utils import timezone

from console.accounts.services import audited
from console.analytics.collector import SnapshotSummary, snapshot_collect
from console.analytics.liveness import heartbeat
from console.analytics.models import AnalyticsRun
from console.analytics.storage import lake_compact_day, lake_days, lake_prune
from console.clusters.models import Cluster
from console.enqueue import QueueUnavailable, enqueue, enqueue_on_commit
from console.errors import ConsoleError, InvalidInput
from console.events import notify_on_commit
from console.kafka_gateway.oauth_tokens import librdkafka_oauth_options
from console.kafka_gateway.tls_stores import librdkafka_ssl_options

log = logging.getLogger(__name__)
JOB_DAYS = 7          # the jobs read this many days of the lake
RUN_TASK = "console.analytics.tasks.analytics_run"


KIND_NAMES = {AnalyticsRun.LAKE: "Analytics", AnalyticsRun.RECORDS: "Topic contents analytics",
              AnalyticsRun.WHAT_IF: "A retention what-if"}


def analytics_run_request(*, cluster: Cluster, actor, kind: str = AnalyticsRun.LAKE, params: dict | None = None,
                          target: str = "") -> AnalyticsRun:
    """Queue a run of `kind` for the cluster, unless one of that kind is already queued or
    running. With the task queue down: QueueUnavailable at once, and the run is failed with
    that reason, not left queued."""
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
            analytics_run_send_on_commit(run=run)
    notify_on_commit("analytics.queued", {"cluster": cluster.pk, "run": run.pk, "kind": kind})
    return run


def analytics_run_send_on_commit(*, run: AnalyticsRun, raise_unsent: bool = True) -> None:
    """Send a queued run to the analytics queue once its row is committed (the worker reads
    it). If the broker cannot take it, the run fails with the reason, and QueueUnavailable goes
    on to the caller (out of the commit) if `raise_unsent`: no run stays queued for a task never sent."""
    run_id = run.pk

    def fail(exc: QueueUnavailable) -> bool:
        analytics_run_fail(run_id=run_id, states=(AnalyticsRun.QUEUED,), error=str(exc))
        return raise_unsent
    AnalyticsRun.objects.filter(pk=run_id).update(sent_at=timezone.now())
    enqueue_on_commit(RUN_TASK, run_id, what=f"analytics run {run_id}", on_failure=fail)


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
    """Beat's periodic run of `kind` for every cluster that has none queued or running (not
    audited: no one asked). A run the task queue cannot take is failed with the reason (logged)."""
    queued = []
    busy = AnalyticsRun.objects.filter(kind=kind, state__in=AnalyticsRun.ACTIVE).values("cluster")
    for cluster in Cluster.objects.exclude(pk__in=busy):
        run = AnalyticsRun.objects.create(cluster=cluster, kind=kind)
        analytics_run_send_on_commit(run=run, raise_unsent=False)
        queued.append(run)
    return queued


def analytics_run_execute(*, run_id: int, spark, worker: str = "") -> AnalyticsRun | None:
    """Run the jobs of a queued run (idempotent: a run that is not queued any more is left
    alone). `spark` is a SparkSession, or a function that starts one: then the run is already
    "running", with its heartbeat, while Spark starts, and a Spark that cannot start fails it.
    `worker` names the process, for the watchdog's message if it dies."""
    with transaction.atomic():
        run = AnalyticsRun.objects.select_for_update().filter(pk=run_id, state=AnalyticsRun.QUEUED).first()
        if run is None:
            return None
        now = timezone.now()
        run.state, run.started_at, run.heartbeat_at, run.worker = AnalyticsRun.RUNNING, now, now, worker[:200]
        run.save(update_fields=["state", "started_at", "heartbeat_at", "worker"])
    notify_on_commit("analytics.progress", {"cluster": run.cluster_id, "run": run.pk, "progress": 0})

    def progress(step: str, percent: int) -> None:
        AnalyticsRun.objects.filter(pk=run.pk).update(step=step, progress=percent)
        notify_on_commit("analytics.progress", {"cluster": run.cluster_id, "run": run.pk, "progress": percent})

    with heartbeat(run_id=run.pk, every_seconds=settings.ANALYTICS_HEARTBEAT_SECONDS):
        try:
            session = spark() if callable(spark) else spark
            timings, result = _execute(run, spark=session, progress=progress)
        except Exception as exc:  # noqa: BLE001 - any Spark failure ends the run with its message
            log.exception("analytics run %s failed", run.pk)
            from console.analytics.spark import run_error
            _finish(run, state=AnalyticsRun.FAILED, error=run_error(exc))
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
    """The Kafka data source's options for the cluster: librdkafka's settings as `kafka.*` (the
    SASL and TLS passwords and the OAuth client secret only in memory, never logged). With
    OAUTHBEARER librdkafka gets its own tokens from the token endpoint (its `oidc` method, the
    client credentials grant). TlsStoreError when a TLS store cannot be read."""
    conn = cluster.connection_settings()
    options = {"kafka.bootstrap.servers": conn.bootstrap_servers, "kafka.security.protocol": conn.security_protocol}
    if conn.uses_oauth:
        options.update({f"kafka.{key}": value for key, value in librdkafka_oauth_options(conn).items()})
    elif conn.sasl_mechanism:
        options.update({"kafka.sasl.mechanism": conn.sasl_mechanism, "kafka.sasl.username": conn.sasl_username,
                        "kafka.sasl.password": conn.sasl_password})
    if conn.uses_tls:
        options.update({f"kafka.{key}": value for key, value in librdkafka_ssl_options(conn).items()})
    return options


def analytics_run_fail(*, run_id: int, states: tuple[str, ...], error: str, silent_since=None) -> bool:
    """Fail the run if it is still in one of `states` (and, with `silent_since`, its heartbeat
    is still older than that): a worker may have moved it meanwhile."""
    with transaction.atomic():
        found = AnalyticsRun.objects.select_for_update().filter(pk=run_id, state__in=states)
        if silent_since is not None:
            found = found.filter(_silent(silent_since))
        run = found.first()
        if run is None:
            return False
        _finish(run, state=AnalyticsRun.FAILED, error=error)
    return True


# A running run is silent when its heartbeat is older than this many heartbeats (liveness.py).
STALE_HEARTBEATS = 4


def _silent(since) -> Q:
    """Runs whose last heartbeat (or start, for a run from before heartbeats) is before `since`."""
    return Q(heartbeat_at__lt=since) | Q(heartbeat_at__isnull=True, started_at__lt=since)


def analytics_watchdog_sweep() -> dict[str, list[int]]:
    """Fail runs whose worker went silent; send again, or fail, runs nobody took. Returns the
    run ids it acted on, by what it did."""
    close_old_connections()
    now = timezone.now()
    acted: dict[str, list[int]] = {"failed_silent": [], "resent": [], "failed_unclaimed": []}
    silent_since = now - timedelta(seconds=STALE_HEARTBEATS * settings.ANALYTICS_HEARTBEAT_SECONDS)
    for run in AnalyticsRun.objects.filter(_silent(silent_since), state=AnalyticsRun.RUNNING):
        worker = f"its worker ({run.worker})" if run.worker else "its worker"
        if analytics_run_fail(run_id=run.pk, states=(AnalyticsRun.RUNNING,), silent_since=silent_since,
                              error=f"{worker} stopped while it ran: no heartbeat since "
                                    f"{run.heartbeat_at or run.started_at:%Y-%m-%d %H:%M:%S} UTC. Run it again."):
            acted["failed_silent"].append(run.pk)
    queued = AnalyticsRun.objects.filter(state=AnalyticsRun.QUEUED)
    too_old = now - timedelta(seconds=settings.ANALYTICS_QUEUED_MAX_SECONDS)
    for run in queued.filter(created_at__lt=too_old):
        if analytics_run_fail(run_id=run.pk, states=(AnalyticsRun.QUEUED,),
                              error=f"No analytics worker took this run within "
                                    f"{settings.ANALYTICS_QUEUED_MAX_SECONDS} s: is a worker consuming the "
                                    "analytics queue (celery worker -Q analytics)?"):
            acted["failed_unclaimed"].append(run.pk)
    resend_before = now - timedelta(seconds=settings.ANALYTICS_QUEUED_RESEND_SECONDS)
    unsent = Q(sent_at__lt=resend_before) | Q(sent_at__isnull=True, created_at__lt=resend_before)
    for run in queued.filter(unsent, created_at__gte=too_old):
        try:
            enqueue(RUN_TASK, run.pk, what=f"analytics run {run.pk}")
        except QueueUnavailable as exc:
            log.warning("%s", exc)
            break
        AnalyticsRun.objects.filter(pk=run.pk).update(sent_at=timezone.now())
        acted["resent"].append(run.pk)
    return acted


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
