"""Launchers: read the lake, call a job, write its result. Nothing else happens here.

`lake_frame` reads a table of one cluster with partition pruning on cluster and date; the
results go to `<lake>/results/<job>/cluster=<id>/` (overwritten by each run), where the
pages read them with pyarrow (console.analytics.selectors).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow.fs as pafs
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from console.analytics import lake as L
from console.analytics.jobs import lag, rates, retention, share
from console.analytics.jobs.aggregates import on_native_engine
from console.analytics.storage import lake_filesystem

Progress = Callable[[str, int], None]


def lake_frame(spark: SparkSession, *, lake_url: str, table: str, cluster_id: int,
               since: dt.date | None = None) -> DataFrame:
    """A lake table of one cluster (from `since` on), without its partition columns; empty when
    no snapshot wrote the table yet (a cluster without share groups)."""
    fs, root = lake_filesystem(lake_url)
    if fs.get_file_info(L.table_url(root, table)).type.name != "Directory":
        return spark.createDataFrame([], L.spark_ddl(table))
    frame = (spark.read.schema(f"{L.spark_ddl(table)}, {L.CLUSTER} int, {L.DATE} date")
             .option("basePath", L.table_url(lake_url, table))
             .parquet(L.table_url(lake_url, table)))
    frame = frame.where(F.col(L.CLUSTER) == cluster_id)
    if since is not None:
        frame = frame.where(F.col(L.DATE) >= F.lit(since))
    return frame.drop(L.CLUSTER, L.DATE)


def result_write(frame: DataFrame, *, lake_url: str, job: str, cluster_id: int) -> None:
    """The job's result replaces the last one, an empty result too (pages tell "nothing found"
    from "never run" by the directory): Spark's JVM writes a file of no rows for it; Sail writes
    no file, and leaves the old ones, so for Sail the old result goes first and an empty
    Parquet file of the result's columns is written when Sail wrote none."""
    url = L.result_url(lake_url, job, cluster_id)
    if not on_native_engine(frame):
        frame.write.mode("overwrite").parquet(url)
        return
    fs, root = lake_filesystem(url)
    if fs.get_file_info(root).type.name == "Directory":
        fs.delete_dir(root)
    frame.write.mode("overwrite").parquet(url)
    if fs.get_file_info(root).type.name != "Directory":
        fs.create_dir(root)
        with fs.open_output_stream(f"{root}/part-00000-empty.parquet") as out:
            pq.write_table(frame.limit(0).toArrow(), out)


@dataclass(frozen=True)
class JobSpec:
    name: str
    build: Callable[[RunTables], DataFrame]


# The results the pages read. Horizons keep each history small: per group, 1-minute points
# for a day, 5-minute points for a week, hourly points for everything the run reads; per
# partition (one line per partition on a group's page), the last day at each resolution.
HISTORY_HORIZON_DAYS = {"1m": 1, "5m": 7, "1h": None}


def _recent(frame: DataFrame, days: int | None, newest: dt.datetime | None = None) -> DataFrame:
    if days is None:
        return frame
    newest = newest or frame.agg(F.max(L.TS)).first()[0]
    return frame if newest is None else frame.where(F.col(L.TS) >= F.lit(newest - dt.timedelta(days=days)))


class RunTables(dict):
    """A run's lake tables (read once, cached), and each table's newest snapshot time, asked of
    the table once per run rather than once per job."""

    def __init__(self, tables: dict[str, DataFrame]) -> None:
        super().__init__(tables)
        self.newest: dict[str, dt.datetime | None] = {}

    def recent(self, table: str, days: int | None) -> DataFrame:
        if days is not None and table not in self.newest:
            self.newest[table] = self[table].agg(F.max(L.TS)).first()[0]
        return _recent(self[table], days, self.newest.get(table))


