"""WorkerSourceTask: runs one SourceTask on its own thread. It polls the task, passes each record
through the connector's transforms (engine/connect/transforms/), converts its key and value
with the connector's converters, sends it with its own producer, and
every `offset.flush.interval.ms` commits the source offsets: it first waits until Kafka has
acknowledged every record sent so far (producer flush), then writes the newest offset of each
source partition to the offset store. A record is therefore committed only once it is in
Kafka; a worker killed between two commits leaves at most one interval's records to be sent
again by the task's next owner (at-least-once, as Connect without exactly-once support).
"""
from __future__ import annotations

import logging
import time

from confluent_kafka import KafkaException, Producer

from engine.connect.api import ConnectError, DataError, OffsetStorageReader, SourceTaskContext
from engine.connect.offset_store import partition_key
from engine.connect.status_store import PAUSED
from engine.connect.task_runner import TaskRunner
from engine.connect.transforms import TransformationChain
from engine.client_settings import librdkafka_settings

log = logging.getLogger("engine.connect.source_task")


class _Reader(OffsetStorageReader):
    def __init__(self, store, connector: str) -> None:
        self.store, self.connector = store, connector

    def offset(self, partition: dict) -> dict | None:
        return self.store.get(self.connector, partition)


class WorkerSourceTask(TaskRunner):
    kind = "WorkerSourceTask"

    def _prepare(self) -> None:
        settings = self.worker.config.client_settings("producer")
        self.producer = Producer({**librdkafka_settings(settings), "acks": "all", "enable.idempotence": True,
                                  "logger": logging.getLogger("engine.connect.librdkafka"),
                                  "client.id": f"connector-producer-{self.id_text}",
                                  **_producer_overrides(settings)})
        self.offset_store = self.worker.offset_store
        self.pending: dict[str, tuple[dict | None, dict | None]] = {}   # sent, not committed yet
        self.unacked = 0
        self.acknowledged = 0
        self.send_error: str | None = None
        self.topics_seen: set[str] = set()
        self.transforms = TransformationChain(self.connector_config)
        self.tolerate_all = str(self.connector_config.get("errors.tolerance", "none")).lower() == "all"
        self.task.initialize(SourceTaskContext(self.task_config, _Reader(self.offset_store, self.connector)))

    def _execute(self) -> None:
        next_commit = time.monotonic() + self.flush_interval
        while not self.stopping.is_set():
            if self.target_state == PAUSED:
                self._await_resume()
                continue
            records = self.task.poll()
            if records:
                self._send(records)
            self.producer.poll(0)
            if self.send_error:
                raise ConnectError(f"Unrecoverable exception from producer send callback: {self.send_error}")
            if time.monotonic() >= next_commit:
                self.commit_offsets()
                next_commit = time.monotonic() + self.flush_interval

    def _send(self, records) -> None:
        for polled in records:
            record = self._transformed(polled)
            if record is None:         # dropped by a transform: not sent, its offset still committed
                if polled.source_offset is not None or polled.source_partition is not None:
                    self.pending[_pending_key(polled.source_partition)] = (polled.source_partition,
                                                                           polled.source_offset)
                continue
            key = self.key_converter.from_connect(record.topic, record.key_schema, record.key)
            value = self.value_converter.from_connect(record.topic, record.value_schema, record.value)
            kwargs = {}
            if record.partition is not None:
                kwargs["partition"] = record.partition
            if record.timestamp is not None:
                kwargs["timestamp"] = record.timestamp
            if record.headers:
                kwargs["headers"] = list(record.headers)
            while True:
                try:
                    self.producer.produce(record.topic, value=value, key=key, on_delivery=self._delivered, **kwargs)
                    break
                except BufferError:          # the producer's queue is full: let it drain
                    self.producer.poll(0.05)
                except KafkaException as exc:
                    raise ConnectError(f"Could not send a record to {record.topic}: {exc}") from exc
            self.unacked += 1
            if record.source_offset is not None or record.source_partition is not None:
                self.pending[_pending_key(record.source_partition)] = (record.source_partition, record.source_offset)
            if record.topic not in self.topics_seen:
                self.topics_seen.add(record.topic)
                self.worker.status_store.put_topic(self.connector, record.topic, self.task_id[1])

    def _transformed(self, record):
        """The record through the connector's transforms (engine/connect/transforms/); None when
        one drops it, or when one fails and `errors.tolerance=all` skips it."""
        if not self.transforms:
            return record
        try:
            return self.transforms.apply(record)
        except DataError:
            if not self.tolerate_all:
                raise
            log.warning("%s Skipping a record a transform failed on (topic %s)", self.name, record.topic,
                        exc_info=True)
            return None

    def _delivered(self, err, msg) -> None:
        self.unacked -= 1
        if err is not None:
            self.send_error = f"{err} (topic {msg.topic()})"
        else:
            self.acknowledged += 1

    def commit_offsets(self) -> bool:
        """Wait for every record sent to be acknowledged, then write the newest offsets."""
        remaining = self.producer.flush(self.flush_timeout)
        if remaining or self.send_error:
            log.error("%s Failed to flush, timed out while waiting for producer to flush outstanding %d messages",
                      self.name, remaining)
            return False
        if not self.pending:
            return True
        offsets, count = list(self.pending.values()), self.acknowledged
        self.offset_store.put(self.connector, offsets, self.flush_timeout)
        self.pending.clear()
        self.acknowledged = 0
        shown = "; ".join(f"{p} -> {o}" for p, o in offsets[:5])
        log.info("%s Committing offsets for %d acknowledged messages: %s", self.name, count, shown)
        try:
            self.task.commit()
        except Exception:
            log.exception("%s Exception in SourceTask.commit", self.name)
        return True

    def _finish(self) -> None:
        try:
            if not self.failed:
                self.commit_offsets()
        finally:
            self.producer.flush(self.flush_timeout)


def _pending_key(partition: dict | None):
    """A source partition as a dict key: its items when they are hashable (the usual flat
    partition, and far cheaper than JSON per record), else its canonical JSON."""
    if partition is None:
        return None
    try:
        return tuple(sorted(partition.items()))
    except TypeError:
        return partition_key(partition)


def _producer_overrides(settings: dict[str, str]) -> dict:
    return {k: v for k, v in librdkafka_settings(settings).items()
            if k in ("acks", "linger.ms", "batch.size", "compression.type", "enable.idempotence")}
