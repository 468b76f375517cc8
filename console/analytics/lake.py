"""The offsets lake: its tables, their columns and where they live. Named here once.

Each snapshot of a cluster adds rows to five tables, stored as Parquet and partitioned
(Hive style) by cluster and date: `<lake>/<table>/cluster=<id>/date=YYYY-MM-DD/<file>.parquet`.
Spark reads a table with partition pruning on those two columns; pyarrow and DuckDB read
the same files. Job results go to `<lake>/results/<job>/cluster=<id>/`, small enough for a
page to read with pyarrow in milliseconds.

Column names are module constants so jobs, the collector, tests and the benchmark spell
them the same way; `SCHEMAS` gives their pyarrow types (timestamps are UTC, milliseconds).
"""
from __future__ import annotations

import pyarrow as pa

# --- partition columns (directory names, not stored in the files) --------------------------
CLUSTER = "cluster"
DATE = "date"

# --- shared columns ----------------------------------------------------------------------
TS = "ts"                                   # the snapshot's time
TOPIC = "topic"
PARTITION = "partition"
GROUP = "group_id"
BROKER = "broker_id"

# --- table `partitions`: one row per partition per snapshot ------------------------------
LEADER = "leader"
LOG_START_OFFSET = "log_start_offset"
LOG_END_OFFSET = "log_end_offset"           # the high watermark, as consumers see it
SIZE_BYTES = "size_bytes"                   # the leader replica's size (DescribeLogDirs)

# --- table `group_offsets`: one row per group, topic and partition per snapshot ---------
COMMITTED_OFFSET = "committed_offset"
MEMBERS = "members"                         # the group's member count (DescribeGroups)
# LOG_END_OFFSET is copied in, as Burrow stores the lag with each commit: lag needs no join.

# --- table `log_dirs`: one row per broker log dir per snapshot ---------------------------
LOG_DIR = "log_dir"
TOTAL_BYTES = "total_bytes"                 # file system size (DescribeLogDirs v4), -1 unknown
USABLE_BYTES = "usable_bytes"               # free bytes the broker may still use, -1 unknown
# SIZE_BYTES here is the sum of the replicas in the dir.

# --- table `topic_configs`: one row per topic per snapshot --------------------------------
CLEANUP_POLICY = "cleanup_policy"
RETENTION_MS = "retention_ms"               # -1: keep forever
RETENTION_BYTES = "retention_bytes"         # -1: no size limit (per partition, as in Kafka)
SEGMENT_BYTES = "segment_bytes"

# --- table `share_group_partitions`: one row per share group, topic and partition per snapshot (KIP-932)
START_OFFSET = "start_offset"               # the share-partition start offset (SPSO)
# LOG_END_OFFSET (the high watermark) and LAG (KIP-1226's share lag, as DescribeShareGroupOffsets
# gives it) are stored with it, and MEMBERS; the engine's counters where the cluster has them
# (its admin interface), null elsewhere:
IN_FLIGHT = "in_flight"                     # records between the start and end offsets not done yet
ACQUIRED = "acquired"                       # of which locked by a member now
ARCHIVED_POISON = "archived_poison_total"   # archived at the delivery limit or rejected, so far
LOCK_EXPIRIES = "lock_expiries_total"       # acquisition locks that expired, so far

# --- derived columns, written by jobs ------------------------------------------------------
LAG = "lag"
BUCKET = "bucket"
# The record size and age histograms' bins (console/analytics/launch_topics.py; the pages draw them).
SIZE_BIN_BYTES = 100
AGE_BIN_SECONDS = 3600

PARTITIONS = "partitions"
GROUP_OFFSETS = "group_offsets"
LOG_DIRS = "log_dirs"
TOPIC_CONFIGS = "topic_configs"
SHARE_GROUP_PARTITIONS = "share_group_partitions"
TABLES = (PARTITIONS, GROUP_OFFSETS, LOG_DIRS, TOPIC_CONFIGS, SHARE_GROUP_PARTITIONS)
RESULTS = "results"

_TIME = pa.timestamp("ms", tz="UTC")
SCHEMAS: dict[str, pa.Schema] = {
    PARTITIONS: pa.schema([(TS, _TIME), (TOPIC, pa.string()), (PARTITION, pa.int32()), (LEADER, pa.int32()),
                           (LOG_START_OFFSET, pa.int64()), (LOG_END_OFFSET, pa.int64()),
                           (SIZE_BYTES, pa.int64())]),
    GROUP_OFFSETS: pa.schema([(TS, _TIME), (GROUP, pa.string()), (TOPIC, pa.string()), (PARTITION, pa.int32()),
                              (COMMITTED_OFFSET, pa.int64()), (LOG_END_OFFSET, pa.int64()),
                              (MEMBERS, pa.int32())]),
    LOG_DIRS: pa.schema([(TS, _TIME), (BROKER, pa.int32()), (LOG_DIR, pa.string()), (TOTAL_BYTES, pa.int64()),
                         (USABLE_BYTES, pa.int64()), (SIZE_BYTES, pa.int64())]),
    TOPIC_CONFIGS: pa.schema([(TS, _TIME), (TOPIC, pa.string()), (CLEANUP_POLICY, pa.string()),
                              (RETENTION_MS, pa.int64()), (RETENTION_BYTES, pa.int64()),
                              (SEGMENT_BYTES, pa.int64())]),
    SHARE_GROUP_PARTITIONS: pa.schema([(TS, _TIME), (GROUP, pa.string()), (TOPIC, pa.string()),
                                       (PARTITION, pa.int32()), (START_OFFSET, pa.int64()),
                                       (LOG_END_OFFSET, pa.int64()), (LAG, pa.int64()), (MEMBERS, pa.int32()),
                                       (IN_FLIGHT, pa.int64()), (ACQUIRED, pa.int64()),
                                       (ARCHIVED_POISON, pa.int64()), (LOCK_EXPIRIES, pa.int64())]),
}

_SPARK_TYPES = {pa.string(): "string", pa.int32(): "int", pa.int64(): "bigint", _TIME: "timestamp"}


def spark_ddl(table: str) -> str:
    """The table's schema as a Spark DDL string ("ts timestamp, topic string, ...")."""
    return ", ".join(f"`{f.name}` {_SPARK_TYPES[f.type]}" for f in SCHEMAS[table])


def table_url(lake: str, table: str) -> str:
    return f"{lake.rstrip('/')}/{table}"


def result_url(lake: str, job: str, cluster_id: int) -> str:
    return f"{lake.rstrip('/')}/{RESULTS}/{job}/{CLUSTER}={cluster_id}"
