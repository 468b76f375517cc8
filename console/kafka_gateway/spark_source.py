"""A PySpark data source (`pyspark.sql.datasource`, Spark 4) that reads topics over the Kafka protocol.

Why this talks to Kafka outside the `Gateway`: Spark runs `partitions()` and `read()` in its
own Python worker processes, possibly on other hosts, with no Django and no console state,
and streams millions of records; a short-lived admin connection is the wrong tool for that.
So the reader opens its own librdkafka consumer (confluent-kafka, the fastest Python client)
per Spark partition. It still lives in `kafka_gateway/`, the console's only door to Kafka.
Spark's own Kafka source is a Maven artifact that cannot be installed here.

    spark.dataSource.register(KafkaDataSource)
    spark.read.format("kafka_protocol").option("kafka.bootstrap.servers", "host:9092")
         .option("subscribe", "orders").load()

Columns are those of Spark's Kafka source (key, value, topic, partition, offset, timestamp,
timestampType, headers). Options follow its names:
- `subscribe` (topics, comma separated) or `assign` (JSON: {"orders": [0, 2]});
- `startingOffsets`: "earliest" (default), "latest", or JSON {"orders": {"0": 42, "1": -2}}
  (-2 earliest, -1 latest); `endingOffsets`: "latest" (default) or JSON likewise;
- `startingTimestamp` / `endingTimestamp` (ms since the epoch, every partition): the first
  offset whose timestamp is at or after it (ListOffsets by time), overriding the offsets;
- `maxRecordsPerPartition`: split a Kafka partition into Spark partitions of at most that
  many offsets (default: one Spark partition per Kafka partition);
- `schemaAsArrow`: "true" gives the schema as a PyArrow schema, for Sail;
- any other `kafka.*` option goes to the consumer (`kafka.security.protocol`, `kafka.sasl.*`,
  `kafka.ssl.*`).
Offsets are resolved once, when Spark plans the read, so every partition reads a fixed range.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema

NAME = "kafka_protocol"
KEY, VALUE, TOPIC, PARTITION, OFFSET = "key", "value", "topic", "partition", "offset"
TIMESTAMP, TIMESTAMP_TYPE, HEADERS = "timestamp", "timestampType", "headers"
SCHEMA_DDL = (f"{KEY} binary, {VALUE} binary, {TOPIC} string, {PARTITION} int, {OFFSET} bigint, "
              f"{TIMESTAMP} timestamp, {TIMESTAMP_TYPE} int, {HEADERS} array<struct<key: string, value: binary>>")
ARROW_SCHEMA = pa.schema([(KEY, pa.binary()), (VALUE, pa.binary()), (TOPIC, pa.string()), (PARTITION, pa.int32()),
                          (OFFSET, pa.int64()), (TIMESTAMP, pa.timestamp("us", tz="UTC")),
                          (TIMESTAMP_TYPE, pa.int32()),
                          (HEADERS, pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])))])
# The same as a StructType, for an empty DataFrame of the source's columns: Sail (see
# console.analytics.spark) parses no nested types in DDL.
SCHEMA = from_arrow_schema(ARROW_SCHEMA)
# Sail takes a source's nested types only in a PyArrow schema (its extension of the API), and
# Spark's JVM only in a StructType or DDL: a reader on Sail asks for the PyArrow one.
ARROW_SCHEMA_OPTION = "schemaAsArrow"
EARLIEST, LATEST = -2, -1
BATCH_RECORDS = 10_000             # rows per Arrow batch handed to Spark
STALL_SECONDS = 60.0               # no progress for this long while records remain: the read fails


class KafkaSourceError(ValueError):
    pass


@dataclass
class OffsetRange(InputPartition):
    """One Spark partition: offsets [start, end) of one Kafka partition."""

    topic: str
    partition: int
    start: int
    end: int


class KafkaDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str | pa.Schema:
        return ARROW_SCHEMA if self.options.get(ARROW_SCHEMA_OPTION) == "true" else SCHEMA_DDL

    def reader(self, schema) -> KafkaReader:
        return KafkaReader(dict(self.options))


class KafkaReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.conf = consumer_conf(options)
        self.options = options

    def partitions(self) -> list[OffsetRange]:
        from confluent_kafka import Consumer, KafkaException
        consumer = Consumer(self.conf)
        try:
            ranges = [r for tp in _wanted_partitions(consumer, self.options)
                      for r in _split(_offset_range(consumer, tp, self.options), self.options)]
        except KafkaException as exc:
            error = exc.args[0] if exc.args else exc
            reason = error.str() if hasattr(error, "str") else str(error)
            raise KafkaSourceError(f"The brokers at {self.conf['bootstrap.servers']} did not give the partitions' "
                                   f"offsets: {reason}.") from None
        finally:
            consumer.close()
        return ranges or [OffsetRange("", 0, 0, 0)]

    def read(self, partition: OffsetRange):
        if partition.end <= partition.start:
            return
        yield from read_range(self.conf, partition)


def consumer_conf(options: dict[str, str]) -> dict:
    lowered = {k.lower(): v for k, v in options.items()}
    if not lowered.get("kafka.bootstrap.servers"):
        raise KafkaSourceError("Option kafka.bootstrap.servers is required.")
    conf = {k[len("kafka."):]: v for k, v in options.items() if k.lower().startswith("kafka.")}
    # Reads fixed offset ranges: no group, no commits, nothing left behind on the cluster.
    conf.update({"group.id": "kafka-console-spark-source", "enable.auto.commit": False,
                 "enable.partition.eof": True, "auto.offset.reset": "error"})
    conf.setdefault("client.id", "kafka-console-spark")
    return conf


def _option(options: dict[str, str], name: str) -> str | None:
    return next((v for k, v in options.items() if k.lower() == name.lower()), None)


def _wanted_partitions(consumer, options: dict[str, str]) -> list[tuple[str, int]]:
    assign, subscribe = _option(options, "assign"), _option(options, "subscribe")
    if bool(assign) == bool(subscribe):
        raise KafkaSourceError("Give exactly one of the options subscribe and assign.")
    if assign:
        try:
            return [(t, int(p)) for t, ps in json.loads(assign).items() for p in ps]
        except (ValueError, AttributeError, TypeError) as exc:
            raise KafkaSourceError(f"assign must be JSON like {{\"topic\": [0, 1]}}: {exc}") from None
    wanted = []
    for topic in (t.strip() for t in subscribe.split(",") if t.strip()):
        metadata = consumer.list_topics(topic, timeout=30).topics.get(topic)
        if metadata is None or metadata.error is not None:
            raise KafkaSourceError(f"Topic {topic!r} cannot be read: {getattr(metadata, 'error', 'unknown')}")
        wanted.extend((topic, p) for p in sorted(metadata.partitions))
    return wanted


def _offset_range(consumer, tp: tuple[str, int], options: dict[str, str]) -> OffsetRange:
    from confluent_kafka import TopicPartition
    low, high = consumer.get_watermark_offsets(TopicPartition(*tp), timeout=30, cached=False)
    start = _resolve(consumer, tp, options, "startingOffsets", "startingTimestamp", EARLIEST, low, high)
    end = _resolve(consumer, tp, options, "endingOffsets", "endingTimestamp", LATEST, low, high)
    return OffsetRange(tp[0], tp[1], max(start, low), min(end, high))


def _resolve(consumer, tp, options, offsets_name: str, timestamp_name: str, default: int, low: int, high: int) -> int:
    from confluent_kafka import TopicPartition
    timestamp = _option(options, timestamp_name)
    if timestamp is not None:
        try:
            [found] = consumer.offsets_for_times([TopicPartition(tp[0], tp[1], int(timestamp))], timeout=30)
        except ValueError:
            raise KafkaSourceError(f"{timestamp_name} must be milliseconds since the epoch: {timestamp!r}") from None
        return high if found.offset < 0 else found.offset          # no record at or after it: nothing to read
    raw = _option(options, offsets_name)
    offset = default
    if raw in ("earliest", "latest"):
        offset = EARLIEST if raw == "earliest" else LATEST
    elif raw:
        try:
            offset = int(json.loads(raw).get(tp[0], {}).get(str(tp[1]), default))
        except (ValueError, AttributeError, TypeError):
            raise KafkaSourceError(f"{offsets_name} must be earliest, latest or JSON like "
                                   f"{{\"topic\": {{\"0\": 42}}}}: {raw!r}") from None
    return {EARLIEST: low, LATEST: high}.get(offset, offset)


def _split(whole: OffsetRange, options: dict[str, str]) -> list[OffsetRange]:
    size = int(_option(options, "maxRecordsPerPartition") or 0)
    if size <= 0 or whole.end - whole.start <= size:
        return [whole]
    return [OffsetRange(whole.topic, whole.partition, s, min(s + size, whole.end))
            for s in range(whole.start, whole.end, size)]


def read_range(conf: dict, part: OffsetRange):
    """Arrow batches of the records at offsets [start, end) of one partition. Ends at the
    end offset, or at the partition's end (records removed since planning end it early)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition
    consumer = Consumer(conf)
    consumer.assign([TopicPartition(part.topic, part.partition, part.start)])
    columns: dict[str, list] = {name: [] for name in ARROW_SCHEMA.names}
    last_progress, done = time.monotonic(), False
    try:
        while not done:
            messages = consumer.consume(num_messages=BATCH_RECORDS, timeout=1.0)
            if not messages and time.monotonic() - last_progress > STALL_SECONDS:
                raise KafkaSourceError(f"No records from {part.topic}-{part.partition} at offset >= {part.start} "
                                       f"for {STALL_SECONDS:.0f} s (expected up to {part.end}).")
            for message in messages:
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        done = True
                        continue
                    raise KafkaSourceError(f"Reading {part.topic}-{part.partition}: {error.str()}")
                if message.offset() >= part.end:
                    done = True
                    break
                _append(columns, message)
                last_progress = time.monotonic()
                done = message.offset() >= part.end - 1
            if len(columns[OFFSET]) >= BATCH_RECORDS or (done and columns[OFFSET]):
                yield pa.RecordBatch.from_pydict(columns, schema=ARROW_SCHEMA)
                columns = {name: [] for name in ARROW_SCHEMA.names}
    finally:
        consumer.close()


def _append(columns: dict[str, list], message) -> None:
    kind, ms = message.timestamp()
    columns[KEY].append(message.key())
    columns[VALUE].append(message.value())
    columns[TOPIC].append(message.topic())
    columns[PARTITION].append(message.partition())
    columns[OFFSET].append(message.offset())
    columns[TIMESTAMP].append(ms * 1000 if kind else None)
    columns[TIMESTAMP_TYPE].append(kind - 1 if kind else None)     # Spark's: 0 CreateTime, 1 LogAppendTime
    headers = message.headers()
    columns[HEADERS].append([{"key": k, "value": v} for k, v in headers] if headers else None)
