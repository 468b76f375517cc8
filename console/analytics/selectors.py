"""Reads for the analytics pages and API: job results from the lake (pyarrow, milliseconds)
and the run rows. Nothing here starts Spark."""
from __future__ import annotations

from dataclasses import dataclass

import logging

import pyarrow as pa
from django.db.models import Count, Max
import pyarrow.compute as pc
import pyarrow.dataset as ds

from console.analytics import lake as L
from console.analytics.jobs.lag import DEFAULT_WINDOW
from console.analytics.jobs.rates import CATCH_UP_SECONDS, CONSUME_RATE, PRODUCE_RATE, RATE
from console.analytics.jobs.retention import PROJECTION_MIN_SECONDS, SPAN_SECONDS
from console.analytics.models import AnalyticsRun
from console.analytics.storage import lake_filesystem
from console.clusters.models import Cluster

RESOLUTIONS = ("1m", "5m", "1h")
STATUS_SNAPSHOTS = DEFAULT_WINDOW        # the snapshots a group's lag trend is judged over
PROJECTED = "projected"                  # a growth row's per-day figures are shown (jobs.retention)
NEWEST_AT = "newest_at"                  # a group row's newest lag point (its page's lag box dates it so)
RUN_LABELS = {AnalyticsRun.LAKE: "Lag, rates and retention", AnalyticsRun.RECORDS: "Topic contents"}
log = logging.getLogger(__name__)


def result_dataset(*, lake_url: str, job: str, cluster_id: int) -> ds.Dataset | None:
    """A job's latest result as a Parquet dataset, None before its first run."""
    fs, root = lake_filesystem(lake_url)
    path = L.result_url(root, job, cluster_id)
    if fs.get_file_info(path).type.name != "Directory":
        return None
    return ds.dataset(path, format="parquet", filesystem=fs)


def result_rows(*, lake_url: str, job: str, cluster_id: int, where: dict | None = None,
                sort: str | None = None) -> list[dict]:
    """A job's latest result as rows (empty before its first run), filtered by equality."""
    dataset = result_dataset(lake_url=lake_url, job=job, cluster_id=cluster_id)
    if dataset is None:
        return []
    if any(column not in dataset.schema.names for column in (where or {})):
        return []           # a run that found nothing wrote no rows (and no columns)
    condition = None
    for column, value in (where or {}).items():
        term = pc.field(column) == value
        condition = term if condition is None else condition & term
    table = dataset.to_table(filter=condition)
    if sort and table.num_rows:
        table = table.sort_by(sort)
    return table.to_pylist()


@dataclass(frozen=True)
class RunInfo:
    id: int
    state: str
    step: str
    progress: int
    created_at: object
    started_at: object
    finished_at: object
    duration_seconds: float | None
    error: str
    kind: str = AnalyticsRun.LAKE
    params: dict | None = None

    @classmethod
    def of(cls, run: AnalyticsRun | None) -> RunInfo | None:
        if run is None:
            return None
        return cls(run.pk, run.state, run.step, run.progress, run.created_at, run.started_at, run.finished_at,
                   run.duration_seconds, run.error, run.kind, run.params)


def run_latest(*, cluster: Cluster, kind: str = AnalyticsRun.LAKE) -> RunInfo | None:
    return RunInfo.of(AnalyticsRun.objects.filter(cluster=cluster, kind=kind).first())


def run_last_finished(*, cluster: Cluster, kind: str = AnalyticsRun.LAKE) -> RunInfo | None:
    return RunInfo.of(AnalyticsRun.objects.filter(cluster=cluster, kind=kind, state=AnalyticsRun.DONE)
                      .order_by("-finished_at").first())


def runs_state(*, cluster: Cluster) -> list[dict]:
    """The run lines of every page: per kind of run (lake jobs, topic contents), the latest run
    and the last finished one."""
    return [{"kind": kind, "label": label, "run": run_latest(cluster=cluster, kind=kind),
             "last_finished": run_last_finished(cluster=cluster, kind=kind)} for kind, label in RUN_LABELS.items()]


def runs_signature(*, cluster_id: int) -> tuple:
    """Changes whenever a run of the cluster is queued, moves or ends: the live fragments
    re-read the lake's results only then, not on every poll."""
    runs = AnalyticsRun.objects.filter(cluster_id=cluster_id)
    active = tuple(runs.filter(state__in=AnalyticsRun.ACTIVE).values_list("id", "state", "progress", "step"))
    return runs.aggregate(newest=Max("id"), finished=Max("finished_at"), count=Count("id")), active


