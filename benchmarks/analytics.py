"""Analytics: each Spark job on one-minute snapshots, next to the same query in DuckDB, and the
Kafka data source's read rate next to a plain confluent-kafka consumer.

The lake: one-minute snapshots of 1,000 partitions (100 topics x 10) and 200 groups reading 5
partitions each, 2,000 snapshot rows (partitions + group offsets) per snapshot; --rows picks
their number: 20M (the default) is a week (10,000 snapshots: 10M partition rows + 10M group
offset rows, + 1M topic config rows and 30k log dir rows), 1M is 500 snapshots (8 hours). It is
generated once by DuckDB into the lake's own layout (Parquet, Hive partitions cluster=/date=)
under --data (default /tmp/analytics-bench-lake-<rows>) and reused by later runs. Every job runs
in Spark local[2] (the job functions of console.analytics.jobs, forced with Spark's `noop`
sink; on Sail with `--sail`) and in DuckDB (2 threads, `CREATE TEMP TABLE AS` the equivalent
SQL), both reading the same Parquet files. Rows/s counts input rows. The compaction job reads 2M generated
records shaped as the Kafka data source returns them (Parquet beside the lake). `--only NAME`
(repeatable) runs only the jobs whose name holds NAME. Each job runs `--repeat` times (3) in
each engine, alternately, and the medians are printed. Before the jobs it prints where Spark's
fixed costs go: the session's start (JVM and Python), the warm-up the analytics worker does at
start, listing the lake's files, and one plain scan of each table. `--one-read` reads the lake
into memory once in both engines, as a run of the analytics worker does, and times the jobs on
that. `--check` then counts each job's result rows in both engines and says where they differ.

`--sail` runs Spark's side on Sail instead, the analytics worker's one-machine engine
(SPARK_MASTER=sail: Spark's API on a native engine, its Spark Connect server started in this
process by console.analytics.spark, as the worker does), and `--connect sc://HOST:PORT` on any
Spark Connect server (the same DataFrames, planned and run by the server).

The data source: a private 1-broker engine, one topic of 4 partitions and --records records of
100 bytes; the same topic read by a plain confluent-kafka consumer and by
`spark.read.format("kafka_protocol")`, alternately, --rounds times; the median ratio is printed.

    .venv/bin/python benchmarks/analytics.py [--rows N] [--repeat N] [--one-read] [--data DIR] [--records N] [--rounds N]
                                             [--skip-source] [--skip-jobs] [--only NAME] [--check]
                                             [--connect sc://HOST:PORT | --sail]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from console.analytics import lake as L  # noqa: E402

SNAPSHOTS_PER_DAY, PARTITIONS, GROUPS, PARTITIONS_PER_GROUP = 1440, 1000, 200, 5
# Snapshot rows (partitions + group offsets) per snapshot: --rows picks the number of snapshots.
ROWS_PER_SNAPSHOT = PARTITIONS + GROUPS * PARTITIONS_PER_GROUP
DEFAULT_ROWS = 20_000_000
CLUSTER = 1
T0 = "2026-11-01 00:00:00+00"

# --- the lake, generated once -------------------------------------------------------------------
# The lake's tables the benchmark generates; no share groups (their lag history is not timed).
LAKE_TABLES = (L.PARTITIONS, L.GROUP_OFFSETS, L.LOG_DIRS, L.TOPIC_CONFIGS)


# Partition p of topic-(p // 10) grows by 1 + p % 7 records per second; retention keeps 3 days.
# Group g reads partitions 5g..5g+4 with a lag that wanders between 0 and 599 records; every 20th
# group stops moving after 90% of the snapshots (a STALL), every 33rd commits nothing after 95%
# and has no members (a STOP).
def generate_queries(snapshots: int) -> dict[str, str]:
    stall, stop = int(snapshots * 0.9), int(snapshots * 0.95)
    return {
        L.PARTITIONS: f"""
            SELECT TIMESTAMPTZ '{T0}' + to_minutes(s) AS {L.TS}, 'topic-' || (p // 10) AS {L.TOPIC},
                   (p % 10)::INTEGER AS {L.PARTITION}, (p % 3)::INTEGER AS {L.LEADER},
                   greatest(0, s * 60 * (1 + p % 7) - 3 * 86400 * (1 + p % 7))::BIGINT AS {L.LOG_START_OFFSET},
                   (s * 60 * (1 + p % 7))::BIGINT AS {L.LOG_END_OFFSET},
                   (least(s, 3 * 1440) * 60 * (1 + p % 7) * 100)::BIGINT AS {L.SIZE_BYTES},
                   {CLUSTER} AS {L.CLUSTER}, CAST(TIMESTAMPTZ '{T0}' + to_minutes(s) AS DATE) AS {L.DATE}
            FROM range({snapshots}) t(s), range({PARTITIONS}) q(p)""",
        L.GROUP_OFFSETS: f"""
            WITH base AS (
              SELECT s, g, g * {PARTITIONS_PER_GROUP} + i AS p FROM range({snapshots}) t(s),
                     range({GROUPS}) u(g), range({PARTITIONS_PER_GROUP}) v(i))
            SELECT TIMESTAMPTZ '{T0}' + to_minutes(s) AS {L.TS}, 'group-' || g AS {L.GROUP}, 'topic-' || (p // 10) AS {L.TOPIC},
                   (p % 10)::INTEGER AS {L.PARTITION},
                   (CASE WHEN g % 20 = 0 AND s > {stall} THEN {stall} * 60 * (1 + p % 7) - 100
                         WHEN g % 33 = 0 AND s > {stop} THEN {stop} * 60 * (1 + p % 7) - 100
                         ELSE greatest(0, s * 60 * (1 + p % 7) - (s * 7 + g * 13 + p) % 600) END)::BIGINT AS {L.COMMITTED_OFFSET},
                   (s * 60 * (1 + p % 7))::BIGINT AS {L.LOG_END_OFFSET},
                   (CASE WHEN g % 33 = 0 AND s > {stop} THEN 0 ELSE 1 END)::INTEGER AS {L.MEMBERS},
                   {CLUSTER} AS {L.CLUSTER}, CAST(TIMESTAMPTZ '{T0}' + to_minutes(s) AS DATE) AS {L.DATE}
            FROM base""",
        L.LOG_DIRS: f"""
            SELECT TIMESTAMPTZ '{T0}' + to_minutes(s) AS {L.TS}, b::INTEGER AS {L.BROKER}, '/data/broker-' || b AS {L.LOG_DIR},
                   1000000000000::BIGINT AS {L.TOTAL_BYTES}, (500000000000 - s * 1000000 * (b + 1))::BIGINT AS {L.USABLE_BYTES},
                   (s * 1000000 * (b + 1))::BIGINT AS {L.SIZE_BYTES},
                   {CLUSTER} AS {L.CLUSTER}, CAST(TIMESTAMPTZ '{T0}' + to_minutes(s) AS DATE) AS {L.DATE}
            FROM range({snapshots}) t(s), range(3) u(b)""",
        L.TOPIC_CONFIGS: f"""
            SELECT TIMESTAMPTZ '{T0}' + to_minutes(s) AS {L.TS}, 'topic-' || t AS {L.TOPIC}, 'delete' AS {L.CLEANUP_POLICY},
                   259200000::BIGINT AS {L.RETENTION_MS}, (-1)::BIGINT AS {L.RETENTION_BYTES},
                   1073741824::BIGINT AS {L.SEGMENT_BYTES},
                   {CLUSTER} AS {L.CLUSTER}, CAST(TIMESTAMPTZ '{T0}' + to_minutes(s) AS DATE) AS {L.DATE}
            FROM range({snapshots}) r(s), range({PARTITIONS // 10}) u(t)""",
    }


def lake_generate(lake: Path, snapshots: int) -> None:
    done = lake / ".complete"
    if done.exists():
        print(f"Reusing the lake in {lake}")
        return
    started = time.perf_counter()
    lake.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET threads = 2; SET preserve_insertion_order = false;")
    for table, query in generate_queries(snapshots).items():
        target = L.table_url(str(lake), table)
        con.execute(f"COPY ({query}) TO '{target}' (FORMAT parquet, PARTITION_BY ({L.CLUSTER}, {L.DATE}), "
                    "OVERWRITE_OR_IGNORE true)")
    done.touch()
    print(f"Generated the lake in {time.perf_counter() - started:.0f} s: {lake}")


# --- the jobs: Spark's and DuckDB's ---------------------------------------------------------------

def spark_jobs(tables):
    from console.analytics.jobs import lag, rates, records, retention
    from console.analytics.launch import _recent
    go, parts = tables[L.GROUP_OFFSETS], tables[L.PARTITIONS]
    return {
        "lag history, 5 min, per group": (go, lambda: lag.group_lag_history(lag.lag_history(go, resolution_seconds=300))),
        "lag history, 1 h, per partition": (go, lambda: lag.lag_history(go, resolution_seconds=3600)),
        "time lag, last day": (None, lambda: lag.time_lag(_recent(go, 1), _recent(parts, 1))),
        "Burrow status, 10 snapshots": (go, lambda: lag.group_status(lag.partition_status(go))),
        "production rate, 5 min": (parts, lambda: rates.production_rates(parts, resolution_seconds=300)),
        "catch-up time, 15 min": (go, lambda: rates.catch_up(go, window_seconds=900)),
        "topic growth per day": (parts, lambda: retention.growth_per_day(
            retention.topic_bytes(parts, resolution_seconds=60), key=[L.TOPIC])),
        "retention what-if, 1 day": (parts, lambda: retention.retention_what_if(
            parts, _small_segments(tables[L.TOPIC_CONFIGS]), now=_newest(parts), retention_ms=WHAT_IF_MS)),
        "compaction savings": (RECORDS, lambda: records.compaction_savings(tables[RECORDS])),
    }


# Topic contents for the compaction job, as the Kafka data source returns them: 2M records in 4
# partitions, 200,000 keys, 2% tombstones, 1% without a key, values of 50-149 bytes, no headers.
RECORDS, RECORD_COUNT = "records", 2_000_000


def records_generate(path: Path) -> None:
    if (path / ".complete").exists():
        return
    path.mkdir(parents=True, exist_ok=True)
    duckdb.execute(f"""COPY (SELECT CASE WHEN i % 100 = 7 THEN NULL ELSE ('k' || (i % 200000))::BLOB END AS key,
                              CASE WHEN i % 50 = 3 THEN NULL ELSE repeat('x', 50 + i % 100)::BLOB END AS value,
                              'compacted' AS topic, (i % 4)::INTEGER AS partition, (i // 4)::BIGINT AS "offset",
                              TIMESTAMPTZ '{T0}' + to_seconds(i // 100) AS timestamp, 0 AS timestampType,
                              []::STRUCT(key VARCHAR, value BLOB)[] AS headers
                       FROM range({RECORD_COUNT}) t(i)) TO '{path}/records.parquet' (FORMAT parquet)""")
    (path / ".complete").touch()


WHAT_IF_MS = 86_400_000           # the what-if: retention.ms = 1 day, against the newest snapshot
# The lake's topics keep Kafka's 1 GiB segment.bytes, more than a partition holds: the what-if
# takes 10 MiB segments instead (both engines), so it frees whole segments as it would in use.
WHAT_IF_SEGMENT_BYTES = 10 * 2**20


def _small_segments(configs):
    from pyspark.sql import functions as F
    return configs.withColumn(L.SEGMENT_BYTES, F.lit(WHAT_IF_SEGMENT_BYTES).cast("bigint"))


def _newest(frame):
    from pyspark.sql import functions as F
    return frame.agg(F.max(L.TS)).first()[0]


DUCK_VIEWS = {t: f"read_parquet('{{lake}}/{t}/*/*/*.parquet', hive_partitioning = true)" for t in LAKE_TABLES}
DUCK_JOBS = {
    "lag history, 5 min, per group": f"""
        WITH h AS (SELECT group_id, topic, partition, time_bucket(INTERVAL 5 MINUTE, ts) AS bucket,
                          max(greatest(log_end_offset - committed_offset, 0)) AS lag, arg_max(committed_offset, ts) AS c
                   FROM {L.GROUP_OFFSETS} GROUP BY ALL)
        SELECT group_id, bucket, sum(lag) AS lag FROM h GROUP BY ALL""",
    "lag history, 1 h, per partition": f"""
        SELECT group_id, topic, partition, time_bucket(INTERVAL 1 HOUR, ts) AS bucket,
               max(greatest(log_end_offset - committed_offset, 0)) AS lag, arg_max(committed_offset, ts) AS c
        FROM {L.GROUP_OFFSETS} GROUP BY ALL""",
    "time lag, last day": f"""
        WITH go AS (SELECT * FROM {L.GROUP_OFFSETS} WHERE ts >= (SELECT max(ts) FROM {L.GROUP_OFFSETS}) - INTERVAL 1 DAY),
             p AS (SELECT * FROM {L.PARTITIONS} WHERE ts >= (SELECT max(ts) FROM {L.PARTITIONS}) - INTERVAL 1 DAY),
             probes AS (SELECT row_number() OVER () AS id, * FROM go),
             u AS (SELECT topic, partition, log_end_offset AS o, ts AS t, 1 AS kind, NULL::BIGINT AS id FROM p
                   UNION ALL SELECT topic, partition, committed_offset, NULL, 0, id FROM probes),
             w AS (SELECT *, last_value(CASE WHEN kind = 1 THEN t END IGNORE NULLS) OVER b AS a_t,
                             last_value(CASE WHEN kind = 1 THEN o END IGNORE NULLS) OVER b AS a_o,
                             first_value(CASE WHEN kind = 1 THEN t END IGNORE NULLS) OVER f AS b_t,
                             first_value(CASE WHEN kind = 1 THEN o END IGNORE NULLS) OVER f AS b_o
                   FROM u WINDOW b AS (PARTITION BY topic, partition ORDER BY o, kind, t
                                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                                 f AS (PARTITION BY topic, partition ORDER BY o, kind, t
                                       ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING))
        SELECT probes.*, CASE WHEN probes.log_end_offset <= probes.committed_offset THEN 0.0
                              ELSE epoch(probes.ts) - (epoch(a_t) + (w.o - a_o) / (b_o - a_o) * (epoch(b_t) - epoch(a_t)))
                         END AS time_lag_seconds
        FROM w JOIN probes USING (id) WHERE w.kind = 0""",
    "Burrow status, 10 snapshots": f"""
        WITH r AS (SELECT *, greatest(log_end_offset - committed_offset, 0) AS lag FROM {L.GROUP_OFFSETS}
                   QUALIFY row_number() OVER (PARTITION BY group_id, topic, partition ORDER BY ts DESC) <= 10),
             d AS (SELECT *, committed_offset - lag(committed_offset) OVER w AS d_o, lag - lag(lag) OVER w AS d_l
                   FROM r WINDOW w AS (PARTITION BY group_id, topic, partition ORDER BY ts)),
             f AS (SELECT group_id, topic, partition, count(*) AS n, min(d_o) AS min_o, max(d_o) AS max_o,
                          min(d_l) AS min_l, arg_max(lag, ts) AS lag, arg_max(members, ts) AS members
                   FROM d GROUP BY ALL),
             s AS (SELECT *, CASE WHEN n < 2 THEN 'OK' WHEN min_o < 0 THEN 'REWIND' WHEN lag = 0 THEN 'OK'
                                  WHEN max_o = 0 AND members = 0 THEN 'STOP' WHEN max_o = 0 THEN 'STALL'
                                  WHEN min_l > 0 THEN 'WARN' ELSE 'OK' END AS status FROM f)
        SELECT group_id, arg_max(status, CASE status WHEN 'STOP' THEN 4 WHEN 'STALL' THEN 3 WHEN 'REWIND' THEN 2
                                                     WHEN 'WARN' THEN 1 ELSE 0 END) AS status,
               sum(lag) AS lag FROM s GROUP BY ALL""",
    "production rate, 5 min": f"""
        WITH d AS (SELECT topic, partition, ts, log_end_offset - lag(log_end_offset) OVER w AS d,
                          epoch(ts) - epoch(lag(ts) OVER w) AS dt
                   FROM {L.PARTITIONS} WINDOW w AS (PARTITION BY topic, partition ORDER BY ts)),
             p AS (SELECT topic, partition, time_bucket(INTERVAL 5 MINUTE, ts) AS bucket,
                          sum(greatest(d, 0)) / sum(dt) AS rate FROM d WHERE dt > 0 GROUP BY ALL)
        SELECT topic, bucket, sum(rate) AS rate FROM p GROUP BY ALL""",
    "catch-up time, 15 min": f"""
        WITH r AS (SELECT *, greatest(log_end_offset - committed_offset, 0) AS lag,
                          max(ts) OVER (PARTITION BY group_id) AS newest FROM {L.GROUP_OFFSETS}),
             p AS (SELECT group_id, topic, partition, arg_max(lag, ts) AS lag,
                          greatest(arg_max(committed_offset, ts) - arg_min(committed_offset, ts), 0)
                            / nullif(epoch(max(ts)) - epoch(min(ts)), 0) AS c,
                          (arg_max(log_end_offset, ts) - arg_min(log_end_offset, ts))
                            / nullif(epoch(max(ts)) - epoch(min(ts)), 0) AS p
                   FROM r WHERE ts >= newest - INTERVAL 900 SECOND GROUP BY ALL)
        SELECT group_id, sum(lag) AS lag, sum(c) AS c, sum(p) AS p,
               CASE WHEN sum(lag) = 0 THEN 0 WHEN sum(c) > sum(p) THEN sum(lag) / (sum(c) - sum(p)) END AS catch_up
        FROM p GROUP BY ALL""",
    "retention what-if, 1 day": f"""
        WITH latest AS (SELECT * FROM {L.PARTITIONS}
                        QUALIFY row_number() OVER (PARTITION BY topic, partition ORDER BY ts DESC) = 1),
             cfg AS (SELECT topic, arg_max({{segment_bytes}}, ts) AS seg FROM {L.TOPIC_CONFIGS} GROUP BY ALL),
             cut AS (SELECT epoch_ms(max(ts)) - {{what_if_ms}} AS cut_ms FROM {L.PARTITIONS}),
             bounds AS (SELECT topic, partition,
                               arg_max(log_end_offset, ts) FILTER (WHERE epoch_ms(ts) <= cut_ms) AS a,
                               max(epoch_ms(ts)) FILTER (WHERE epoch_ms(ts) <= cut_ms) AS a_ms,
                               arg_min(log_end_offset, ts) FILTER (WHERE epoch_ms(ts) > cut_ms) AS b,
                               min(epoch_ms(ts)) FILTER (WHERE epoch_ms(ts) > cut_ms) AS b_ms
                        FROM {L.PARTITIONS}, cut GROUP BY ALL),
             p AS (SELECT l.topic, l.size_bytes AS size, cfg.seg, l.log_start_offset AS s, l.log_end_offset AS e,
                          CASE WHEN a IS NULL THEN NULL WHEN b IS NULL THEN a
                               ELSE floor(a + (cut_ms - a_ms) / (b_ms - a_ms) * (b - a)) END AS c
                   FROM latest l JOIN cfg USING (topic) LEFT JOIN bounds USING (topic, partition), cut),
             f AS (SELECT topic, size, least(floor(greatest(least(CASE WHEN e > s THEN (coalesce(c, s) - s) * size / (e - s)
                                                                     ELSE 0 END, size), 0) / seg) * seg, size) AS freed FROM p)
        SELECT topic, sum(size) AS size, sum(freed) AS freed, sum(size) - sum(freed) AS kept FROM f GROUP BY ALL""",
    "compaction savings": """
        WITH r AS (SELECT *, coalesce(octet_length(key), 0) + coalesce(octet_length(value), 0) AS b FROM records),
             k AS (SELECT topic, sum(b) AS kept FROM (
                     SELECT * FROM r WHERE key IS NOT NULL
                     QUALIFY row_number() OVER (PARTITION BY topic, partition, key ORDER BY "offset" DESC) = 1)
                   WHERE value IS NOT NULL GROUP BY ALL)
        SELECT topic, count(*) AS records, count(DISTINCT key) AS distinct_keys,
               count(*) FILTER (WHERE value IS NULL AND key IS NOT NULL) AS tombstones,
               count(*) FILTER (WHERE key IS NULL) AS null_keys, sum(b) AS record_bytes,
               sum(b) - coalesce(any_value(kept), 0) - coalesce(sum(b) FILTER (WHERE key IS NULL), 0) AS saved_bytes
        FROM r LEFT JOIN k USING (topic) GROUP BY ALL""",
    "topic growth per day": f"""
        WITH b AS (SELECT topic, partition, time_bucket(INTERVAL 1 MINUTE, ts) AS bucket, arg_max(size_bytes, ts) AS size
                   FROM {L.PARTITIONS} GROUP BY ALL),
             t AS (SELECT topic, bucket, sum(size) AS size FROM b GROUP BY ALL)
        SELECT topic, regr_slope(size, epoch(bucket)) * 86400 AS growth FROM t GROUP BY ALL""",
}


def duck_sql(name: str) -> str:
    return DUCK_JOBS[name].replace("{what_if_ms}", str(WHAT_IF_MS)).replace("{segment_bytes}", str(WHAT_IF_SEGMENT_BYTES))


def duck_connect(lake: Path):
    """DuckDB (2 threads) with a view per lake table of the benchmark's cluster, and the records."""
    con = duckdb.connect()
    con.execute("SET threads = 2")
    for table, view in DUCK_VIEWS.items():
        con.execute(f"CREATE VIEW {table} AS SELECT * EXCLUDE ({L.CLUSTER}, {L.DATE}) FROM {view.format(lake=lake)} "
                    f"WHERE {L.CLUSTER} = {CLUSTER}")
    records_generate(lake / RECORDS)
    con.execute(f"CREATE VIEW {RECORDS} AS SELECT * FROM read_parquet('{lake / RECORDS}/*.parquet')")
    return con


def rows_of(con, table: str) -> int:
    return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def local_session(lake: Path):
    """Spark local[2], warmed up and sized to the lake as the analytics worker's session is."""
    from console.analytics.launch import lake_input_bytes, session_size_to
    from console.analytics.spark import build_session
    from console.analytics.warmup import session_warm_up

    started = time.perf_counter()
    spark = build_session(master="local[2]", conf={"spark.driver.memory": "6g"})
    spark.range(1).count()
    print(f"Spark session start (JVM, first job): {time.perf_counter() - started:.1f} s")
    # As the analytics worker does at start: every lake job once on a tiny lake (code generation
    # and the JVM's compilation paid there), then shuffle partitions sized to this lake.
    print(f"Warm-up (every lake job on a tiny lake): {session_warm_up(spark, lake_url=tempfile.mkdtemp()):.1f} s")
    input_bytes = lake_input_bytes(lake_url=str(lake), cluster_id=CLUSTER, since=None)
    session_size_to(spark, input_bytes=input_bytes)
    print(f"Lake: {input_bytes / 2**20:,.0f} MiB of Parquet; shuffle partitions: "
          f"{spark.conf.get('spark.sql.shuffle.partitions')}")
    return spark


def connect_session(url: str):
    """A Spark Connect session at `url`: the server plans and runs the same DataFrames."""
    from pyspark.sql import SparkSession

    started = time.perf_counter()
    spark = SparkSession.builder.remote(url).getOrCreate()
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    spark.range(1).count()
    print(f"Spark Connect session at {url} (first job): {time.perf_counter() - started:.1f} s; "
          "no warm-up, the server's own parallelism")
    return spark


def sail_session():
    """Sail, as the analytics worker starts it (console.analytics.spark), warmed up likewise."""
    from console.analytics.spark import build_session
    from console.analytics.warmup import session_warm_up

    started = time.perf_counter()
    spark = build_session(master="sail")
    spark.range(1).count()
    print(f"Sail session start (server in this process, first job): {time.perf_counter() - started:.1f} s")
    print(f"Warm-up (every lake job on a tiny lake): {session_warm_up(spark, lake_url=tempfile.mkdtemp()):.1f} s")
    return spark


def run_jobs(lake: Path, snapshots: int, only: list[str], one_read: bool = False, connect: str = "",
             check: bool = False, sail: bool = False, repeat: int = 1) -> None:
    from console.analytics.launch import lake_frame

    spark = sail_session() if sail else connect_session(connect) if connect else local_session(lake)
    con = duck_connect(lake)
    records_dir = lake / RECORDS
    counts = {t: rows_of(con, t) for t in (*LAKE_TABLES, RECORDS)}
    print("Rows: " + ", ".join(f"{t} {n:,}" for t, n in counts.items()))
    from console.kafka_gateway.spark_source import SCHEMA_DDL
    started = time.perf_counter()
    tables = {t: lake_frame(spark, lake_url=str(lake), table=t, cluster_id=CLUSTER) for t in LAKE_TABLES}
    tables[RECORDS] = spark.read.schema(SCHEMA_DDL).parquet(str(records_dir))
    files = sum(len(frame.inputFiles()) for frame in tables.values())
    print(f"Listing the lake's {files} files: {time.perf_counter() - started:.1f} s")
    for table in (L.PARTITIONS, L.GROUP_OFFSETS):
        started = time.perf_counter()
        tables[table].write.format("noop").mode("overwrite").save()
        print(f"Plain scan of {table} ({counts[table]:,} rows, every column): {time.perf_counter() - started:.1f} s")
    if one_read:
        # As a run does (console.analytics.launch): the lake read once, cached, for every job;
        # DuckDB the same way, into tables of its own.
        started = time.perf_counter()
        for table in (*LAKE_TABLES, RECORDS):
            tables[table] = tables[table].cache()
            tables[table].count()
        spark_s = time.perf_counter() - started
        started = time.perf_counter()
        for table in (*LAKE_TABLES, RECORDS):
            con.execute(f"CREATE TABLE {table}_read AS SELECT * FROM {table}")
            con.execute(f"DROP VIEW {table}")
            con.execute(f"ALTER TABLE {table}_read RENAME TO {table}")
        duck_s = time.perf_counter() - started
        print(f"One read of the lake into memory (every table): Spark {spark_s:.1f} s, DuckDB {duck_s:.1f} s "
              f"({spark_s / duck_s:.1f}x); the jobs below read memory")
    day_share = min(SNAPSHOTS_PER_DAY, snapshots) / snapshots
    last_day = {t: int(counts[t] * day_share) for t in (L.GROUP_OFFSETS, L.PARTITIONS)}
    print(f"\n{'job':<34}{'input rows':>12}{'Spark s':>9}{'Spark rows/s':>14}{'DuckDB s':>10}"
          f"{'DuckDB rows/s':>15}{'Spark/DuckDB':>14}")
    for name, (source, build) in spark_jobs(tables).items():
        if only and not any(o in name for o in only):
            continue
        rows = sum(last_day.values()) if source is None else counts[RECORDS] if isinstance(source, str) else (
            counts[L.GROUP_OFFSETS] if source is tables[L.GROUP_OFFSETS] else counts[L.PARTITIONS])
        spark_s, duck_s = [], []
        for _ in range(repeat):      # the engines alternate: a busy moment costs both alike
            started = time.perf_counter()
            build().write.format("noop").mode("overwrite").save()
            spark_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            con.execute(f"CREATE OR REPLACE TEMP TABLE result AS {duck_sql(name)}")
            duck_s.append(time.perf_counter() - started)
        spark_s, duck_s = statistics.median(spark_s), statistics.median(duck_s)
        print(f"{name:<34}{rows:>12,}{spark_s:>9.1f}{rows / spark_s:>14,.0f}{duck_s:>10.1f}{rows / duck_s:>15,.0f}"
              f"{spark_s / duck_s:>13.1f}x", flush=True)
        if check:
            spark_rows, duck_rows = build().count(), rows_of(con, "result")
            if spark_rows != duck_rows:
                print(f"  rows differ: Spark {spark_rows:,}, DuckDB {duck_rows:,}", flush=True)
    spark.stop()


# --- the data source against a plain consumer -------------------------------------------------------

def source_rate(records: int, rounds: int) -> None:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    from console.analytics.spark import build_session
    from console.kafka_gateway.spark_source import NAME
    from tests.support.engine_process import EngineProcess

    engine = EngineProcess(Path(tempfile.mkdtemp(prefix="analytics-bench-")) / "data", brokers=1).start()
    topic, partitions = "analytics-source", 4
    try:
        admin = AdminClient({"bootstrap.servers": engine.bootstrap})     # kept: its futures need it alive
        admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
        producer = Producer({"bootstrap.servers": engine.bootstrap, "linger.ms": 20,
                             "queue.buffering.max.messages": 1_000_000})
        value = b"v" * 100
        for i in range(records):
            producer.produce(topic, value=value, key=str(i % 1000).encode(), partition=i % partitions)
            if i % 100_000 == 0:
                producer.poll(0)
        assert producer.flush(120) == 0
        producer = None              # closed before the engine stops (no reconnect noise)

        def plain() -> float:
            consumer = Consumer({"bootstrap.servers": engine.bootstrap, "group.id": "bench",
                                 "enable.partition.eof": True, "enable.auto.commit": False})
            started = time.perf_counter()
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
            seen, ended = 0, set()
            while len(ended) < partitions:
                for m in consumer.consume(10_000, timeout=1):
                    if m.error():
                        if m.error().code() == KafkaError._PARTITION_EOF:
                            ended.add(m.partition())
                        continue
                    seen += 1
            elapsed = time.perf_counter() - started
            consumer.close()
            assert seen == records, seen
            return elapsed

        spark = build_session(master="local[2]", conf={"spark.sql.shuffle.partitions": "4"})

        def via_spark() -> float:
            started = time.perf_counter()
            frame = spark.read.format(NAME).option("kafka.bootstrap.servers", engine.bootstrap) \
                .option("subscribe", topic).load()
            frame.write.format("noop").mode("overwrite").save()
            return time.perf_counter() - started

        assert spark.read.format(NAME).option("kafka.bootstrap.servers", engine.bootstrap) \
            .option("subscribe", topic).load().count() == records      # also warms the Python workers
        ratios = []
        print(f"\nData source: {records:,} records of 100 bytes, {partitions} partitions, 1-broker engine")
        for round_ in range(rounds):
            consumer_s, spark_s = plain(), via_spark()
            ratios.append(consumer_s / spark_s)
            print(f"  round {round_ + 1}: confluent-kafka consumer {records / consumer_s:>10,.0f} rec/s   "
                  f"Spark data source (local[2]) {records / spark_s:>10,.0f} rec/s   ratio {ratios[-1]:.2f}", flush=True)
        print(f"  data source / plain consumer, median: {statistics.median(ratios):.2f}x")
        spark.stop()
    finally:
        engine.terminate()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="", help="the lake's directory (default /tmp/analytics-bench-lake-<rows>)")
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS,
                        help=f"snapshot rows, partitions + group offsets ({ROWS_PER_SNAPSHOT:,} per one-minute snapshot)")
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each job per engine, alternating; the median is printed")
    parser.add_argument("--skip-jobs", action="store_true")
    parser.add_argument("--skip-source", action="store_true")
    parser.add_argument("--only", action="append", default=[], help="run only the jobs whose name holds this")
    parser.add_argument("--connect", default="", metavar="URL",
                        help="run Spark's side on the Spark Connect server at URL (sc://host:port) instead of local[2]")
    parser.add_argument("--check", action="store_true",
                        help="after each job, check that both engines' results have as many rows")
    parser.add_argument("--sail", action="store_true",
                        help="run Spark's side on Sail (SPARK_MASTER=sail), its server started in this process")
    parser.add_argument("--one-read", action="store_true",
                        help="read the lake into memory once (both engines), as a run does, then time the jobs")
    args = parser.parse_args()
    snapshots = max(2, args.rows // ROWS_PER_SNAPSHOT)
    lake = Path(args.data or f"/tmp/analytics-bench-lake-{args.rows}")
    if not args.skip_jobs:
        lake_generate(lake, snapshots)
        run_jobs(lake, snapshots, args.only, args.one_read, connect=args.connect, check=args.check, sail=args.sail,
                 repeat=args.repeat)
    if not args.skip_source and (args.sail or args.connect):
        print("The data source's read rate is measured on Spark local[2] only: not with --connect or --sail.")
    elif not args.skip_source:
        source_rate(args.records, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
