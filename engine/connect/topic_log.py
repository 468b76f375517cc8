"""A topic read from its beginning by a background thread and written by this worker:
Connect's KafkaBasedLog, which the config, offset and status stores are built on.

The reader (a confluent-kafka consumer with every partition assigned, no group, no commits)
hands each record to `on_record(key, value, offset, partition)` in log order per partition.
`read_to_end()` waits until everything that was in the topic when it was called has been
handed over: the thread reads the end offsets, then consumes until its position reaches them.
Writes go through one producer (acks=all, Java's murmur2 partitioner, so keys land where a
Java worker would put them); `send(...).wait()` blocks until Kafka acknowledged it.

Thread-safety: `on_record` runs on the reader thread only; `send`, `flush` and
`read_to_end` may be called from any thread.
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
import kafka.errors as Errors

from engine.client_settings import kafka_python_settings, librdkafka_settings

log = logging.getLogger("engine.connect.topic_log")
_LIBRDKAFKA = logging.getLogger("engine.connect.librdkafka")      # librdkafka's own lines, in the worker's log


class TopicConfigError(Exception):
    """The topic exists but cannot serve (a config topic with several partitions)."""


def ensure_topic(settings: dict[str, str], topic: str, *, partitions: int, replication_factor: int,
                 configs: dict[str, str], purpose: str, single_partition: bool = False) -> None:
    """Create `topic` compacted if it is missing (Connect's TopicAdmin); check a config topic
    has one partition."""
    admin = KafkaAdminClient(client_id=f"connect-admin-{topic}", request_timeout_ms=30000,
                             **kafka_python_settings(settings))
    try:
        try:
            admin.create_topics([NewTopic(topic, partitions, replication_factor, topic_configs=configs)])
            log.info("Created topic %s (%d partitions, replication factor %d) for %s", topic, partitions,
                     replication_factor, purpose)
        except Errors.TopicAlreadyExistsError:
            pass
        if single_partition:
            described = admin.describe_topics([topic])
            count = sum(len(t["partitions"]) for t in described if t["name"] == topic)
            if count != 1:
                raise TopicConfigError(
                    f"Topic '{topic}' supplied via the 'config.storage.topic' property is required to have a single "
                    f"partition in order to guarantee consistency of connector configurations, but found {count} "
                    f"partitions.")
    finally:
        admin.close()


class TopicLog:
    def __init__(self, topic: str, settings: dict[str, str], on_record, *, client_id: str) -> None:
        self.topic = topic
        self.on_record = on_record
        base = librdkafka_settings(settings)
        self.producer = Producer({**base, "client.id": f"{client_id}-producer", "acks": "all", "logger": _LIBRDKAFKA,
                                  "enable.idempotence": False, "partitioner": "murmur2_random",
                                  "linger.ms": 1, "message.timeout.ms": 60000})
        self.consumer = Consumer({**base, "client.id": f"{client_id}-consumer", "group.id": f"{client_id}-reader",
                                  "logger": _LIBRDKAFKA,
                                  "enable.auto.commit": False, "enable.partition.eof": False,
                                  "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100,
                                  "topic.metadata.refresh.interval.ms": 5000})
        self._requests: list[Future] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"topic-log-{topic}", daemon=True)
        self._partitions: list[int] = []
        self.error: Exception | None = None

    def start(self, timeout: float = 60.0) -> None:
        metadata = self.consumer.list_topics(self.topic, timeout=timeout)
        found = metadata.topics.get(self.topic)
        if found is None or found.error is not None or not found.partitions:
            raise TopicConfigError(f"Could not look up partition metadata for offset backing store topic in allotted "
                                   f"period. This could indicate a connectivity issue, unavailable topic partitions, "
                                   f"or if this is your first use of the topic it may have taken too long to "
                                   f"create. ({self.topic})")
        self._partitions = sorted(found.partitions)
        self.consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in self._partitions])
        self._thread.start()
        if not self.read_to_end(timeout):
            raise TimeoutError(f"Timed out reading {self.topic} to its end")

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        self.producer.flush(5)
        try:
            self.consumer.close()
        except RuntimeError:
            pass

    @property
    def partitions(self) -> list[int]:
        return list(self._partitions)

    def read_to_end(self, timeout: float = 30.0) -> bool:
        future: Future = Future()
        with self._lock:
            self._requests.append(future)
        try:
            future.result(timeout)
            return True
        except TimeoutError:
            return False

    def send(self, key: bytes | None, value: bytes | None, *, partition: int | None = None) -> Future:
        future: Future = Future()

        def delivered(err, msg) -> None:
            if err is not None:
                future.set_exception(RuntimeError(f"Failed to write to {self.topic}: {err}"))
            else:
                future.set_result(msg.offset())
        kwargs = {"partition": partition} if partition is not None else {}
        while True:
            try:
                self.producer.produce(self.topic, value=value, key=key, on_delivery=delivered, **kwargs)
                break
            except BufferError:
                self.producer.poll(0.05)
        self.producer.poll(0)
        return future

    def flush(self, timeout: float = 30.0) -> bool:
        return self.producer.flush(timeout) == 0

    def _run(self) -> None:
        pending: list[tuple[Future, dict[int, int]]] = []
        while not self._stop.is_set():
            with self._lock:
                new, self._requests = self._requests, []
            for future in new:
                try:
                    pending.append((future, self._end_offsets()))
                except Exception as exc:   # broker unreachable: the caller's wait times out or fails
                    future.set_exception(exc)
            self.producer.poll(0)
            try:
                messages = self.consumer.consume(500, 0.1)
            except Exception as exc:
                log.warning("Reading %s failed: %s", self.topic, exc)
                time.sleep(0.5)
                continue
            for message in messages:
                if message.error() is not None:
                    if message.error().code() != KafkaError._PARTITION_EOF:
                        log.warning("Reading %s: %s", self.topic, message.error())
                    continue
                try:
                    self.on_record(message.key(), message.value(), message.offset(), message.partition())
                except Exception:
                    log.exception("Could not apply a record of %s at offset %d", self.topic, message.offset())
            if pending:
                positions = self._positions()
                still = []
                for future, ends in pending:
                    if all(positions.get(p, 0) >= end for p, end in ends.items()):
                        future.set_result(True)
                    else:
                        still.append((future, ends))
                pending = still

    def _end_offsets(self) -> dict[int, int]:
        ends = {}
        for partition in self._partitions:
            _, high = self.consumer.get_watermark_offsets(TopicPartition(self.topic, partition), timeout=10,
                                                          cached=False)
            ends[partition] = high
        return ends

    def _positions(self) -> dict[int, int]:
        positions = {}
        for tp in self.consumer.position([TopicPartition(self.topic, p) for p in self._partitions]):
            positions[tp.partition] = tp.offset if tp.offset >= 0 else 0
        return positions


class CompactedTopicStore:
    """What the Kafka-backed config, offset and status stores share: one compacted topic, created
    when missing at start (Connect's TopicAdmin), read from its beginning into the store by a
    TopicLog, and read to its end on `refresh()`. A store mixes this in before its in-memory
    base and calls `attach_topic` from its constructor; `_on_record` is the store's own."""

    def attach_topic(self, topic: str, settings: dict[str, str], *, partitions: int, replication_factor: int,
                     client_id: str, purpose: str, single_partition: bool = False) -> None:
        self.topic, self.settings = topic, settings
        self.topic_partitions, self.replication_factor = partitions, replication_factor
        self.purpose, self.single_partition = purpose, single_partition
        self.log = TopicLog(topic, settings, self._on_record, client_id=client_id)

    def _on_record(self, key: bytes | None, value: bytes | None, offset: int, partition: int) -> None:
        raise NotImplementedError

    def start(self) -> None:
        ensure_topic(self.settings, self.topic, partitions=self.topic_partitions,
                     replication_factor=self.replication_factor, configs={"cleanup.policy": "compact"},
                     purpose=self.purpose, single_partition=self.single_partition)
        self.log.start()

    def stop(self) -> None:
        self.log.stop()            # flushes this worker's writes first

    def refresh(self, timeout: float = 30.0) -> bool:
        return self.log.read_to_end(timeout)
