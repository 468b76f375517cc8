"""Retention and growth: bytes over time, growth per day, days until a log dir is full,
effective retention, and what-ifs for retention.ms / retention.bytes."""
from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from console.analytics import lake as L
from console.analytics.jobs.aggregates import value_at_newest
from console.analytics.jobs.lag import bucket
from console.analytics.jobs.timeline import REACHED_AT, offset_reached_at

GROWTH_PER_DAY = "growth_bytes_per_day"     # net: negative when retention or deletions free more than is written
WRITTEN_PER_DAY = "written_bytes_per_day"   # what the partitions' sizes grew by, their drops left out
DAYS_UNTIL_FULL = "days_until_full"
# What a growth per day is projected from: the seconds between its first and last snapshot, and
# how many snapshots. A page shows the projection only from PROJECTION_MIN_SECONDS of them on:
# a day extrapolated from a few minutes is mostly the noise of those minutes.
SPAN_SECONDS, SNAPSHOTS = "span_seconds", "snapshots"
PROJECTION_MIN_SECONDS = 3600
OLDEST_AGE_MS = "oldest_age_ms"
RETENTION_USED = "retention_used"           # oldest age / retention.ms
KEPT_BYTES, FREED_BYTES, METHOD = "kept_bytes", "freed_bytes", "method"
SEGMENTS, FREED_SEGMENTS = "segments", "freed_segments"
WHOLE_SEGMENTS = ("Kafka deletes whole segments, never part of one. The estimate assumes each partition's log is "
                  "segments of segment.bytes from its log start offset, records of equal size (size divided by "
                  "its record count), and record times interpolated from the snapshots; a segment goes when its "
                  "newest record is older than retention.ms, or while the log without it still exceeds "
                  "retention.bytes. Records older than the lake's first snapshot have no known time, so "
                  "retention.ms frees nothing the lake cannot date.")


def _last_per_bucket(frame: DataFrame, *, series: list[str], value: str, resolution_seconds: int) -> DataFrame:
    return (frame.withColumn(L.BUCKET, bucket(L.TS, resolution_seconds))
            .groupBy(*series, L.BUCKET).agg(value_at_newest(frame, value).alias(value)))


def topic_bytes(partitions: DataFrame, *, resolution_seconds: int) -> DataFrame:
    """topic, bucket, size_bytes: each partition's last size in the bucket, summed per topic."""
    last = _last_per_bucket(partitions, series=[L.TOPIC, L.PARTITION], value=L.SIZE_BYTES,
                            resolution_seconds=resolution_seconds)
    return last.groupBy(L.TOPIC, L.BUCKET).agg(F.sum(L.SIZE_BYTES).alias(L.SIZE_BYTES))


def broker_bytes(log_dirs: DataFrame, *, resolution_seconds: int) -> DataFrame:
    """broker_id, bucket, size_bytes: each log dir's last size in the bucket, summed per broker."""
    last = _last_per_bucket(log_dirs, series=[L.BROKER, L.LOG_DIR], value=L.SIZE_BYTES,
                            resolution_seconds=resolution_seconds)
    return last.groupBy(L.BROKER, L.BUCKET).agg(F.sum(L.SIZE_BYTES).alias(L.SIZE_BYTES))


def growth_per_day(series: DataFrame, *, key: list[str], time_col: str = L.BUCKET) -> DataFrame:
    """Least-squares slope of size_bytes over time, in bytes per day, per `key`."""
    seconds = F.unix_millis(time_col) / 1000.0
    return series.groupBy(*key).agg((F.regr_slope(L.SIZE_BYTES, seconds) * 86400.0).alias(GROWTH_PER_DAY))


def current_topics(partitions: DataFrame) -> DataFrame:
    """The topics of the newest snapshot: a topic deleted since is history, not listed."""
    newest = partitions.agg(F.max(L.TS).alias("_newest"))
    return partitions.join(newest, F.col(L.TS) == F.col("_newest")).select(L.TOPIC).distinct()


