"""Rates: production per topic, consumption per group, and each group's time to catch up.

Consumption is what a group's members read: a committed offset that moves while the group
has no member, at either end of the step, is an offset reset or a commit by a tool (Kafka
takes admin commits only from empty groups), not consumption, and counts as no progress."""
from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from console.analytics import lake as L
from console.analytics.jobs.lag import bucket, with_lag

RATE = "records_per_second"
PRODUCE_RATE, CONSUME_RATE = "produce_per_second", "consume_per_second"
CATCH_UP_SECONDS = "catch_up_seconds"


def _steps(frame: DataFrame, *, key: list[str], offset_col: str, by_members: bool = False) -> DataFrame:
    """Each series' steps between consecutive snapshots: `_d` the offset's progress (0 for a
    step back: topic recreated, offsets reset; 0 too, with `by_members`, for a step the group
    had no member at either end of) and `_dt` the seconds between them."""
    in_time = Window.partitionBy(*key).orderBy(L.TS)
    progress = F.greatest(F.col(offset_col) - F.lag(offset_col).over(in_time), F.lit(0))
    if by_members:
        consumed = (F.col(L.MEMBERS) > 0) | (F.lag(L.MEMBERS).over(in_time) > 0)
        progress = F.when(consumed, progress).otherwise(F.lit(0))
    return (frame.withColumn("_d", progress)
            .withColumn("_dt", (F.unix_millis(L.TS) - F.unix_millis(F.lag(L.TS).over(in_time))) / 1000.0)
            .where(F.col("_dt") > 0))


def _rate_by_bucket(frame: DataFrame, *, key: list[str], offset_col: str, by: str, resolution_seconds: int,
                    by_members: bool = False) -> DataFrame:
    """Sum over the `key` series of (offset progress / time) between snapshots (`_steps`), per
    `by` and bucket."""
    steps = _steps(frame, key=key, offset_col=offset_col, by_members=by_members) \
        .withColumn(L.BUCKET, bucket(L.TS, resolution_seconds))
    per_series = (steps.groupBy(*key, L.BUCKET)
                  .agg((F.sum("_d") / F.sum("_dt")).alias(RATE)))
    return per_series.groupBy(by, L.BUCKET).agg(F.sum(RATE).alias(RATE))


def production_rates(partitions: DataFrame, *, resolution_seconds: int) -> DataFrame:
    """Records produced per second, per topic and bucket: topic, bucket, records_per_second."""
    return _rate_by_bucket(partitions, key=[L.TOPIC, L.PARTITION], offset_col=L.LOG_END_OFFSET, by=L.TOPIC,
                           resolution_seconds=resolution_seconds)


def consumption_rates(group_offsets: DataFrame, *, resolution_seconds: int) -> DataFrame:
    """Records its members consumed (committed) per second, per group and bucket: group_id,
    bucket, records_per_second. Resets and tools' commits are not consumption (module docstring)."""
    return _rate_by_bucket(group_offsets, key=[L.GROUP, L.TOPIC, L.PARTITION], offset_col=L.COMMITTED_OFFSET,
                           by=L.GROUP, resolution_seconds=resolution_seconds, by_members=True)


def catch_up(group_offsets: DataFrame, *, window_seconds: int) -> DataFrame:
    """Per group, over its last `window_seconds`: the lag now, the consumption and production
    rates of its partitions, and the seconds until the lag is gone at those rates (0 when
    there is no lag, null when the group does not gain on its producers, and null when it
    has no member now: nobody is consuming, whatever its offsets did).
    Rows: group_id, lag, members, consume_per_second, produce_per_second, catch_up_seconds."""
    series = [L.GROUP, L.TOPIC, L.PARTITION]
    # Each group's newest snapshot by a hash aggregation joined back (a window over the group
    # would sort every row). Nothing older than the oldest group's newest snapshot minus the
    # window is read: that bound, asked first, prunes the scan to the last minutes of most lakes.
    newest = group_offsets.groupBy(L.GROUP).agg(F.max(L.TS).alias("_newest"))
    oldest_newest = newest.agg(F.min("_newest")).first()[0]
    if oldest_newest is not None:
        group_offsets = group_offsets.where(F.col(L.TS) >= F.lit(oldest_newest - dt.timedelta(seconds=window_seconds)))
        newest = group_offsets.groupBy(L.GROUP).agg(F.max(L.TS).alias("_newest"))
    recent = (with_lag(group_offsets).join(F.broadcast(newest), L.GROUP)
              .where(F.unix_millis(L.TS) >= F.unix_millis("_newest") - window_seconds * 1000))
    steps = _steps(recent, key=series, offset_col=L.COMMITTED_OFFSET, by_members=True)
    consumed = steps.groupBy(*series).agg(F.sum("_d").alias("_consumed"))
    span = (F.unix_millis(F.max(L.TS)) - F.unix_millis(F.min(L.TS))) / 1000.0
    per_partition = recent.groupBy(*series).agg(
        F.max_by(L.LAG, L.TS).alias(L.LAG), F.max_by(L.MEMBERS, L.TS).alias(L.MEMBERS), span.alias("_span"),
        F.when(span > 0, (F.max_by(L.LOG_END_OFFSET, L.TS) - F.min_by(L.LOG_END_OFFSET, L.TS)) / span)
        .alias(PRODUCE_RATE))
    per_partition = (per_partition.join(consumed, series, "left")
                     .withColumn(CONSUME_RATE, F.when(F.col("_span") > 0,
                                                      F.coalesce(F.col("_consumed"), F.lit(0)) / F.col("_span"))))
    groups = per_partition.groupBy(L.GROUP).agg(F.sum(L.LAG).alias(L.LAG), F.max(L.MEMBERS).alias(L.MEMBERS),
                                                F.sum(CONSUME_RATE).alias(CONSUME_RATE),
                                                F.sum(PRODUCE_RATE).alias(PRODUCE_RATE))
    gaining = F.col(CONSUME_RATE) - F.col(PRODUCE_RATE)
    return groups.withColumn(CATCH_UP_SECONDS, F.when(F.col(L.LAG) == 0, F.lit(0.0))
                             .when((F.col(L.MEMBERS) > 0) & (gaining > 0), F.col(L.LAG) / gaining))