def what_if_latest(*, cluster: Cluster, topic: str) -> dict | None:
    """The topic's newest what-if: {run, params, result} (result empty until it is done)."""
    run = AnalyticsRun.objects.filter(cluster=cluster, kind=AnalyticsRun.WHAT_IF, params__topic=topic).first()
    if run is None:
        return None
    return {"run": RunInfo.of(run), "params": run.params, "result": run.result or None}


def newest_points(*, lake_url: str, job: str, cluster_id: int, key: str) -> dict:
    """{key value: its newest bucket} of a job's history: the time of the newest point a chart
    of it draws. Reads only the two columns."""
    dataset = result_dataset(lake_url=lake_url, job=job, cluster_id=cluster_id)
    if dataset is None or key not in dataset.schema.names or L.BUCKET not in dataset.schema.names:
        return {}
    newest = dataset.to_table(columns=[key, L.BUCKET]).group_by(key).aggregate([(L.BUCKET, "max")])
    return dict(zip(newest.column(key).to_pylist(), newest.column(L.BUCKET + "_max").to_pylist()))


def group_statuses(*, lake_url: str, cluster: Cluster) -> dict[str, dict]:
    """{group_id: {status, reason, lag}}: the badges of the groups list. A lake that cannot be
    read (an unreachable s3a:// store) costs the badges, never the groups page."""
    try:
        rows = result_rows(lake_url=lake_url, job="group_status", cluster_id=cluster.pk)
    except (OSError, pa.ArrowException) as exc:
        log.warning("group status badges unavailable: %s", exc)
        return {}
    return {r[L.GROUP]: r for r in rows}


def _dated_rows(*, lake_url: str, cluster: Cluster, run: RunInfo | None):
    """A reader of the job results a finished run left (`rows(job, where=, sort=)`). With no
    finished run of that kind the results cannot be dated, so none are shown: a status or a lag
    of unknown age would read as current."""
    def rows(job: str, **kw) -> list[dict]:
        return result_rows(lake_url=lake_url, job=job, cluster_id=cluster.pk, **kw) if run else []
    return rows


def group_figures(*, lag_history: list[dict], consumption: list[dict], catch_up: dict | None,
                  status: dict | None) -> dict:
    """The group page's summary boxes, read from the rows its charts are drawn from: the total lag
    and the consumption rate at the newest point of each chart (with that point's time), and the
    members and produce rate of the catch-up estimate. A figure a chart lacks falls back to the
    catch-up estimate, then to the status row."""
    newest_lag = lag_history[-1] if lag_history else None
    newest_rate = consumption[-1] if consumption else None
    catch_up, status = catch_up or {}, status or {}
    lag = newest_lag[L.LAG] if newest_lag else catch_up.get(L.LAG, status.get(L.LAG))
    return {
        L.LAG: lag, "lag_at": newest_lag[L.BUCKET] if newest_lag else None,
        CONSUME_RATE: newest_rate[RATE] if newest_rate else catch_up.get(CONSUME_RATE),
        "consume_at": newest_rate[L.BUCKET] if newest_rate else None,
        L.MEMBERS: catch_up.get(L.MEMBERS, status.get(L.MEMBERS)),
        PRODUCE_RATE: catch_up.get(PRODUCE_RATE),
    }


def with_projection(*, rows: list[dict]) -> list[dict]:
    """Growth rows (topic_growth, days_until_full), each with PROJECTED: whether its snapshots
    span PROJECTION_MIN_SECONDS, below which a per-day figure is not shown. A row of a run
    before the span was recorded has none, and is not projected until the next run."""
    return [{**r, PROJECTED: (r.get(SPAN_SECONDS) or 0) >= PROJECTION_MIN_SECONDS} for r in rows]


