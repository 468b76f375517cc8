"""Send values to one partition and read them back, with kafka-python's clients."""
from __future__ import annotations

import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def send_values(bootstrap: str, topic: str, values: list[bytes], *, partition: int = 0, **producer_configs) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, **producer_configs)
    try:
        for value in values:
            producer.send(topic, value, partition=partition)
        producer.flush(10)
    finally:
        producer.close()


def read_values(bootstrap: str, topic: str, count: int, *, partition: int = 0, timeout: float = 30.0) -> list[bytes]:
    """The values from the start of the partition, once `count` have arrived (or the timeout
    passed: the caller's assertion then says what is missing)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    try:
        consumer.assign([TopicPartition(topic, partition)])
        received: list[bytes] = []
        deadline = time.monotonic() + timeout
        while len(received) < count and time.monotonic() < deadline:
            for messages in consumer.poll(timeout_ms=200).values():
                received += [m.value for m in messages]
        return received
    finally:
        consumer.close()
