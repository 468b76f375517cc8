"""Lag jobs on synthetic snapshots whose answers are worked out by hand."""
from datetime import datetime, timedelta, timezone

from console.analytics import lake as L
from console.analytics.jobs import lag
from tests.support.spark import frame

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def offsets(spark, rows):
    """rows: (seconds, group, partition, committed, log_end, members) on topic "t"."""
    return frame(spark, L.GROUP_OFFSETS, [(at(s), g, "t", p, c, e, m) for s, g, p, c, e, m in rows])


def test_lag_history_keeps_the_worst_lag_and_last_offset_of_each_bucket(spark):
    rows = [(60 * i, "g", 0, 10 * i, 10 * i + lag_, 1) for i, lag_ in enumerate([5, 9, 3, 0, 7, 2, 4])]
    history = lag.lag_history(offsets(spark, rows), resolution_seconds=300).orderBy(L.BUCKET).collect()
    assert [(r[L.BUCKET].replace(tzinfo=timezone.utc), r[L.LAG], r[L.COMMITTED_OFFSET]) for r in history] == [
        (at(0), 9, 40), (at(300), 4, 60)]
    totals = lag.group_lag_history(lag.lag_history(offsets(spark, rows + [(0, "g", 1, 0, 100, 1)]),
                                                   resolution_seconds=3600)).collect()
    assert [(r[L.GROUP], r[L.LAG]) for r in totals] == [("g", 9 + 100)]


def test_time_lag_interpolates_when_the_log_end_offset_reached_the_committed_offset(spark):
    partitions = frame(spark, L.PARTITIONS, [(at(s), "t", 0, 0, 0, leo, 0) for s, leo in
                                             [(0, 100), (60, 200), (120, 300), (180, 300)]])
    group_offsets = offsets(spark, [(120, "behind", 0, 150, 300, 1),     # 150 reached at 30 s -> 90 s behind
                                    (180, "behind", 0, 290, 300, 1),     # 290 reached at 114 s -> 66 s
                                    (180, "caught-up", 0, 300, 300, 1),  # no lag: 0 s
                                    (60, "too-old", 0, 40, 200, 1)])     # before the first snapshot: unknown
    result = {(r[L.GROUP], r[L.TS].replace(tzinfo=timezone.utc)): r[lag.TIME_LAG_SECONDS]
              for r in lag.time_lag(group_offsets, partitions).collect()}
    assert result == {("behind", at(120)): 90.0, ("behind", at(180)): 66.0,
                      ("caught-up", at(180)): 0.0, ("too-old", at(60)): None}


def test_time_lag_uses_the_first_snapshot_at_the_offset_when_production_paused(spark):
    # The log end offset sat at 200 from 60 s to 240 s: offset 200 was reached at 60 s.
    partitions = frame(spark, L.PARTITIONS, [(at(s), "t", 0, 0, 0, leo, 0) for s, leo in
                                             [(0, 100), (60, 200), (120, 200), (240, 200), (300, 260)]])
    result = lag.time_lag(offsets(spark, [(300, "g", 0, 200, 260, 1)]), partitions).collect()
    assert [r[lag.TIME_LAG_SECONDS] for r in result] == [240.0]


def status_of(spark, rows, window=lag.DEFAULT_WINDOW):
    found = lag.partition_status(offsets(spark, rows), window=window).collect()
    return {r[L.GROUP]: (r[lag.STATUS], r[lag.REASON]) for r in found}


def test_burrow_status_over_a_sliding_window(spark):
    rows = []
    for i in range(6):
        t = 60 * i
        rows += [(t, "stall", 0, 100, 100 + 10 * i + 5, 2),         # members commit the same offset
                 (t, "stop", 0, 100, 100 + 10 * i + 5, 0),          # nobody left to commit
                 (t, "warn", 0, 10 * i, 20 * i + 1, 1),             # moving, lag 1, 11, 21, ... grows
                 (t, "ok", 0, 50 * i, 50 * i + (i % 2) * 3, 1),     # keeps up: lag 0, 3, 0, 3 ...
                 (t, "caught-up", 0, 100, 100, 0),                  # idle but nothing to read
                 (t, "rewind", 0, [500, 510, 520, 100, 110, 120][i], 600, 1)]
    statuses = status_of(spark, rows)
    assert {g: s for g, (s, _) in statuses.items()} == {
        "stall": "STALL", "stop": "STOP", "warn": "WARN", "ok": "OK", "caught-up": "OK", "rewind": "REWIND"}
    assert statuses["stall"][1] == "commits stuck at offset 100 since 2026-11-01 12:00:00 while lag is 55"
    assert statuses["stop"][1] == "no commits since 2026-11-01 12:00:00 (group has no members) while lag is 55"
    assert statuses["warn"][1] == "lag grew at every snapshot, from 1 to 51"
    assert statuses["rewind"][1] == "committed offset went back from 520 to 100"


def test_status_window_forgets_an_old_rewind_and_groups_take_their_worst_partition(spark):
    rows = [(60 * i, "g", 0, [500, 100, 110, 120, 130][i], 140, 1) for i in range(5)]
    rows += [(60 * i, "g", 1, 100, 150, 1) for i in range(5)]                    # stuck: STALL
    # The window's oldest snapshot (offset 100) came after a rewind from 500: outside the window.
    partitions = lag.partition_status(offsets(spark, rows), window=4)
    assert {(r[L.PARTITION], r[lag.STATUS]) for r in partitions.collect()} == {(0, "OK"), (1, "STALL")}
    [group] = lag.group_status(partitions).collect()
    assert (group[L.GROUP], group[lag.STATUS], group[L.LAG]) == ("g", "STALL", 10 + 50)
    assert group[lag.REASON].startswith("t-1: commits stuck at offset 100")


def test_status_needs_two_snapshots(spark):
    assert status_of(spark, [(0, "g", 0, 1, 5, 1)])["g"] == ("OK", "not enough snapshots yet")
