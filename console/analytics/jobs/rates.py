"""Rates: production per topic, consumption per group, and each group's time to catch up."""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from console.analytics import lake as L
from console.analytics.jobs.lag import bucket, with_lag

RATE = "records_per_second"
PRODUCE_RATE, CONSUME_RATE = "produce_per_second", "consume_per_second"
CATCH_UP_SECONDS = "catch_up_seconds"


def _rate_by_bucket(frame: DataFrame, *, key: list[str], offset_col: str, by: str, resolution_seconds: int) -> DataFrame:
    """Sum over the `key` series of (offset growth / time) between snapshots, per `by` and
    bucket. A step back (topic recreated, offsets reset) counts as no progress, not negative."""
    in_time = Window.partitionBy(*key).orderBy(L.TS)
    steps = (frame
             .withColumn("_d", F.col(offset_col) - F.lag(offset_col).over(in_time))
             .withColumn("_dt", (F.unix_millis(L.TS) - F.unix_millis(F.lag(L.TS).over(in_time))) / 1000.0)
             .where(F.col("_dt") > 0)
             .withColumn(L.BUCKET, bucket(L.TS, resolution_seconds)))
    per_series = (steps.groupBy(*key, L.BUCKET)
                  .agg((F.sum(F.greatest(F.col("_d"), F.lit(0))) / F.sum("_dt")).alias(RATE)))
    return per_series.groupBy(by, L.BUCKET).agg(F.sum(RATE).alias(RATE))


def production_rates(partitions: DataFrame, *, resolution_seconds: int) -> DataFrame:
    """Records produced per second, per topic and bucket: topic, bucket, records_per_second."""
    return _rate_by_bucket(partitions, key=[L.TOPIC, L.PARTITION], offset_col=L.LOG_END_OFFSET, by=L.TOPIC,
                           resolution_seconds=resolution_seconds)


def consumption_rates(group_offsets: DataFrame, *, resolution_seconds: int) -> DataFrame:
    """Records committed per second, per group and bucket: group_id, bucket, records_per_second."""
    return _rate_by_bucket(group_offsets, key=[L.GROUP, L.TOPIC, L.PARTITION], offset_col=L.COMMITTED_OFFSET,
                           by=L.GROUP, resolution_seconds=resolution_seconds)


def catch_up(group_offsets: DataFrame, *, window_seconds: int) -> DataFrame:
    """Per group, over its last `window_seconds`: the lag now, the consumption and production
    rates of its partitions, and the seconds until the lag is gone at those rates (0 when
    there is no lag, null when the group does not gain on its producers).
    Rows: group_id, lag, consume_per_second, produce_per_second, catch_up_seconds."""
    series = [L.GROUP, L.TOPIC, L.PARTITION]
    # Each group's newest snapshot by a hash aggregation joined back (a window over the group
    # would sort every row).
    newest = group_offsets.groupBy(L.GROUP).agg(F.max(L.TS).alias("_newest"))
    recent = (with_lag(group_offsets).join(F.broadcast(newest), L.GROUP)
              .where(F.unix_millis(L.TS) >= F.unix_millis("_newest") - window_seconds * 1000))
    span = (F.unix_millis(F.max(L.TS)) - F.unix_millis(F.min(L.TS))) / 1000.0
    per_partition = recent.groupBy(*series).agg(
        F.max_by(L.LAG, L.TS).alias(L.LAG),
        F.when(span > 0, F.greatest(F.max_by(L.COMMITTED_OFFSET, L.TS) - F.min_by(L.COMMITTED_OFFSET, L.TS),
                                    F.lit(0)) / span).alias(CONSUME_RATE),
        F.when(span > 0, (F.max_by(L.LOG_END_OFFSET, L.TS) - F.min_by(L.LOG_END_OFFSET, L.TS)) / span)
        .alias(PRODUCE_RATE))
    groups = per_partition.groupBy(L.GROUP).agg(F.sum(L.LAG).alias(L.LAG), F.sum(CONSUME_RATE).alias(CONSUME_RATE),
                                                F.sum(PRODUCE_RATE).alias(PRODUCE_RATE))
    gaining = F.col(CONSUME_RATE) - F.col(PRODUCE_RATE)
    return groups.withColumn(CATCH_UP_SECONDS, F.when(F.col(L.LAG) == 0, F.lit(0.0))
                             .when(gaining > 0, F.col(L.LAG) / gaining))
