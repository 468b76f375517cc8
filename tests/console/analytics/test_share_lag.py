"""The share groups' lag history job (console/analytics/jobs/share.py) on synthetic snapshots."""
from datetime import datetime, timedelta, timezone

from console.analytics import lake as L
from console.analytics.jobs.share import share_lag_history
from tests.support.spark import frame

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def test_share_lag_history_sums_partitions_and_keeps_the_counters_at_the_buckets_end(spark):
    def row(seconds, partition, lag, in_flight, poison, expiries):
        return (T0 + timedelta(seconds=seconds), "q", "t", partition, 100, 200, lag, 2, in_flight, 0, poison, expiries)
    rows = [row(0, 0, 30, 5, 0, 1), row(60, 0, 20, 4, 2, 3), row(0, 1, 7, 1, 0, 0), row(60, 1, 9, 2, 1, 0),
            row(300, 0, 3, 1, 2, 5)]
    history = share_lag_history(frame(spark, L.SHARE_GROUP_PARTITIONS, rows), resolution_seconds=300)
    got = [(r[L.BUCKET].replace(tzinfo=timezone.utc), r[L.LAG], r[L.IN_FLIGHT], r[L.ARCHIVED_POISON],
            r[L.LOCK_EXPIRIES]) for r in history.orderBy(L.BUCKET).collect()]
    assert got == [(T0, 30 + 9, 5 + 2, 2 + 1, 3 + 0), (T0 + timedelta(seconds=300), 3, 1, 2, 5)]
