"""Launchers of the runs about topics: the jobs over topic contents (compaction savings, record
sizes and ages), read through the Kafka data source, and the retention what-if over the lake.

Contents jobs read at most `per_partition` of the newest records of every non-internal
partition the lake's newest snapshot holds (offsets from that snapshot, so Spark plans a
fixed range), once, cached, for all three jobs. Results go to `<lake>/results/<job>/cluster=<id>/`
like the lake jobs'.
"""
from __future__ import annotations

import datetime as dt
import json
import time
import uuid

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from console.analytics import lake as L
from console.analytics.cluster_check import brokers_reachable
from console.analytics.jobs import records, retention
from console.analytics.jobs.aggregates import on_native_engine
from console.analytics.launch import Progress, lake_frame, result_write
from console.analytics.spark import is_cluster
from console.analytics.storage import lake_filesystem
from console.kafka_gateway.spark_source import NAME as KAFKA_SOURCE
from console.kafka_gateway.spark_source import ARROW_SCHEMA_OPTION, SCHEMA

RECORD_JOBS = ("compaction", "record_sizes", "record_ages")
# Where a run on Sail keeps the records it read for its three jobs, under the lake (Spark skips
# `_` directories in it); removed when the run ends.
RECORDS_SCRATCH_DIR = "_records"


def _newest_snapshot(spark: SparkSession, *, lake_url: str, cluster_id: int, since: dt.date) -> DataFrame:
    partitions = lake_frame(spark, lake_url=lake_url, table=L.PARTITIONS, cluster_id=cluster_id, since=since)
    newest = partitions.agg(F.max(L.TS)).first()[0]
    return partitions.where(F.col(L.TS) == F.lit(newest)) if newest is not None else partitions.limit(0)


def read_ranges(spark: SparkSession, *, lake_url: str, cluster_id: int, since: dt.date,
                per_partition: int) -> dict[str, dict[str, tuple[int, int]]]:
    """{topic: {partition: (start, end)}}: the newest `per_partition` offsets of each non-empty,
    non-internal partition in the newest snapshot."""
    ranges: dict[str, dict[str, tuple[int, int]]] = {}
    for row in _newest_snapshot(spark, lake_url=lake_url, cluster_id=cluster_id, since=since).collect():
        start, end = max(row[L.LOG_START_OFFSET], row[L.LOG_END_OFFSET] - per_partition), row[L.LOG_END_OFFSET]
        if end > start and not row[L.TOPIC].startswith("__"):
            ranges.setdefault(row[L.TOPIC], {})[str(row[L.PARTITION])] = (start, end)
    return ranges


def records_jobs_run(spark: SparkSession, *, lake_url: str, cluster_id: int, since: dt.date, now: dt.datetime,
                     source_options: dict[str, str], per_partition: int, progress: Progress) -> dict[str, float]:
    """Compaction savings, size and age distributions of the topics' newest records; seconds per job."""
    progress("read offsets", 0)
    if not on_native_engine(spark) and is_cluster(spark.sparkContext.master):
        brokers_reachable(spark, bootstrap_servers=source_options["kafka.bootstrap.servers"])
    ranges = read_ranges(spark, lake_url=lake_url, cluster_id=cluster_id, since=since, per_partition=per_partition)
    reader = spark.read.format(KAFKA_SOURCE).options(**source_options)
    if on_native_engine(spark):
        reader = reader.option(ARROW_SCHEMA_OPTION, "true")
    if ranges:
        frame = (reader.option("assign", json.dumps({t: [int(p) for p in ps] for t, ps in ranges.items()}))
                 .option("startingOffsets", json.dumps({t: {p: r[0] for p, r in ps.items()} for t, ps in ranges.items()}))
                 .option("endingOffsets", json.dumps({t: {p: r[1] for p, r in ps.items()} for t, ps in ranges.items()}))
                 .load())
    else:   # nothing to read: empty results, so the pages say "no records" rather than showing old ones
        frame = spark.createDataFrame([], SCHEMA)
    scratch = f"{lake_url.rstrip('/')}/{RECORDS_SCRATCH_DIR}/{cluster_id}-{uuid.uuid4().hex}"
    builds = {"compaction": lambda: records.compaction_savings(frame),
              "record_sizes": lambda: records.size_distribution(frame, bin_bytes=L.SIZE_BIN_BYTES),
              "record_ages": lambda: records.age_distribution(frame, now=now, bin_seconds=L.AGE_BIN_SECONDS)}
    timings = {}
    try:
        frame = _read_once(spark, frame, scratch=scratch)
        for done, job in enumerate(RECORD_JOBS):
            progress(job, int(100 * done / len(RECORD_JOBS)))
            started = time.monotonic()
            result_write(builds[job](), lake_url=lake_url, job=job, cluster_id=cluster_id)
            timings[job] = time.monotonic() - started
    finally:
        frame.unpersist()
        if on_native_engine(spark):
            _scratch_remove(scratch)
    progress("done", 100)
    return timings


def _read_once(spark: SparkSession, frame: DataFrame, *, scratch: str) -> DataFrame:
    """The records read once for the three jobs: cached by Spark's JVM; Sail's cache() does
    nothing, so there they are written to Parquet at `scratch` (under the lake, which Sail
    reads on this machine) and read back."""
    if not on_native_engine(spark):
        return frame.cache()
    frame.write.parquet(scratch)
    return spark.read.schema(SCHEMA).parquet(scratch)


def _scratch_remove(scratch: str) -> None:
    fs, root = lake_filesystem(scratch)
    try:
        fs.delete_dir(root)
    except FileNotFoundError:
        pass


def what_if_run(spark: SparkSession, *, lake_url: str, cluster_id: int, since: dt.date, now: dt.datetime, topic: str,
                retention_ms: int | None, retention_bytes: int | None) -> dict:
    """The what-if of one topic: {topic, size_bytes, kept_bytes, freed_bytes, method, partitions: [...]}
    (see jobs.retention.retention_what_if_partitions); size 0 and no partitions when the lake has none."""
    def table(name: str) -> DataFrame:
        return lake_frame(spark, lake_url=lake_url, table=name, cluster_id=cluster_id, since=since) \
            .where(F.col(L.TOPIC) == topic)
    rows = [r.asDict() for r in retention.retention_what_if_partitions(
        table(L.PARTITIONS), table(L.TOPIC_CONFIGS), now=now, retention_ms=retention_ms,
        retention_bytes=retention_bytes).orderBy(L.PARTITION).collect()]
    size, freed = sum(r[L.SIZE_BYTES] for r in rows), sum(r[retention.FREED_BYTES] for r in rows)
    return {L.TOPIC: topic, L.SIZE_BYTES: size, retention.FREED_BYTES: freed, retention.KEPT_BYTES: size - freed,
            retention.METHOD: retention.WHOLE_SEGMENTS, "now": now.isoformat(), "partitions": rows}
