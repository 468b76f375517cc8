"""Consumer lag: history at several resolutions, time lag, and Burrow-style status."""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from console.analytics import lake as L
from console.analytics.jobs.aggregates import value_at_newest
from console.analytics.jobs.timeline import REACHED_AT, offset_reached_at

RESOLUTIONS = {"1m": 60, "5m": 300, "1h": 3600}
TIME_LAG_SECONDS = "time_lag_seconds"
STATUS, REASON, SEVERITY = "status", "reason", "severity"
# Burrow's statuses; a group's status is its worst partition's.
OK, WARN, REWIND, STALL, STOP = "OK", "WARN", "REWIND", "STALL", "STOP"
SEVERITIES = {OK: 0, WARN: 1, REWIND: 2, STALL: 3, STOP: 4}
DEFAULT_WINDOW = 10            # snapshots, as Burrow's default `intervals`

_GROUP_PARTITION = [L.GROUP, L.TOPIC, L.PARTITION]


def with_lag(group_offsets: DataFrame) -> DataFrame:
    """Lag in records at each snapshot: log end offset minus committed offset, never below 0."""
    return group_offsets.withColumn(L.LAG, F.greatest(F.col(L.LOG_END_OFFSET) - F.col(L.COMMITTED_OFFSET), F.lit(0)))


def bucket(ts_col: str, seconds: int):
    return F.timestamp_seconds(F.floor(F.unix_seconds(F.col(ts_col)) / seconds) * seconds)


def lag_history(group_offsets: DataFrame, *, resolution_seconds: int) -> DataFrame:
    """Per group, topic, partition and time bucket: the worst lag seen in the bucket and the
    last committed offset. Rows: group_id, topic, partition, bucket, lag, committed_offset."""
    last_in_bucket = value_at_newest(group_offsets, L.COMMITTED_OFFSET)
    return (with_lag(group_offsets)
            .withColumn(L.BUCKET, bucket(L.TS, resolution_seconds))
            .groupBy(*_GROUP_PARTITION, L.BUCKET)
            .agg(F.max(L.LAG).alias(L.LAG), last_in_bucket.alias(L.COMMITTED_OFFSET)))


def group_lag_history(history: DataFrame) -> DataFrame:
    """A lag history summed over each group's partitions: group_id, bucket, lag."""
    return history.groupBy(L.GROUP, L.BUCKET).agg(F.sum(L.LAG).alias(L.LAG))


def time_lag(group_offsets: DataFrame, partitions: DataFrame) -> DataFrame:
    """Seconds behind, per group, topic, partition and snapshot, as kafka-lag-exporter does:
    snapshot time minus the time the log end offset reached the committed offset. 0 when
    caught up; null when the committed offset predates the lake's first snapshot."""
    probes = with_lag(group_offsets)
    answered = offset_reached_at(partitions=partitions, probes=probes, offset_col=L.COMMITTED_OFFSET)
    behind = (F.unix_millis(L.TS) - F.unix_millis(REACHED_AT)) / 1000.0
    return (answered
            .withColumn(TIME_LAG_SECONDS, F.when(F.col(L.LAG) == 0, F.lit(0.0)).when(behind < 0, F.lit(0.0)).otherwise(behind))
            .drop(REACHED_AT))


