"""WorkerSinkTask: runs one SinkTask on its own thread, with a consumer in the group
`connect-<connector>` subscribed to the connector's `topics` (or `topics.regex`).

Each batch the consumer returns is converted (key and value converters), passed through the
connector's transforms (engine/connect/transforms/; a record they drop is consumed and never
put; with `errors.tolerance=all` a record that cannot be converted or transformed is skipped,
logged, and sent to the dead letter queue if there is one: engine/connect/dead_letter.py) and
handed to `put()`. Every `offset.flush.interval.ms`, when the task asks (`context.request_commit()`),
before partitions are revoked and when the task stops, the worker calls `pre_commit()` (by
default `flush()`) with the next offsets to read, then commits what it returns to the group:
what was put is durable before it is acknowledged, and a worker killed between two commits
leaves at most one interval's records to be delivered again (at-least-once).

A RetriableError from `put()` keeps the batch and offers it again after a backoff, with the
consumer paused meanwhile; any other exception fails the task.
"""
from __future__ import annotations

import logging
import re
import time

from confluent_kafka import Consumer, TopicPartition as KafkaTopicPartition

from engine.connect.api import RetriableError, SinkRecord, SinkTaskContext, TopicPartition
from engine.connect.connector_config import sink_topics
from engine.connect.dead_letter import (KEY_CONVERTER, TRANSFORMATION, VALUE_CONVERTER, DeadLetterQueue,
                                        class_name_of)
from engine.connect.status_store import PAUSED
from engine.connect.task_runner import TaskRunner
from engine.connect.transforms import TransformationChain, TransformError
from engine.client_settings import librdkafka_settings

log = logging.getLogger("engine.connect.sink_task")

MAX_POLL_RECORDS = 500

_TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