def job_specs() -> list[JobSpec]:
    specs = []
    for name, seconds in lag.RESOLUTIONS.items():
        days = HISTORY_HORIZON_DAYS[name]
        specs.append(JobSpec(f"group_lag_{name}", lambda t, s=seconds, d=days: lag.group_lag_history(
            lag.lag_history(t.recent(L.GROUP_OFFSETS, d), resolution_seconds=s))))
        specs.append(JobSpec(f"partition_lag_{name}", lambda t, s=seconds, d=days: lag.lag_history(
            t.recent(L.GROUP_OFFSETS, min(d or 1, 1)), resolution_seconds=s)))
        specs.append(JobSpec(f"share_group_lag_{name}", lambda t, s=seconds, d=days: share.share_lag_history(
            t.recent(L.SHARE_GROUP_PARTITIONS, d), resolution_seconds=s)))
    specs += [
        JobSpec("time_lag", lambda t: _newest(lag.time_lag(t.recent(L.GROUP_OFFSETS, 1), t[L.PARTITIONS]))),
        JobSpec("partition_status", lambda t: lag.partition_status(t[L.GROUP_OFFSETS])),
        JobSpec("group_status", lambda t: lag.group_status(lag.partition_status(t[L.GROUP_OFFSETS]))),
        JobSpec("production_5m", lambda t: rates.production_rates(t[L.PARTITIONS], resolution_seconds=300)),
        JobSpec("consumption_5m", lambda t: rates.consumption_rates(t[L.GROUP_OFFSETS], resolution_seconds=300)),
        JobSpec("catch_up", lambda t: rates.catch_up(t[L.GROUP_OFFSETS], window_seconds=900)),
        JobSpec("topic_bytes_1h", lambda t: retention.topic_bytes(t[L.PARTITIONS], resolution_seconds=3600)),
        JobSpec("broker_bytes_1h", lambda t: retention.broker_bytes(t[L.LOG_DIRS], resolution_seconds=3600)),
        JobSpec("topic_growth", lambda t: retention.topic_growth(t[L.PARTITIONS], resolution_seconds=60)),
        JobSpec("days_until_full", lambda t: retention.days_until_full(t[L.LOG_DIRS])),
        JobSpec("effective_retention", lambda t: retention.effective_retention(t[L.PARTITIONS], t[L.TOPIC_CONFIGS])),
    ]
    return specs


def _newest(frame: DataFrame) -> DataFrame:
    """The rows of each group partition's newest snapshot."""
    newest = frame.groupBy(L.GROUP, L.TOPIC, L.PARTITION).agg(F.max(L.TS).alias(L.TS))
    return frame.join(newest, [L.GROUP, L.TOPIC, L.PARTITION, L.TS])


# Shuffle partitions per run: about this much Parquet input each (Spark's 200 cut a small lake
# into hundreds of tasks of milliseconds; a fixed 8 left a big one's sorts spilling), rounded up
# to whole waves of the cores (3 tasks on 2 cores run the third alone: jobs at 20M rows took
# 10-25% longer than with 2 or 4), and at most MAX_SHUFFLE_PARTITIONS. Adaptive Query Execution
# (on) coalesces the small ones after each shuffle.
SHUFFLE_PARTITION_BYTES = 32 * 2**20
MAX_SHUFFLE_PARTITIONS = 400


def shuffle_partitions(*, input_bytes: int, cores: int) -> int:
    wanted = -(-input_bytes // SHUFFLE_PARTITION_BYTES)
    waves = -(-wanted // cores)
    return max(cores, min(MAX_SHUFFLE_PARTITIONS, waves * cores))


def lake_input_bytes(*, lake_url: str, cluster_id: int, since: dt.date | None) -> int:
    """Bytes of the cluster's lake files from `since` on: what a run reads."""
    fs, root = lake_filesystem(lake_url)
    total = 0
    for table in L.TABLES:
        selector = pafs.FileSelector(f"{L.table_url(root, table)}/{L.CLUSTER}={cluster_id}", recursive=True,
                                     allow_not_found=True)
        for info in fs.get_file_info(selector):
            day = info.path.rsplit(f"{L.DATE}=", 1)[-1].split("/", 1)[0] if f"{L.DATE}=" in info.path else ""
            if info.is_file and (since is None or day >= since.isoformat()):
                total += info.size
    return total


def session_size_to(spark: SparkSession, *, input_bytes: int) -> None:
    """Shuffle partitions sized to the run's input (Spark's JVM; Sail plans its own, one per core)."""
    if on_native_engine(spark):
        return
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(
        input_bytes=input_bytes, cores=spark.sparkContext.defaultParallelism)))


def analytics_jobs_run(spark: SparkSession, *, lake_url: str, cluster_id: int, days: int,
                       today: dt.date, progress: Progress) -> dict[str, float]:
    """Run every job on the last `days` of the cluster's lake; returns seconds per job."""
    since = today - dt.timedelta(days=days)
    session_size_to(spark, input_bytes=lake_input_bytes(lake_url=lake_url, cluster_id=cluster_id, since=since))
    tables = RunTables({t: lake_frame(spark, lake_url=lake_url, table=t, cluster_id=cluster_id, since=since).cache()
                        for t in L.TABLES})
    timings = {}
    specs = job_specs()
    try:
        for done, spec in enumerate(specs):
            progress(spec.name, int(100 * done / len(specs)))
            started = dt.datetime.now()
            result_write(spec.build(tables), lake_url=lake_url, job=spec.name, cluster_id=cluster_id)
            timings[spec.name] = (dt.datetime.now() - started).total_seconds()
    finally:
        for frame in tables.values():
            frame.unpersist()
    progress("done", 100)
    return timings
