"""When did a partition's log end offset reach an offset? Interpolated from snapshots.

Used by time lag (kafka-lag-exporter's method) and by effective retention (the age of the
oldest retained offset). Each probe row asks about (topic, partition, offset); the answer is
the time between the last snapshot whose log end offset was below it and the first one at
or above it, interpolated linearly. The probes are sorted in with the snapshots per partition
(window functions), not joined with every snapshot, and ride through the sort whole (their
columns null on the snapshot rows), so the answer needs no join back to them.
"""
from __future__ import annotations

from decimal import Decimal

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from console.analytics import lake as L
from console.analytics.jobs.aggregates import PACKED, on_native_engine

REACHED_AT = "reached_at"
_KIND, _OFFSET, _POINT_TS = "_kind", "_offset", "_point_ts"
_PROBE, _POINT = 0, 1          # at equal offsets probes sort first: a point equal to the offset is "at or above"
# The points around each probe: its last point before (a) and first at or after (b), as
# seconds and offsets; a's seconds are null when no point is before it, b's when none after.
_A_S, _A_OFFSET, _B_S, _B_OFFSET = "_a_s", "_a_offset", "_b_s", "_b_offset"
# A point packed into one decimal, its offset first, then its time in milliseconds (offsets
# below 2^63: 19 digits; milliseconds below 10^13 until the year 2286: 32 digits of 38).
_MS_ROOM = Decimal(10**13)


def offset_reached_at(*, partitions: DataFrame, probes: DataFrame, offset_col: str) -> DataFrame:
    """`probes` with a REACHED_AT timestamp: when the log end offset reached `offset_col`.
    Null when the offset is older than the first snapshot (the lake cannot tell)."""
    key = [L.TOPIC, L.PARTITION]
    points = partitions.select(*key, F.col(L.LOG_END_OFFSET).alias(_OFFSET), F.col(L.TS).alias(_POINT_TS),
                               F.lit(_POINT).alias(_KIND))
    asked = (probes.withColumn(_OFFSET, F.col(offset_col)).withColumn(_POINT_TS, F.lit(None).cast("timestamp"))
             .withColumn(_KIND, F.lit(_PROBE)))
    ordered = Window.partitionBy(*key).orderBy(_OFFSET, _KIND, _POINT_TS)
    reversed_ = Window.partitionBy(*key).orderBy(F.col(_OFFSET).desc(), F.col(_KIND).desc(), F.col(_POINT_TS).desc())
    together = asked.unionByName(points, allowMissingColumns=True)
    bracket = _by_running_extremes if on_native_engine(partitions) else _by_last_points
    bracketed = bracket(together, ordered=ordered, reversed_=reversed_).where(F.col(_KIND) == _PROBE)
    a_s, b_s = F.col(_A_S), F.col(_B_S)
    fraction = (F.col(_OFFSET) - F.col(_A_OFFSET)) / (F.col(_B_OFFSET) - F.col(_A_OFFSET))
    seconds = F.when(a_s.isNull(), F.lit(None)) \
               .when(b_s.isNull(), a_s) \
               .otherwise(a_s + fraction * (b_s - a_s))
    return bracketed.select(*probes.columns, F.timestamp_millis(F.round(seconds * 1000).cast("bigint")).alias(REACHED_AT))


def _by_last_points(together: DataFrame, *, ordered: Window, reversed_: Window) -> DataFrame:
    """Spark's JVM: the last non-null point value before each row, in both orders. Both frames
    grow (unbounded preceding .. the row before), which Spark computes in one pass; a frame
    reaching to UNBOUNDED FOLLOWING is recomputed for every row (quadratic: 415 s instead of
    seconds for a day of 1,000 partitions), so "the first point after" is "the last point
    before" in the reverse order."""
    is_point = F.col(_KIND) == _POINT
    point_seconds = F.when(is_point, F.unix_millis(_POINT_TS) / 1000.0)
    point_offset = F.when(is_point, F.col(_OFFSET))
    before = ordered.rowsBetween(Window.unboundedPreceding, -1)
    after = reversed_.rowsBetween(Window.unboundedPreceding, -1)
    return (together
            .withColumn(_A_S, F.last(point_seconds, ignorenulls=True).over(before))
            .withColumn(_A_OFFSET, F.last(point_offset, ignorenulls=True).over(before))
            .withColumn(_B_S, F.last(point_seconds, ignorenulls=True).over(after))
            .withColumn(_B_OFFSET, F.last(point_offset, ignorenulls=True).over(after)))


def _by_running_extremes(together: DataFrame, *, ordered: Window, reversed_: Window) -> DataFrame:
    """A native engine: each point packed into one decimal (offset, then time), whose running
    max in offset order is the last point before a row, and whose running min in the reverse
    order the first point at or after it. One running aggregate per order, where four
    `last(ignorenulls)` cost Sail three times as long; Spark's JVM computes such decimals as
    Java objects. The frames end at the current row: a probe's own packed point is null, and
    the points at its offset sort after it in offset order."""
    packed = F.when(F.col(_KIND) == _POINT, _pack(F.col(_OFFSET), F.col(_POINT_TS)))
    return (together
            .withColumn("_a", F.max(packed).over(ordered.rowsBetween(Window.unboundedPreceding, 0)))
            .withColumn("_b", F.min(packed).over(reversed_.rowsBetween(Window.unboundedPreceding, 0)))
            .withColumn(_A_S, _packed_seconds("_a")).withColumn(_A_OFFSET, _packed_offset("_a"))
            .withColumn(_B_S, _packed_seconds("_b")).withColumn(_B_OFFSET, _packed_offset("_b")))


def _pack(offset: Column, ts: Column) -> Column:
    return offset.cast(PACKED) * F.lit(_MS_ROOM) + F.unix_millis(ts).cast(PACKED)


def _packed_offset(packed: str) -> Column:
    return F.floor(F.col(packed) / F.lit(_MS_ROOM)).cast("bigint")


def _packed_seconds(packed: str) -> Column:
    return F.pmod(F.col(packed), F.lit(_MS_ROOM)).cast("bigint") / 1000.0