def partition_status(group_offsets: DataFrame, *, window: int = DEFAULT_WINDOW) -> DataFrame:
    """Burrow's evaluation over the last `window` snapshots of each group partition.

    In order: REWIND when the committed offset went back; OK when the lag is 0 now; when the
    offset did not move while lag > 0: STOP if the group has no members (nobody commits:
    OffsetFetch carries no commit time, so "no commits" is read from an empty group), else
    STALL (members keep committing the same offset); WARN when the offset moved but the lag
    grew between every pair of snapshots; otherwise OK. Rows: group_id, topic, partition,
    status, severity, reason, lag."""
    newest_first = Window.partitionBy(*_GROUP_PARTITION).orderBy(F.col(L.TS).desc())
    in_time = Window.partitionBy(*_GROUP_PARTITION).orderBy(L.TS)
    recent = (with_lag(group_offsets)
              .withColumn("_n", F.row_number().over(newest_first)).where(F.col("_n") <= window)
              .withColumn("_d_offset", F.col(L.COMMITTED_OFFSET) - F.lag(L.COMMITTED_OFFSET).over(in_time))
              .withColumn("_d_lag", F.col(L.LAG) - F.lag(L.LAG).over(in_time)))
    facts = recent.groupBy(*_GROUP_PARTITION).agg(
        F.count("*").alias("_snapshots"),
        F.min("_d_offset").alias("_min_d_offset"),
        F.max("_d_offset").alias("_max_d_offset"),
        F.min("_d_lag").alias("_min_d_lag"),
        F.min_by(L.LAG, L.TS).alias("_first_lag"),
        F.max_by(L.LAG, L.TS).alias(L.LAG),
        F.max_by(L.COMMITTED_OFFSET, L.TS).alias(L.COMMITTED_OFFSET),
        F.max_by(L.MEMBERS, L.TS).alias(L.MEMBERS),
        F.min(L.TS).alias("_since"),
        F.min_by(L.COMMITTED_OFFSET, "_d_offset").alias("_rewound_to"),
        F.min_by(F.col(L.COMMITTED_OFFSET) - F.col("_d_offset"), "_d_offset").alias("_rewound_from"),
    )
    lag, since = F.col(L.LAG).cast("string"), F.date_format("_since", "yyyy-MM-dd HH:mm:ss")
    moved_not = (F.col("_max_d_offset") == 0)
    status = (F.when(F.col("_snapshots") < 2, F.lit(OK))
              .when(F.col("_min_d_offset") < 0, F.lit(REWIND))
              .when(F.col(L.LAG) == 0, F.lit(OK))
              .when(moved_not & (F.col(L.MEMBERS) == 0), F.lit(STOP))
              .when(moved_not, F.lit(STALL))
              .when((F.col("_min_d_lag") > 0), F.lit(WARN))
              .otherwise(F.lit(OK)))
    reason = (F.when(F.col("_snapshots") < 2, F.lit("not enough snapshots yet"))
              .when(F.col("_min_d_offset") < 0, F.concat(F.lit("committed offset went back from "),
                                                         F.col("_rewound_from").cast("string"), F.lit(" to "),
                                                         F.col("_rewound_to").cast("string")))
              .when(F.col(L.LAG) == 0, F.lit("caught up"))
              .when(moved_not & (F.col(L.MEMBERS) == 0),
                    F.concat(F.lit("no commits since "), since, F.lit(" (group has no members) while lag is "), lag))
              .when(moved_not, F.concat(F.lit("commits stuck at offset "), F.col(L.COMMITTED_OFFSET).cast("string"),
                                        F.lit(" since "), since, F.lit(" while lag is "), lag))
              .when(F.col("_min_d_lag") > 0, F.concat(F.lit("lag grew at every snapshot, from "),
                                                      F.col("_first_lag").cast("string"), F.lit(" to "), lag))
              .otherwise(F.lit("consuming")))
    severity = F.create_map(*[F.lit(x) for kv in SEVERITIES.items() for x in kv])
    return (facts.withColumn(STATUS, status).withColumn(REASON, reason)
            .withColumn(SEVERITY, severity[F.col(STATUS)])
            .select(*_GROUP_PARTITION, STATUS, SEVERITY, REASON, L.LAG))


def group_status(statuses: DataFrame) -> DataFrame:
    """Each group's worst partition: group_id, status, severity, reason (naming the partition), lag (total)."""
    worst = F.max_by(F.struct(STATUS, REASON, L.TOPIC, L.PARTITION), F.struct(SEVERITY, L.LAG))
    return (statuses.groupBy(L.GROUP)
            .agg(worst.alias("_w"), F.max(SEVERITY).alias(SEVERITY), F.sum(L.LAG).alias(L.LAG))
            .select(L.GROUP, F.col("_w." + STATUS).alias(STATUS), SEVERITY,
                    F.concat(F.col("_w." + L.TOPIC), F.lit("-"), F.col("_w." + L.PARTITION).cast("string"),
                             F.lit(": "), F.col("_w." + REASON)).alias(REASON), L.LAG))
