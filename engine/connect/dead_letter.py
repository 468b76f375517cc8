"""A sink connector's dead letter queue (KIP-298), as Kafka Connect's DeadLetterQueueReporter.

With `errors.tolerance=all` and `errors.deadletterqueue.topic.name` set, a record the worker
cannot convert or transform is skipped and also written, as it was read (its key, value and
headers bytes), to that topic. With `errors.deadletterqueue.context.headers.enable=true` it
carries Connect's context headers too: `__connect.errors.topic`, `.partition`, `.offset`,
`.connector.name`, `.task.id`, `.stage` (KEY_CONVERTER, VALUE_CONVERTER or TRANSFORMATION),
`.class.name`, `.exception.class.name`, `.exception.message` and `.exception.stacktrace`.

The topic is created at the first report if it does not exist: one partition,
`errors.deadletterqueue.topic.replication.factor` replicas (Kafka's default 3, so a single-broker
cluster needs 1). Records are sent with acks=all and flushed before the sink task commits its
offsets, so a record is in the queue before its offset is committed as consumed.

Used by one sink task's thread only.
"""
from __future__ import annotations

import logging
import traceback

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from engine.connect.api import ConnectError

log = logging.getLogger("engine.connect.dead_letter")
HEADER_PREFIX = "__connect.errors."
KEY_CONVERTER, VALUE_CONVERTER, TRANSFORMATION = "KEY_CONVERTER", "VALUE_CONVERTER", "TRANSFORMATION"


class DeadLetterQueue:
    def __init__(self, *, client_settings: dict, connector_config: dict[str, str], connector: str,
                 task_id: int) -> None:
        self.topic = str(connector_config.get("errors.deadletterqueue.topic.name") or "").strip()
        self.replication = int(connector_config.get("errors.deadletterqueue.topic.replication.factor") or 3)
        self.context_headers = str(connector_config.get("errors.deadletterqueue.context.headers.enable",
                                                        "false")).strip().lower() == "true"
        self.settings, self.connector, self.task_id = client_settings, connector, task_id
        self._producer: Producer | None = None
        self.failure: str | None = None

    def report(self, message, *, stage: str, class_name: str, error: BaseException) -> None:
        """Send the record as read (a confluent_kafka Message), with the context headers if asked."""
        if not self.topic:
            return
        headers = list(message.headers() or [])
        if self.context_headers:
            headers += [(HEADER_PREFIX + name, str(value).encode()) for name, value in (
                ("topic", message.topic()), ("partition", message.partition()), ("offset", message.offset()),
                ("connector.name", self.connector), ("task.id", self.task_id), ("stage", stage),
                ("class.name", class_name), ("exception.class.name", class_name_of(error)),
                ("exception.message", str(error)),
                ("exception.stacktrace", "".join(traceback.format_exception(error))))]
        producer = self._ready()
        while True:
            try:
                producer.produce(self.topic, key=message.key(), value=message.value(), headers=headers,
                                 on_delivery=self._delivered)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
        if self.failure:
            raise ConnectError(f"Could not write to the dead letter queue {self.topic}: {self.failure}")

    def flush(self, timeout: float) -> None:
        """Every record reported is in the queue (before the task commits its offsets)."""
        if self._producer is not None and (self._producer.flush(timeout) or self.failure):
            raise ConnectError(f"Could not write to the dead letter queue {self.topic}: "
                               f"{self.failure or 'timed out'}")

    def close(self, timeout: float) -> None:
        if self._producer is not None:
            self._producer.flush(timeout)

    def _ready(self) -> Producer:
        if self._producer is None:
            _create_topic(self.settings, self.topic, self.replication)
            self._producer = Producer({**self.settings, "acks": "all", "enable.idempotence": True,
                                       "client.id": f"connector-dlq-producer-{self.connector}-{self.task_id}",
                                       "logger": logging.getLogger("engine.connect.librdkafka")})
        return self._producer

    def _delivered(self, err, msg) -> None:
        if err is not None:
            self.failure = str(err)


def _create_topic(settings: dict, topic: str, replication: int) -> None:
    admin = AdminClient(dict(settings))
    future = admin.create_topics([NewTopic(topic, 1, replication)], request_timeout=30)[topic]
    try:
        future.result(60)
        log.info("Created the dead letter queue topic %s", topic)
    except KafkaException as exc:
        if exc.args[0].name() != "TOPIC_ALREADY_EXISTS":
            raise ConnectError(f"Could not create the dead letter queue topic {topic}: {exc.args[0].str()}") \
                from None


def class_name_of(thing) -> str:
    """The full name of an object's class, as the context headers name a converter or an error."""
    return f"{type(thing).__module__}.{type(thing).__qualname__}"
