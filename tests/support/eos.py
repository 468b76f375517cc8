"""An exactly-once consume-transform-produce pipeline with confluent-kafka (librdkafka's
transactional producer and send_offsets_to_transaction), and the checks of its outcome."""
from __future__ import annotations

import threading
import time
from collections import Counter

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition

TXN_BATCH = 5000
# librdkafka's send_offsets_to_transaction can wait forever, past its timeout, for a group
# coordinator it cached before a broker restart (librdkafka issues 5456 and 5511). The
# application then does what a crashed instance's replacement would: a new producer with the
# same transactional.id, which fences the stuck one and aborts its transaction.
HUNG_S = 8.0


class Hung(Exception):
    pass


def _within(seconds: float, call, *args):
    """call(*args) on a helper thread; Hung if it has not returned after `seconds`."""
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = call(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            outcome["error"] = exc
    helper = threading.Thread(target=run, daemon=True)
    helper.start()
    helper.join(seconds)
    if helper.is_alive():
        raise Hung()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


class Pipeline(threading.Thread):
    """Copies `source` to `sink` in transactions until `total` input records are committed,
    surviving broker crashes as a Kafka Streams-style application does: abortable errors abort
    and rewind to the committed offsets, fatal ones start a new producer (fencing the old)."""

    def __init__(self, bootstrap: str, source: str, sink: str, group: str, total: int, transactional_id: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.source, self.sink, self.group, self.total = bootstrap, source, sink, group, total
        self.transactional_id = transactional_id
        self.committed = 0                  # input records whose transaction committed
        self.commits = self.aborts = self.restarts = self.hung = 0
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def _producer(self) -> Producer:
        producer = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": self.transactional_id,
                             "linger.ms": 20, "batch.size": 1 << 20, "transaction.timeout.ms": 60000,
                             "message.timeout.ms": 60000,
                             "reconnect.backoff.max.ms": 1000})
        producer.init_transactions(120)
        return producer

    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def _run(self) -> None:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group,
                             "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                             "enable.auto.commit": False, "session.timeout.ms": 60000,
                             "max.poll.interval.ms": 300000, "fetch.wait.max.ms": 50})
        consumer.subscribe([self.source])
        producer = self._producer()
        while not self.stop.is_set() and self.committed < self.total:
            messages = [m for m in consumer.consume(TXN_BATCH, timeout=0.5) if not m.error()]
            if not messages:
                continue
            try:
                producer.begin_transaction()
                for m in messages:
                    producer.produce(self.sink, key=m.key(), value=m.value())
                positions = consumer.position(consumer.assignment())
                _within(HUNG_S, producer.send_offsets_to_transaction, positions,
                        consumer.consumer_group_metadata(), 60)
                self._commit(producer)
                self.committed = sum(max(p.offset, 0) for p in consumer.committed(positions, timeout=60))
                self.commits += 1
            except Hung:
                self.hung += 1
                producer = self._producer()      # the stuck one is fenced and abandoned
                _rewind(consumer)
                continue
            except KafkaException as exc:
                error = exc.args[0]
                if error.fatal():
                    self.restarts += 1
                    producer = self._producer()
                elif error.txn_requires_abort():
                    self.aborts += 1
                    producer.abort_transaction(120)
                else:
                    self.aborts += 1
                    try:
                        producer.abort_transaction(120)
                    except KafkaException:
                        self.restarts += 1
                        producer = self._producer()
                _rewind(consumer)
        consumer.close()

    @staticmethod
    def _commit(producer: Producer) -> None:
        while True:
            try:
                producer.commit_transaction(120)
                return
            except KafkaException as exc:
                if not exc.args[0].retriable():
                    raise


def _rewind(consumer: Consumer) -> None:
    """Back to the committed offsets: what an aborted transaction produced is redone."""
    assignment = consumer.assignment()
    if not assignment:
        return
    for tp in consumer.committed(assignment, timeout=60):
        consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))


def read_committed(bootstrap: str, topic: str, partitions: int, timeout: float = 60.0) -> list[bytes]:
    """Every committed value of `topic`, read with read_committed up to the end of each partition."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}-{time.monotonic()}",
                         "isolation.level": "read_committed", "enable.auto.commit": False,
                         "enable.partition.eof": True})
    tps = [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)]
    consumer.assign(tps)
    values, at_end, deadline = [], set(), time.monotonic() + timeout
    while len(at_end) < partitions and time.monotonic() < deadline:
        for m in consumer.consume(10000, timeout=0.5):
            if m.error():
                if m.error().code() == -191:   # _PARTITION_EOF
                    at_end.add(m.partition())
                continue
            values.append(m.value())
    consumer.close()
    assert len(at_end) == partitions, f"did not reach the end of {topic} in {timeout}s"
    return values


def duplicates_and_missing(values: list[bytes], expected: set[bytes]) -> tuple[dict, int]:
    counts = Counter(values)
    return {v: n for v, n in counts.items() if n > 1}, len(expected - set(counts))
