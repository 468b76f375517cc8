"""What the jobs share where Spark's JVM and a native engine want different plans.

The analytics run on Spark's JVM (`local[*]`, a cluster) or on Sail, a native engine behind
Spark Connect (console.analytics.spark). The same DataFrame code runs on both, but a few
aggregates cost one of them several times what they cost the other; for those, the job asks
`on_native_engine` and builds the form that engine runs well. Both forms give the same rows.
"""
from __future__ import annotations

from decimal import Decimal

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from console.analytics import lake as L

PACKED = "decimal(38,0)"
# A bigint moved to 1 .. 2^64 (null to 0) fits below 10^20, beside the time in microseconds
# (16 digits until the year 2286): 36 digits of the 38 a decimal holds.
_VALUE_ROOM = Decimal(10**20)
_SHIFT = Decimal(2**63 + 1)


def on_native_engine(frame_or_session: DataFrame | SparkSession) -> bool:
    """Whether a Spark Connect server plans this DataFrame, or this session's (the analytics'
    one is Sail), rather than Spark's JVM in this process: Connect's classes are those of
    pyspark.sql.connect."""
    return type(frame_or_session).__module__.startswith("pyspark.sql.connect.")


def value_at_newest(frame: DataFrame, value: str, *, ts: str = L.TS) -> Column:
    """An aggregate over `frame`'s groups: `max_by(value, ts)` of an integer column (null where
    the newest row's value is null).

    On a native engine it is one max over a decimal that packs the time before the value:
    Sail keeps a max in a flat array per group where max_by costs it an object per group,
    four times as long when the groups are many (a bucket per snapshot: a week of one-minute
    snapshots of 1,000 partitions is 10M groups). Spark's JVM computes decimals of 38 digits
    as Java objects, and takes max_by."""
    if not on_native_engine(frame):
        return F.max_by(value, ts)
    shifted = F.coalesce(F.col(value).cast(PACKED) + F.lit(_SHIFT), F.lit(Decimal(0)))
    packed = F.unix_micros(F.col(ts)).cast(PACKED) * F.lit(_VALUE_ROOM) + shifted
    newest = F.pmod(F.max(packed), F.lit(_VALUE_ROOM))
    return F.when(newest > 0, newest - F.lit(_SHIFT)).cast("bigint")
