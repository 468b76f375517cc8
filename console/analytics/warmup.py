"""The analytics worker's warm-up: every lake job once, on a tiny lake, when its session starts.

Measured (benchmarks/analytics.py, docs/benchmarks/analytics.md): at a million snapshot rows a
job's first run in a fresh JVM costs 5-40x its later runs: Spark generates and compiles the
code of each query shape, and the JVM compiles the hot paths, on first use. A worker's first
run of each job used to pay that; the warm-up pays it once, at start, on three snapshots of one
partition, through the same launcher as a real run, so the first real run is as fast as the
next ones. Its lake is written under the real lake (`<lake>/_warmup`, which every executor of
a cluster reads too) and removed afterwards; Spark skips `_` directories in the real lake.
"""
from __future__ import annotations

import datetime as dt
import logging
import time

from pyspark.sql import SparkSession

from console.analytics import lake as L
from console.analytics.launch import analytics_jobs_run
from console.analytics.storage import lake_filesystem, snapshot_write

WARMUP_DIR = "_warmup"
log = logging.getLogger(__name__)


def _tiny_lake(lake_url: str, now: dt.datetime) -> None:
    for minutes in (2, 1, 0):
        ts = now - dt.timedelta(minutes=minutes)
        rows = {
            L.PARTITIONS: [{L.TS: ts, L.TOPIC: "t", L.PARTITION: 0, L.LEADER: 0, L.LOG_START_OFFSET: 0,
                            L.LOG_END_OFFSET: 10 - minutes, L.SIZE_BYTES: 1000}],
            L.GROUP_OFFSETS: [{L.TS: ts, L.GROUP: "g", L.TOPIC: "t", L.PARTITION: 0, L.COMMITTED_OFFSET: 5,
                               L.LOG_END_OFFSET: 10 - minutes, L.MEMBERS: 1}],
            L.LOG_DIRS: [{L.TS: ts, L.BROKER: 0, L.LOG_DIR: "/d", L.TOTAL_BYTES: 10**9, L.USABLE_BYTES: 10**8,
                          L.SIZE_BYTES: 1000}],
            L.TOPIC_CONFIGS: [{L.TS: ts, L.TOPIC: "t", L.CLEANUP_POLICY: "delete", L.RETENTION_MS: 3_600_000,
                               L.RETENTION_BYTES: -1, L.SEGMENT_BYTES: 1_048_576}],
        }
        for table, table_rows in rows.items():
            snapshot_write(lake_url=lake_url, cluster_id=0, table=table, rows=table_rows, taken_at=ts)


def session_warm_up(spark: SparkSession, *, lake_url: str) -> float:
    """Run every lake job once on a tiny lake under `lake_url`; returns the seconds it took."""
    started = time.monotonic()
    warm_url = f"{lake_url.rstrip('/')}/{WARMUP_DIR}"
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    fs, root = lake_filesystem(warm_url)
    try:
        _tiny_lake(warm_url, now)
        analytics_jobs_run(spark, lake_url=warm_url, cluster_id=0, days=1, today=now.date(),
                           progress=lambda *_: None)
    finally:
        try:
            fs.delete_dir(root)
        except FileNotFoundError:
            pass
    seconds = time.monotonic() - started
    log.info("Spark warmed up: every lake job once on a tiny lake in %.1f s", seconds)
    return seconds