class WorkerSinkTask(TaskRunner):
    kind = "WorkerSinkTask"

    def _prepare(self) -> None:
        settings = self.worker.config.client_settings("consumer")
        overrides = {k[len("consumer.override."):]: v for k, v in self.connector_config.items()
                     if k.startswith("consumer.override.")}
        self.max_poll = int(settings.get("max.poll.records", MAX_POLL_RECORDS))
        self.consumer = Consumer({**librdkafka_settings({**settings, **overrides}),
                                  "group.id": f"connect-{self.connector}",
                                  "client.id": f"connector-consumer-{self.id_text}",
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                  "enable.partition.eof": False,
                                  "logger": logging.getLogger("engine.connect.librdkafka")})
        self.tolerate_all = str(self.connector_config.get("errors.tolerance", "none")).lower() == "all"
        self.transforms = TransformationChain(self.connector_config)
        self.dead_letters = DeadLetterQueue(
            client_settings=librdkafka_settings(self.worker.config.client_settings("producer")),
            connector_config=self.connector_config, connector=self.connector, task_id=self.task_id[1])
        self.current: dict[TopicPartition, int] = {}       # next offset to read, per owned partition
        self.committed: dict[TopicPartition, int] = {}
        self.context = SinkTaskContext(self.task_config)
        self.task.initialize(self.context)
        topics, regex = sink_topics(self.task_config)
        subscription = topics or [("^" + regex) if not regex.startswith("^") else regex]
        if regex:
            re.compile(regex)
        self.consumer.subscribe(subscription, on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_lost)
        self.topics_seen: set[str] = set()

    def _on_assign(self, consumer, partitions) -> None:
        owned = [TopicPartition(p.topic, p.partition) for p in partitions]
        self.context.assigned.update(owned)
        log.info("%s Partitions assigned: %s", self.name, ", ".join(f"{p.topic}-{p.partition}" for p in owned))
        self.task.open(owned)
        if self.target_state == PAUSED:
            consumer.pause(partitions)

    def _on_revoke(self, consumer, partitions) -> None:
        revoked = [TopicPartition(p.topic, p.partition) for p in partitions]
        if revoked and not self.failed:
            self.commit_offsets(only=set(revoked))
            self.task.close(revoked)
        for tp in revoked:
            self.current.pop(tp, None)
            self.committed.pop(tp, None)
            self.context.assigned.discard(tp)

    def _on_lost(self, consumer, partitions) -> None:
        lost = [TopicPartition(p.topic, p.partition) for p in partitions]
        self.task.close(lost)
        for tp in lost:
            self.current.pop(tp, None)
            self.context.assigned.discard(tp)

    def _execute(self) -> None:
        next_commit = time.monotonic() + self.flush_interval
        while not self.stopping.is_set():
            if self.target_state == PAUSED:
                self._await_resume()
                continue
            self._rewind()
            messages = self.consumer.consume(self.max_poll, 0.5)
            records, consumed = self._convert([m for m in messages if m.error() is None])
            if not records:                 # all skipped or dropped: consumed all the same
                self.current.update(consumed)
            for message in messages:
                if message.error() is not None:
                    log.warning("%s Consumer error: %s", self.name, message.error())
            if records:
                self._deliver(records, consumed)
            if time.monotonic() >= next_commit or self.context.commit_requested:
                self.context.commit_requested = False
                self.commit_offsets()
                next_commit = time.monotonic() + self.flush_interval

    def _rewind(self) -> None:
        """Offsets the task asked for with context.offset(): seek there before the next poll."""
        if not self.context.requested_offsets:
            return
        requested, self.context.requested_offsets = self.context.requested_offsets, {}
        for tp, offset in requested.items():
            if tp in self.context.assigned:
                self.consumer.seek(KafkaTopicPartition(tp.topic, tp.partition, offset))
                self.current[tp] = offset

    def _convert(self, messages) -> tuple[list[SinkRecord], dict[TopicPartition, int]]:
        """The records to put, and the offset after the last of them per partition they were read
        from (a transform may have renamed their topic)."""
        records, consumed = [], {}
        for m in messages:
            consumed[TopicPartition(m.topic(), m.partition())] = m.offset() + 1
            stage, converter = KEY_CONVERTER, self.key_converter
            try:
                key_schema, key = converter.to_connect(m.topic(), m.key())
                stage, converter = VALUE_CONVERTER, self.value_converter
                value_schema, value = converter.to_connect(m.topic(), m.value())
            except Exception as exc:
                self._skip(m, exc, stage=stage, class_name=class_name_of(converter))
                continue
            kind, stamp = m.timestamp()
            record = SinkRecord(m.topic(), m.partition(), key_schema, key, value_schema, value, m.offset(),
                                stamp if kind else None, _TIMESTAMP_TYPES.get(kind, "NoTimestampType"),
                                list(m.headers() or []))
            record = self._transformed(m, record)
            if record is None:        # dropped by a transform: consumed, never put
                continue
            records.append(record)
            if m.topic() not in self.topics_seen:
                self.topics_seen.add(m.topic())
                self.worker.status_store.put_topic(self.connector, m.topic(), self.task_id[1])
        return records, consumed

    def _transformed(self, message, record: SinkRecord) -> SinkRecord | None:
        """The record through the connector's transforms; None when one drops it, or when one fails
        and `errors.tolerance=all` skips it."""
        if not self.transforms:
            return record
        try:
            return self.transforms.apply(record)
        except TransformError as exc:
            self._skip(message, exc, stage=TRANSFORMATION, class_name=exc.class_name)
            return None

    def _skip(self, message, error: Exception, *, stage: str, class_name: str) -> None:
        """A record that failed at `stage`: the task fails, unless `errors.tolerance=all` skips it
        (logged, and sent to the dead letter queue when there is one)."""
        if not self.tolerate_all:
            raise error
        log.warning("%s Skipping a record that failed at %s: %s-%d@%d", self.name, stage, message.topic(),
                    message.partition(), message.offset(), exc_info=error)
        self.dead_letters.report(message, stage=stage, class_name=class_name, error=error)

    def _deliver(self, records: list[SinkRecord], consumed: dict[TopicPartition, int]) -> None:
        while not self.stopping.is_set():
            try:
                self.task.put(records)
                break
            except RetriableError as exc:
                log.warning("%s RetriableException from SinkTask: %s; retrying the batch", self.name, exc)
                assignment = self.consumer.assignment()
                self.consumer.pause(assignment)
                time.sleep(self.context.timeout_ms / 1000 if self.context.timeout_ms else 1.0)
                self.consumer.consume(1, 0)     # keep the membership alive; paused: returns nothing
                self.consumer.resume(assignment)
        else:
            return
        self.current.update(consumed)

    def commit_offsets(self, only: set[TopicPartition] | None = None) -> bool:
        current = {tp: o for tp, o in self.current.items() if only is None or tp in only}
        if not current or all(self.committed.get(tp) == o for tp, o in current.items()):
            return True
        self.dead_letters.flush(self.flush_timeout)     # what was skipped is in the queue first
        to_commit = self.task.pre_commit(dict(current)) or {}
        if not to_commit:
            return True
        offsets = [KafkaTopicPartition(tp.topic, tp.partition, offset) for tp, offset in sorted(to_commit.items())]
        try:
            self.consumer.commit(offsets=offsets, asynchronous=False)
        except Exception as exc:
            log.warning("%s Commit of offsets failed: %s", self.name, exc)
            return False
        self.committed.update(to_commit)
        shown = ", ".join(f"{tp.topic}-{tp.partition}={o}" for tp, o in sorted(to_commit.items()))
        log.info("%s Committing offsets synchronously: {%s}", self.name, shown)
        return True

    def _on_pause(self) -> None:
        self.consumer.pause(self.consumer.assignment())

    def _while_paused(self) -> None:
        self.consumer.consume(1, 0.1)       # serves rebalances and heartbeats; paused partitions return nothing

    def _on_resume(self) -> None:
        self.consumer.resume(self.consumer.assignment())

    def _finish(self) -> None:
        try:
            if not self.failed:
                self.commit_offsets()
        finally:
            self.dead_letters.close(self.flush_timeout)
            self.consumer.close()
