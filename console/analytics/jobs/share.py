"""Share groups (KIP-932): lag history at several resolutions, beside the consumer groups'.

Per share group and time bucket: the lag summed over its share partitions (each partition's
worst lag in the bucket), the records in flight, and - on clusters that tell them - the
records archived as poison and the lock expiries, as the counters stood at the bucket's end.
Rows: group_id, bucket, lag, in_flight, archived_poison_total, lock_expiries_total.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from console.analytics import lake as L
from console.analytics.jobs.aggregates import value_at_newest
from console.analytics.jobs.lag import bucket

_PARTITION = [L.GROUP, L.TOPIC, L.PARTITION]


def share_lag_history(share_partitions: DataFrame, *, resolution_seconds: int) -> DataFrame:
    per_partition = (share_partitions
                     .withColumn(L.BUCKET, bucket(L.TS, resolution_seconds))
                     .groupBy(*_PARTITION, L.BUCKET)
                     .agg(F.max(L.LAG).alias(L.LAG), F.max(L.IN_FLIGHT).alias(L.IN_FLIGHT),
                          value_at_newest(share_partitions, L.ARCHIVED_POISON).alias(L.ARCHIVED_POISON),
                          value_at_newest(share_partitions, L.LOCK_EXPIRIES).alias(L.LOCK_EXPIRIES)))
    return (per_partition.groupBy(L.GROUP, L.BUCKET)
            .agg(F.sum(L.LAG).alias(L.LAG), F.sum(L.IN_FLIGHT).alias(L.IN_FLIGHT),
                 F.sum(L.ARCHIVED_POISON).alias(L.ARCHIVED_POISON), F.sum(L.LOCK_EXPIRIES).alias(L.LOCK_EXPIRIES)))
