"""Jobs over topic contents, read by the Kafka data source (console.kafka_gateway.spark_source):
compaction savings, and the size and age distributions of records.

The input has the columns of Spark's Kafka source: key, value, topic, partition, offset,
timestamp, timestampType, headers.
"""
from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from console.kafka_gateway.spark_source import HEADERS, KEY, OFFSET, PARTITION, TIMESTAMP, TOPIC, VALUE

RECORDS, DISTINCT_KEYS, TOMBSTONES, NULL_KEYS = "records", "distinct_keys", "tombstones", "null_keys"
RECORD_BYTES, COMPACTED_BYTES, SAVED_BYTES = "record_bytes", "compacted_bytes", "saved_bytes"
SIZE_BIN, AGE_BIN, COUNT = "size_bin_bytes", "age_bin_seconds", "count"

def _record_bytes():
    """Bytes of a record: key, value and headers (batch and record framing are left out)."""
    header_bytes = F.aggregate(F.coalesce(F.col(HEADERS), F.array()), F.lit(0),
                               lambda acc, h: acc + F.coalesce(F.length(h[KEY]), F.lit(0))
                               + F.coalesce(F.length(h[VALUE]), F.lit(0)))
    return F.coalesce(F.length(KEY), F.lit(0)) + F.coalesce(F.length(VALUE), F.lit(0)) + header_bytes

def compaction_savings(records: DataFrame) -> DataFrame:
    """Per topic: records, distinct keys, tombstones (null values), records without a key, their
    bytes, and the bytes left once compaction keeps only the newest record of each key and
    drops the tombstones (after delete.retention.ms). Records without a key are kept: Kafka
    refuses them on compacted topics, so they only appear on topics that could be compacted.
    Rows: topic, records, distinct_keys, tombstones, null_keys, record_bytes, compacted_bytes, saved_bytes."""
    sized = records.withColumn(RECORD_BYTES, _record_bytes())
    newest_per_key = Window.partitionBy(TOPIC, PARTITION, KEY).orderBy(F.col(OFFSET).desc())
    kept = (sized.where(F.col(KEY).isNotNull())
            .withColumn("_n", F.row_number().over(newest_per_key))
            .where((F.col("_n") == 1) & F.col(VALUE).isNotNull())
            .groupBy(TOPIC).agg(F.sum(RECORD_BYTES).alias("_kept")))
    totals = sized.groupBy(TOPIC).agg(
        F.count("*").alias(RECORDS),
        F.count_distinct(KEY).alias(DISTINCT_KEYS),
        F.sum(F.when(F.col(VALUE).isNull() & F.col(KEY).isNotNull(), 1).otherwise(0)).alias(TOMBSTONES),
        F.sum(F.when(F.col(KEY).isNull(), 1).otherwise(0)).alias(NULL_KEYS),
        F.sum(RECORD_BYTES).alias(RECORD_BYTES),
        F.sum(F.when(F.col(KEY).isNull(), F.col(RECORD_BYTES)).otherwise(0)).alias("_unkeyed"))
    return (totals.join(kept, TOPIC, "left")
            .withColumn(COMPACTED_BYTES, F.coalesce(F.col("_kept"), F.lit(0)) + F.col("_unkeyed"))
            .withColumn(SAVED_BYTES, F.col(RECORD_BYTES) - F.col(COMPACTED_BYTES))
            .drop("_kept", "_unkeyed"))


def size_distribution(records: DataFrame, *, bin_bytes: int) -> DataFrame:
    """topic, size_bin_bytes (lower bound), count: how many records fall in each size bin."""
    lower = F.floor(_record_bytes() / bin_bytes) * bin_bytes
    return records.groupBy(TOPIC, lower.cast("bigint").alias(SIZE_BIN)).agg(F.count("*").alias(COUNT))


def age_distribution(records: DataFrame, *, now: datetime, bin_seconds: int) -> DataFrame:
    """topic, age_bin_seconds (lower bound), count: record ages (now minus record timestamp)."""
    age = (F.lit(int(now.timestamp() * 1000)) - F.unix_millis(TIMESTAMP)) / 1000.0
    lower = F.floor(F.greatest(age, F.lit(0)) / bin_seconds) * bin_seconds
    return records.groupBy(TOPIC, lower.cast("bigint").alias(AGE_BIN)).agg(F.count("*").alias(COUNT))
