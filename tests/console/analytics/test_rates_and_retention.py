"""Rates, growth and retention jobs on synthetic snapshots with hand-computed answers."""
from datetime import datetime, timedelta, timezone

import pytest

from console.analytics import lake as L
from console.analytics.jobs import rates, retention
from tests.support.spark import frame

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=timezone.utc)
DAY = 86400


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def partitions(spark, rows):
    """rows: (seconds, topic, partition, log_start, log_end, size)."""
    return frame(spark, L.PARTITIONS, [(at(s), t, p, 1, lso, leo, size) for s, t, p, lso, leo, size in rows])


def group_offsets(spark, rows):
    """rows: (seconds, group, partition, committed, log_end[, members]) on topic "t"; 1 member by default."""
    return frame(spark, L.GROUP_OFFSETS, [(at(r[0]), r[1], "t", r[2], r[3], r[4], r[5] if len(r) > 5 else 1)
                                          for r in rows])


def configs(spark, rows):
    """rows: (topic, retention_ms, retention_bytes, segment_bytes) at T0."""
    return frame(spark, L.TOPIC_CONFIGS, [(T0, t, "delete", ms, b, seg) for t, ms, b, seg in rows])


def test_production_rate_sums_partitions_per_bucket(spark):
    rows = [(s, "t", p, 0, (p + 1) * 10 * s // 60, 0) for s in (0, 60, 120, 180) for p in (0, 1)]
    result = rates.production_rates(partitions(spark, rows), resolution_seconds=120).orderBy(L.BUCKET).collect()
    # partition 0 grows 10/min, partition 1 20/min: 0.5 records/s together.
    assert [(r[L.TOPIC], r[L.BUCKET].replace(tzinfo=timezone.utc), r[rates.RATE]) for r in result] == [
        ("t", at(0), 0.5), ("t", at(120), 0.5)]


def test_consumption_rate_ignores_a_rewind(spark):
    rows = [(0, "g", 0, 100, 500), (60, "g", 0, 160, 500), (120, "g", 0, 40, 500), (180, "g", 0, 100, 500)]
    [row] = rates.consumption_rates(group_offsets(spark, rows), resolution_seconds=3600).collect()
    assert row[rates.RATE] == pytest.approx((60 + 0 + 60) / 180)


def test_catch_up_time_from_the_gap_between_consumption_and_production(spark):
    rows = [(s, "gaining", 0, 2 * s, 1000 + s) for s in (0, 60, 120)]          # lag 1000 -> 880: gains 1/s
    rows += [(s, "losing", 0, s, 1000 + 2 * s) for s in (0, 60, 120)]           # loses 1/s
    rows += [(s, "idle", 0, 50, 50) for s in (0, 60, 120)]
    rows += [(0, "gaining", 1, 0, 0), (120, "gaining", 1, 0, 0)]                 # an idle partition adds nothing
    result = {r[L.GROUP]: r for r in rates.catch_up(group_offsets(spark, rows), window_seconds=600).collect()}
    assert (result["gaining"][L.LAG], result["gaining"][rates.CATCH_UP_SECONDS]) == (1000 - 120, 880.0)
    assert result["losing"][rates.CATCH_UP_SECONDS] is None
    assert result["idle"][rates.CATCH_UP_SECONDS] == 0.0


def test_an_offset_reset_of_an_empty_group_is_not_consumption(spark):
    """"stopped": no member; an admin reset moves its offset from 100 to 6,922 (to the latest)
    between two snapshots. "consumer": a member reads 60 records a minute; it leaves after the
    second step, whose progress still counts."""
    rows = [(0, "stopped", 0, 100, 7000, 0), (60, "stopped", 0, 6922, 7000, 0), (120, "stopped", 0, 6922, 7000, 0)]
    rows += [(0, "consumer", 0, 0, 500, 1), (60, "consumer", 0, 60, 500, 1), (120, "consumer", 0, 120, 500, 0),
             (180, "consumer", 0, 400, 500, 0)]                # reset while empty: not consumption
    rates_by_group = {r[L.GROUP]: r[rates.RATE]
                      for r in rates.consumption_rates(group_offsets(spark, rows), resolution_seconds=3600).collect()}
    assert rates_by_group == {"stopped": 0.0, "consumer": pytest.approx(120 / 180)}
    result = {r[L.GROUP]: r for r in rates.catch_up(group_offsets(spark, rows), window_seconds=600).collect()}
    assert result["stopped"][rates.CONSUME_RATE] == 0.0 and result["stopped"][L.MEMBERS] == 0
    assert result["stopped"][rates.CATCH_UP_SECONDS] is None           # nobody consumes: no catch-up time
    assert result["consumer"][rates.CONSUME_RATE] == pytest.approx(120 / 180)
    assert result["consumer"][rates.CATCH_UP_SECONDS] is None          # no member now


def test_growth_below_zero_when_retention_frees_more_than_is_written_and_deleted_topics_go(spark):
    """"shrinking": written 100 bytes a day, while retention drops 1,000 a day; "gone": deleted
    before the newest snapshot, so not listed."""
    rows = [(d * DAY, "shrinking", 0, 0, 0, 5000 - 900 * d) for d in range(5)]
    rows += [(d * DAY + 3600, "shrinking", 0, 0, 0, 5000 - 900 * d + 100) for d in range(4)]
    rows += [(d * DAY, "gone", 0, 0, 0, 1000 * d) for d in range(3)]
    result = {r[L.TOPIC]: r for r in retention.topic_growth(partitions(spark, rows), resolution_seconds=60).collect()}
    assert set(result) == {"shrinking"}
    assert result["shrinking"][retention.GROWTH_PER_DAY] < -800
    assert result["shrinking"][retention.WRITTEN_PER_DAY] == pytest.approx(400 / 4)
    # What the figures are projected from: four days, nine snapshots.
    assert (result["shrinking"][retention.SPAN_SECONDS], result["shrinking"][retention.SNAPSHOTS]) == (4 * DAY, 9)
    aged = {r[L.TOPIC] for r in retention.effective_retention(
        partitions(spark, [(d * DAY, t, 0, 0, 5, 10) for d in range(3) for t in ("kept", "gone") if (t, d) != ("gone", 2)]),
        configs(spark, [("kept", 86_400_000, -1, 1000), ("gone", 86_400_000, -1, 1000)])).collect()}
    assert aged == {"kept"}


def test_topic_bytes_growth_and_days_until_full(spark):
    rows = [(d * DAY, "t", p, 0, 0, 1000 * d + 50 * p) for d in range(4) for p in (0, 1)]
    per_topic = retention.topic_bytes(partitions(spark, rows), resolution_seconds=DAY)
    assert [r[L.SIZE_BYTES] for r in per_topic.orderBy(L.BUCKET).collect()] == [50, 2050, 4050, 6050]
    [growth] = retention.growth_per_day(per_topic, key=[L.TOPIC]).collect()
    assert growth[retention.GROWTH_PER_DAY] == pytest.approx(2000.0)

    dirs = frame(spark, L.LOG_DIRS, [(at(d * DAY), 1, "/d1", 10**6, 100_000 - 5000 * d, 5000 * d) for d in range(3)]
                 + [(at(d * DAY), 2, "/d2", 10**6, 100_000, 7) for d in range(3)]
                 + [(at(d * DAY), 3, "/d3", -1, -1, 5000 * d) for d in range(3)])
    result = {r[L.BROKER]: r for r in retention.days_until_full(dirs).collect()}
    assert result[1][retention.DAYS_UNTIL_FULL] == pytest.approx(90_000 / 5000)
    assert (result[1][retention.SPAN_SECONDS], result[1][retention.SNAPSHOTS]) == (2 * DAY, 3)
    assert result[2][retention.DAYS_UNTIL_FULL] is None            # not growing
    assert result[3][retention.DAYS_UNTIL_FULL] is None            # usable bytes unknown (DescribeLogDirs < v4)
    per_broker = retention.broker_bytes(dirs, resolution_seconds=DAY).where(f"{L.BROKER} = 1").orderBy(L.BUCKET)
    assert [r[L.SIZE_BYTES] for r in per_broker.collect()] == [0, 5000, 10000]


def test_effective_retention_is_the_age_of_the_oldest_retained_record(spark):
    # 10 records/min from offset 0; retention moved the log start to 300 (record 300 appeared
    # when the log end offset reached 301, at 30.1 min). Now is 60 min.
    rows = [(60 * m, "t", 0, 0 if m < 50 else 300, 10 * m, 100 * m) for m in range(61)]
    [row] = retention.effective_retention(partitions(spark, rows), configs(spark, [("t", 3_600_000, -1, 1000)])).collect()
    assert row[retention.OLDEST_AGE_MS] == (60 * 60 - 30.1 * 60) * 1000
    assert row[retention.RETENTION_USED] == pytest.approx((3600 - 1806) / 3600)


def test_retention_what_if_frees_only_whole_segments(spark):
    # One partition: offsets 0..1000 (100 bytes each: 100,000 bytes), 10 records per minute over
    # 100 minutes; segment.bytes 30,000, i.e. 300 records. Segments: [0,300) [300,600) [600,900) [900,1000).
    rows = [(60 * m, "t", 0, 0, 10 * m, 1000 * m) for m in range(101)]
    now = at(6000)
    snapshots, topic = partitions(spark, rows), configs(spark, [("t", -1, -1, 30_000)])

    def what_if(**change):
        [row] = retention_what_if(snapshots, topic, now=now, **change)
        return row[retention.KEPT_BYTES], row[retention.FREED_BYTES]

    def retention_what_if(*args, **kwargs):
        return retention.retention_what_if(*args, **kwargs).collect()

    # retention.ms = 45 min: records before offset 550 (55,000 bytes) are old; only segment 1 is
    # wholly old, segment 2 still holds newer records.
    assert what_if(retention_ms=45 * 60_000) == (70_000, 30_000)
    # retention.bytes = 35,000: drop the oldest segments while the rest is still >= 35,000: two go.
    assert what_if(retention_bytes=35_000) == (40_000, 60_000)
    # Both: whichever frees more.
    assert what_if(retention_ms=45 * 60_000, retention_bytes=35_000) == (40_000, 60_000)
    # Longer than the lake's history: nothing is known to be older, nothing is freed.
    assert what_if(retention_ms=500 * 60_000) == (100_000, 0)
    [row] = retention_what_if(snapshots, topic, now=now, retention_bytes=1)
    assert "whole segments" in row[retention.METHOD]


def test_a_few_minutes_of_snapshots_say_how_little_the_growth_is_projected_from(spark):
    """Five snapshots a minute apart: the span and count go with the figures, so that a page can
    decline to project a day from four minutes."""
    rows = [(60 * m, "young", 0, 0, 10 * m, 2_000_000 - 200_000 * m) for m in range(5)]
    [row] = retention.topic_growth(partitions(spark, rows), resolution_seconds=60).collect()
    assert (row[retention.SPAN_SECONDS], row[retention.SNAPSHOTS]) == (240.0, 5)
    assert row[retention.SPAN_SECONDS] < retention.PROJECTION_MIN_SECONDS
    [one] = retention.topic_growth(partitions(spark, rows[:1]), resolution_seconds=60).collect()
    assert (one[retention.SPAN_SECONDS], one[retention.SNAPSHOTS], one[retention.WRITTEN_PER_DAY]) == (0.0, 1, None)


def test_a_topic_without_records_still_has_its_retention_from_its_configs(spark):
    rows = [(60 * m, "empty", 0, 0, 0, 0) for m in range(3)] + [(60 * m, "kept", 0, 0, 10 * m, 100 * m) for m in range(3)]
    result = {r[L.TOPIC]: r for r in retention.effective_retention(
        partitions(spark, rows), configs(spark, [("empty", 259_200_000, -1, 1000), ("kept", 3_600_000, -1, 1000)])
    ).collect()}
    assert set(result) == {"empty", "kept"}
    assert result["empty"][L.RETENTION_MS] == 259_200_000
    assert result["empty"][retention.OLDEST_AGE_MS] is None and result["empty"][retention.RETENTION_USED] is None
    assert result["kept"][retention.OLDEST_AGE_MS] is not None