def topic_growth(partitions: DataFrame, *, resolution_seconds: int = 60) -> DataFrame:
    """Per topic of the newest snapshot: the net growth per day (the slope of its size, below
    zero when retention or deletions free more than is written) and the bytes written per day
    (each partition's size increases between snapshots, its drops left out, over the span),
    with what they are projected from: the span in seconds and the count of snapshots.
    Rows: topic, growth_bytes_per_day, written_bytes_per_day, span_seconds, snapshots."""
    net = growth_per_day(topic_bytes(partitions, resolution_seconds=resolution_seconds), key=[L.TOPIC])
    in_time = Window.partitionBy(L.TOPIC, L.PARTITION).orderBy(L.TS)
    steps = (partitions.withColumn("_grew", F.greatest(F.col(L.SIZE_BYTES) - F.lag(L.SIZE_BYTES).over(in_time),
                                                       F.lit(0)))
             .groupBy(L.TOPIC).agg(F.sum("_grew").alias("_grew"), _span_seconds(), _snapshots()))
    written = steps.select(L.TOPIC, F.when(F.col(SPAN_SECONDS) > 0, F.col("_grew") * 86400.0 / F.col(SPAN_SECONDS))
                           .alias(WRITTEN_PER_DAY), SPAN_SECONDS, SNAPSHOTS)
    return current_topics(partitions).join(net, L.TOPIC, "left").join(written, L.TOPIC, "left")


def _span_seconds():
    return ((F.unix_millis(F.max(L.TS)) - F.unix_millis(F.min(L.TS))) / 1000.0).alias(SPAN_SECONDS)


def _snapshots():
    return F.countDistinct(L.TS).alias(SNAPSHOTS)


def days_until_full(log_dirs: DataFrame) -> DataFrame:
    """Per broker log dir: its usable bytes now, its data's growth per day, and the days until
    that growth uses the usable bytes up (null when not growing or when usable is unknown),
    with what the growth is projected from (the span in seconds, the count of snapshots).
    Rows: broker_id, log_dir, total_bytes, usable_bytes, size_bytes, span_seconds, snapshots,
    growth_bytes_per_day, days_until_full."""
    key = [L.BROKER, L.LOG_DIR]
    latest = log_dirs.groupBy(*key).agg(*[F.max_by(c, L.TS).alias(c) for c in (L.TOTAL_BYTES, L.USABLE_BYTES,
                                                                             L.SIZE_BYTES)],
                                        _span_seconds(), _snapshots())
    growth = growth_per_day(log_dirs, key=key, time_col=L.TS)
    days = F.when((F.col(GROWTH_PER_DAY) > 0) & (F.col(L.USABLE_BYTES) >= 0),
                  F.col(L.USABLE_BYTES) / F.col(GROWTH_PER_DAY))
    return latest.join(growth, key).withColumn(DAYS_UNTIL_FULL, days)


def _latest(frame: DataFrame, key: list[str]) -> DataFrame:
    """The newest row of each `key`: one hash aggregation (max_by), not a window's sort of every row."""
    others = [c for c in frame.columns if c not in key]
    newest = F.max_by(F.struct(*others), L.TS).alias("_newest")
    return (frame.groupBy(*key).agg(newest)
            .select(*key, *[F.col(f"_newest.{c}").alias(c) for c in others]).select(*frame.columns))


def effective_retention(partitions: DataFrame, topic_configs: DataFrame) -> DataFrame:
    """Per topic of the newest snapshot: how old its oldest retained record is (when the log end
    offset passed the log start offset), against retention.ms. Rows: topic, oldest_age_ms (null
    for a topic without records, or whose oldest is older than the lake), retention_ms (null
    before the topic's configs are in the lake), retention_used (null when the topic keeps data
    forever or the age is unknown)."""
    latest = _latest(partitions, [L.TOPIC, L.PARTITION]).where(F.col(L.LOG_END_OFFSET) > F.col(L.LOG_START_OFFSET))
    # The record at offset o exists once the log end offset reaches o + 1.
    probes = latest.withColumn("_first_record_end", F.col(L.LOG_START_OFFSET) + 1)
    aged = offset_reached_at(partitions=partitions, probes=probes, offset_col="_first_record_end")
    per_topic = aged.groupBy(L.TOPIC).agg(F.max(F.unix_millis(L.TS) - F.unix_millis(REACHED_AT)).alias(OLDEST_AGE_MS))
    configs = _latest(topic_configs, [L.TOPIC]).select(L.TOPIC, L.RETENTION_MS)
    used = F.when(F.col(L.RETENTION_MS) > 0, F.col(OLDEST_AGE_MS) / F.col(L.RETENTION_MS))
    return (current_topics(partitions).join(per_topic, L.TOPIC, "left").join(configs, L.TOPIC, "left")
            .withColumn(RETENTION_USED, used))


