"""Jobs over topic contents, on records shaped as the Kafka data source returns them."""
from datetime import datetime, timedelta, timezone

from console.analytics.jobs import records as R
from console.kafka_gateway.spark_source import SCHEMA_DDL

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def kafka_records(spark, rows):
    """rows: (topic, partition, offset, key, value, headers, age seconds)."""
    return spark.createDataFrame(
        [(None if k is None else k.encode(), None if v is None else v.encode(), t, p, o,
          NOW - timedelta(seconds=age), 0, h) for t, p, o, k, v, h, age in rows], SCHEMA_DDL)


def test_compaction_savings_keep_the_newest_record_of_each_key_and_drop_tombstones(spark):
    rows = [("c", 0, 0, "a", "1111", None, 50),          # superseded by offset 2
            ("c", 0, 1, "b", "22", None, 40),            # deleted by the tombstone at 3
            ("c", 0, 2, "a", "333", None, 30),           # kept: 1 + 3 bytes
            ("c", 0, 3, "b", None, None, 20),            # tombstone: goes after delete.retention.ms
            ("c", 1, 0, "a", "55", [("h", b"xy")], 10),  # same key, other partition: kept, 1 + 2 + 1 + 2
            ("c", 1, 1, None, "666666", None, 5)]        # no key: cannot be compacted, kept (6 bytes)
    [row] = R.compaction_savings(kafka_records(spark, rows)).collect()
    total = (1 + 4) + (1 + 2) + (1 + 3) + 1 + (1 + 2 + 1 + 2) + 6
    assert (row[R.RECORDS], row[R.DISTINCT_KEYS], row[R.TOMBSTONES], row[R.NULL_KEYS]) == (6, 2, 1, 1)
    assert (row[R.RECORD_BYTES], row[R.COMPACTED_BYTES]) == (total, 4 + 6 + 6)
    assert row[R.SAVED_BYTES] == total - 16


def test_size_and_age_distributions(spark):
    rows = [("t", 0, i, None, "x" * size, None, age) for i, (size, age) in enumerate([(5, 10), (15, 70), (12, 65)])]
    frame = kafka_records(spark, rows)
    sizes = {r[R.SIZE_BIN]: r[R.COUNT] for r in R.size_distribution(frame, bin_bytes=10).collect()}
    ages = {r[R.AGE_BIN]: r[R.COUNT] for r in R.age_distribution(frame, now=NOW, bin_seconds=60).collect()}
    assert (sizes, ages) == ({0: 1, 10: 2}, {0: 1, 60: 2})
