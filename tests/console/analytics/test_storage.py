"""The lake's files: snapshots partitioned by cluster and date, day compaction, retention."""
import datetime as dt

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from console.analytics import lake as L
from console.analytics.storage import lake_compact_day, lake_days, lake_prune, snapshot_write

UTC = dt.timezone.utc


def partition_row(ts, offset):
    return {L.TS: ts, L.TOPIC: "orders", L.PARTITION: 0, L.LEADER: 1, L.LOG_START_OFFSET: 0,
            L.LOG_END_OFFSET: offset, L.SIZE_BYTES: offset * 100}


def read(lake_dir, table):
    schema = L.SCHEMAS[table].append(pa.field(L.CLUSTER, pa.int32())).append(pa.field(L.DATE, pa.string()))
    return ds.dataset(f"{lake_dir}/{table}", format="parquet", partitioning="hive", schema=schema).to_table()


def test_snapshots_are_partitioned_by_cluster_and_date_and_read_back(tmp_path):
    day1, day2 = dt.datetime(2026, 11, 1, 23, 59, 30, tzinfo=UTC), dt.datetime(2026, 11, 2, 0, 0, 0, tzinfo=UTC)
    assert snapshot_write(lake_url=str(tmp_path), cluster_id=7, table=L.PARTITIONS,
                          rows=[partition_row(day1, 10)], taken_at=day1) == 1
    snapshot_write(lake_url=str(tmp_path), cluster_id=7, table=L.PARTITIONS, rows=[partition_row(day2, 20)],
                   taken_at=day2)
    assert snapshot_write(lake_url=str(tmp_path), cluster_id=7, table=L.PARTITIONS, rows=[], taken_at=day2) == 0
    assert sorted(p.relative_to(tmp_path).parent.as_posix() for p in tmp_path.rglob("*.parquet")) == [
        "partitions/cluster=7/date=2026-11-01", "partitions/cluster=7/date=2026-11-02"]
    table = read(tmp_path, L.PARTITIONS).sort_by(L.TS).to_pylist()
    assert [(r[L.LOG_END_OFFSET], r[L.CLUSTER], r[L.DATE]) for r in table] == [(10, 7, "2026-11-01"),
                                                                            (20, 7, "2026-11-02")]
    assert lake_days(lake_url=str(tmp_path), cluster_id=7) == [dt.date(2026, 11, 1), dt.date(2026, 11, 2)]


def test_a_finished_day_is_compacted_into_one_file_and_today_is_left_alone(tmp_path):
    start = dt.datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
    for i in range(5):
        ts = start + dt.timedelta(seconds=30 * i)
        snapshot_write(lake_url=str(tmp_path), cluster_id=1, table=L.PARTITIONS, rows=[partition_row(ts, i)],
                       taken_at=ts)
    day_dir = tmp_path / "partitions/cluster=1/date=2026-11-01"
    assert lake_compact_day(lake_url=str(tmp_path), cluster_id=1, day=start.date(), today=start.date()) == 0
    assert len(list(day_dir.iterdir())) == 5
    assert lake_compact_day(lake_url=str(tmp_path), cluster_id=1, day=start.date(),
                            today=dt.date(2026, 11, 2)) == 1
    assert [p.name for p in day_dir.iterdir()] == ["day.parquet"]
    assert [r[L.LOG_END_OFFSET] for r in read(tmp_path, L.PARTITIONS).to_pylist()] == [0, 1, 2, 3, 4]


def test_retention_removes_whole_days_older_than_the_days_to_keep(tmp_path):
    for day in (1, 2, 3):
        ts = dt.datetime(2026, 11, day, 12, tzinfo=UTC)
        for table, row in ((L.PARTITIONS, partition_row(ts, day)),
                           (L.TOPIC_CONFIGS, {L.TS: ts, L.TOPIC: "orders", L.CLEANUP_POLICY: "delete",
                                              L.RETENTION_MS: 1, L.RETENTION_BYTES: -1, L.SEGMENT_BYTES: 1})):
            snapshot_write(lake_url=str(tmp_path), cluster_id=1, table=table, rows=[row], taken_at=ts)
    removed = lake_prune(lake_url=str(tmp_path), retention_days=2, today=dt.date(2026, 11, 4))
    assert sorted(p.split(str(tmp_path))[1] for p in removed) == ["/partitions/cluster=1/date=2026-11-01",
                                                                 "/topic_configs/cluster=1/date=2026-11-01"]
    assert lake_days(lake_url=str(tmp_path), cluster_id=1) == [dt.date(2026, 11, 2), dt.date(2026, 11, 3)]


def test_bad_rows_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        snapshot_write(lake_url=str(tmp_path), cluster_id=1, table=L.PARTITIONS,
                       rows=[{**partition_row(dt.datetime(2026, 11, 1, tzinfo=UTC), 1), L.LOG_END_OFFSET: "x"}],
                       taken_at=dt.datetime(2026, 11, 1, tzinfo=UTC))
    assert not list(tmp_path.rglob("*.parquet"))