def cluster_analytics(*, lake_url: str, cluster: Cluster) -> dict:
    last_finished = run_last_finished(cluster=cluster)
    contents_run = run_last_finished(cluster=cluster, kind=AnalyticsRun.RECORDS)
    rows = _dated_rows(lake_url=lake_url, cluster=cluster, run=last_finished)
    contents = _dated_rows(lake_url=lake_url, cluster=cluster, run=contents_run)
    growth = with_projection(rows=rows("topic_growth", sort=L.TOPIC))
    catch_up = {r[L.GROUP]: r for r in rows("catch_up")}
    # Each group's newest lag point, as its own page's lag box and chart (5m, their default) date it.
    newest_lag = newest_points(lake_url=lake_url, job="group_lag_5m", cluster_id=cluster.pk,
                               key=L.GROUP) if last_finished else {}
    return {
        "run": run_latest(cluster=cluster), "last_finished": last_finished, "contents_run": contents_run,
        "runs": runs_state(cluster=cluster),
        "compaction": contents("compaction", sort=L.TOPIC),
        "groups": [{**g, CATCH_UP_SECONDS: catch_up.get(g[L.GROUP], {}).get(CATCH_UP_SECONDS),
                    L.MEMBERS: catch_up.get(g[L.GROUP], {}).get(L.MEMBERS, g.get(L.MEMBERS)),
                    NEWEST_AT: newest_lag.get(g[L.GROUP])}
                   for g in rows("group_status", sort=L.GROUP)],
        "log_dirs": with_projection(rows=rows("days_until_full", sort=L.BROKER)),
        "projection_min_seconds": PROJECTION_MIN_SECONDS,
        "topic_growth": growth,
        "growth_by_topic": {r[L.TOPIC]: r for r in growth},
        "retention": rows("effective_retention", sort=L.TOPIC),
        "broker_bytes": rows("broker_bytes_1h", sort=L.BUCKET),
        "production": rows("production_5m", sort=L.BUCKET),
    }


def group_analytics(*, lake_url: str, cluster: Cluster, group_id: str, resolution: str = "5m") -> dict:
    if resolution not in RESOLUTIONS:
        resolution = "5m"
    group = {L.GROUP: group_id}
    last_finished = run_last_finished(cluster=cluster)
    rows = _dated_rows(lake_url=lake_url, cluster=cluster, run=last_finished)
    status = rows("group_status", where=group)
    catch_up = rows("catch_up", where=group)
    lag_history = rows(f"group_lag_{resolution}", where=group, sort=L.BUCKET)
    consumption = rows("consumption_5m", where=group, sort=L.BUCKET)
    status, catch_up = (status[0] if status else None), (catch_up[0] if catch_up else None)
    return {
        "group_id": group_id, "resolution": resolution, "run": run_latest(cluster=cluster),
        "last_finished": last_finished, "runs": runs_state(cluster=cluster),
        "status": status, "catch_up": catch_up,
        "figures": group_figures(lag_history=lag_history, consumption=consumption, catch_up=catch_up, status=status),
        "partitions": rows("partition_status", where=group, sort=L.PARTITION),
        "time_lag": rows("time_lag", where=group, sort=L.PARTITION),
        "lag_history": lag_history,
        "partition_lag_history": rows(f"partition_lag_{resolution}", where=group, sort=L.BUCKET),
        "consumption": consumption,
    }


def topic_analytics(*, lake_url: str, cluster: Cluster, topic: str) -> dict:
    where = {L.TOPIC: topic}
    last_finished = run_last_finished(cluster=cluster)
    contents_run = run_last_finished(cluster=cluster, kind=AnalyticsRun.RECORDS)
    rows = _dated_rows(lake_url=lake_url, cluster=cluster, run=last_finished)
    contents = _dated_rows(lake_url=lake_url, cluster=cluster, run=contents_run)
    growth = with_projection(rows=rows("topic_growth", where=where))
    retention = rows("effective_retention", where=where)
    compaction = contents("compaction", where=where)
    return {
        "topic": topic, "run": run_latest(cluster=cluster), "last_finished": last_finished,
        "contents_run": contents_run, "runs": runs_state(cluster=cluster),
        "growth": growth[0] if growth else None, "retention": retention[0] if retention else None,
        "projection_min_seconds": PROJECTION_MIN_SECONDS,
        "compaction": compaction[0] if compaction else None,
        "record_sizes": contents("record_sizes", where=where, sort="size_bin_bytes"),
        "record_ages": contents("record_ages", where=where, sort="age_bin_seconds"),
        "what_if": what_if_latest(cluster=cluster, topic=topic),
        "bytes": rows("topic_bytes_1h", where=where, sort=L.BUCKET),
        "production": rows("production_5m", where=where, sort=L.BUCKET),
    }
