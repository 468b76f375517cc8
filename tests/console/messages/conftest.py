"""Message tests: topics filled once per module by real client libraries."""
from __future__ import annotations

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(bootstrap: str, name: str, partitions: int = 1, config: dict | None = None) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    # retention.ms=-1: tests stamp records with fixed past times, which the shared engine's
    # retention (7 days, checked every 5 minutes) would otherwise delete mid-test.
    admin.create_topics([NewTopic(name, partitions, 1, config={"retention.ms": "-1", **(config or {})})])[name].result(
        timeout=30)
    return name


def produce_confluent(bootstrap: str, topic: str, records, **config) -> None:
    """records: iterable of dicts with value and optionally key, headers, partition, timestamp."""
    failures = []
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config},)
    for r in records:
        r.setdefault("on_delivery", lambda err, _msg: err and failures.append(err))
        while True:
            try:
                producer.produce(topic, **r)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(30) == 0
    assert not failures, failures[:3]