def retention_what_if_partitions(partitions: DataFrame, topic_configs: DataFrame, *, now: datetime,
                                 retention_ms: int | None = None, retention_bytes: int | None = None) -> DataFrame:
    """Per partition, with retention.ms = `retention_ms` and/or retention.bytes = `retention_bytes`
    (per partition, as in Kafka): the bytes it frees, in whole segments (see WHOLE_SEGMENTS).
    Rows: topic, partition, size_bytes, segment_bytes, freed_bytes, kept_bytes, segments, freed_segments."""
    key = [L.TOPIC, L.PARTITION]
    latest = _latest(partitions, key).join(_latest(topic_configs, [L.TOPIC]).select(L.TOPIC, L.SEGMENT_BYTES), L.TOPIC)
    segment, size = F.col(L.SEGMENT_BYTES), F.col(L.SIZE_BYTES)
    whole = lambda bytes_: F.floor(F.greatest(bytes_, F.lit(0)) / segment) * segment  # noqa: E731
    deletions = [F.lit(0)]
    if retention_bytes is not None:
        deletions.append(whole(size - F.lit(retention_bytes)))
    if retention_ms is not None:
        latest = latest.join(_offset_at(partitions, at_ms=int(now.timestamp() * 1000) - retention_ms), key, "left")
        records = F.col(L.LOG_END_OFFSET) - F.col(L.LOG_START_OFFSET)
        older = F.when(records > 0, (F.coalesce(F.col("_cut"), F.col(L.LOG_START_OFFSET)) - F.col(L.LOG_START_OFFSET))
                       * size / records).otherwise(F.lit(0))
        deletions.append(whole(F.least(older, size)))
    freed = F.least(F.greatest(*deletions) if len(deletions) > 1 else deletions[0], size).cast("bigint")
    return (latest.select(L.TOPIC, L.PARTITION, L.SIZE_BYTES, L.SEGMENT_BYTES, freed.alias(FREED_BYTES))
            .withColumn(KEPT_BYTES, F.col(L.SIZE_BYTES) - F.col(FREED_BYTES))
            .withColumn(SEGMENTS, F.ceil(F.col(L.SIZE_BYTES) / F.col(L.SEGMENT_BYTES)).cast("bigint"))
            .withColumn(FREED_SEGMENTS, F.floor(F.col(FREED_BYTES) / F.col(L.SEGMENT_BYTES)).cast("bigint")))


def retention_what_if(partitions: DataFrame, topic_configs: DataFrame, *, now: datetime,
                      retention_ms: int | None = None, retention_bytes: int | None = None) -> DataFrame:
    """Per topic: the sums of `retention_what_if_partitions`.
    Rows: topic, size_bytes, kept_bytes, freed_bytes, method."""
    per_partition = retention_what_if_partitions(partitions, topic_configs, now=now, retention_ms=retention_ms,
                                                 retention_bytes=retention_bytes)
    return (per_partition.groupBy(L.TOPIC)
            .agg(F.sum(L.SIZE_BYTES).alias(L.SIZE_BYTES), F.sum(FREED_BYTES).alias(FREED_BYTES))
            .withColumn(KEPT_BYTES, F.col(L.SIZE_BYTES) - F.col(FREED_BYTES))
            .withColumn(METHOD, F.lit(WHOLE_SEGMENTS)))


def _offset_at(partitions: DataFrame, *, at_ms: int) -> DataFrame:
    """Per partition, the log end offset at time `at_ms` (`_cut`), interpolated between the
    snapshots around it; null when `at_ms` is older than the lake (nothing known to be older)."""
    ms = F.unix_millis(L.TS)
    before, after = ms <= at_ms, ms > at_ms
    bounds = partitions.groupBy(L.TOPIC, L.PARTITION).agg(
        F.max_by(F.when(before, F.col(L.LOG_END_OFFSET)), F.when(before, ms)).alias("_a"),
        F.max(F.when(before, ms)).alias("_a_ms"),
        F.min_by(F.when(after, F.col(L.LOG_END_OFFSET)), F.when(after, ms)).alias("_b"),
        F.min(F.when(after, ms)).alias("_b_ms"))
    fraction = (F.lit(at_ms) - F.col("_a_ms")) / (F.col("_b_ms") - F.col("_a_ms"))
    cut = (F.when(F.col("_a").isNull(), F.lit(None))
           .when(F.col("_b").isNull(), F.col("_a"))
           .otherwise(F.floor(F.col("_a") + fraction * (F.col("_b") - F.col("_a")))))
    return bounds.select(L.TOPIC, L.PARTITION, cut.cast("bigint").alias("_cut"))
