"""The console's write path for records: kafka-python's KafkaProducer, acks=all, one per call.

Produce from the console is a person pressing a button (N copies at most), so a producer is
opened per call and flushed before it closes; every send is confirmed or its error returned.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import kafka.errors as Errors
from kafka import KafkaProducer

from console.kafka_gateway.errors import GatewayError, readable
from console.kafka_gateway.records import ConnectionSettings
from console.kafka_gateway.wire import client_config


@dataclass(frozen=True)
class ProducedRecord:
    partition: int
    offset: int
    timestamp: int


def produce(settings: ConnectionSettings, *, topic: str, key: bytes | None, value: bytes | None,
            headers: Sequence[tuple[str, bytes]] = (), partition: int | None = None, copies: int = 1,
            request_timeout_ms: int = 10000) -> list[ProducedRecord]:
    config = {**client_config(settings, token_timeout_s=request_timeout_ms / 1000), "acks": "all", "request_timeout_ms": request_timeout_ms,
              "max_block_ms": request_timeout_ms, "max_request_size": 16 << 20}
    try:
        producer = KafkaProducer(**config)
    except (Errors.KafkaError, OSError, ValueError) as exc:
        raise GatewayError(f"Cannot connect to {settings.bootstrap_servers}: {readable(exc)}") from exc
    try:
        _check_partition(producer, topic, partition)
        futures = [producer.send(topic, key=key, value=value, headers=list(headers), partition=partition)
                   for _ in range(copies)]
        producer.flush(timeout=request_timeout_ms / 1000)
        produced = []
        for future in futures:
            metadata = future.get(timeout=request_timeout_ms / 1000)
            produced.append(ProducedRecord(metadata.partition, metadata.offset, metadata.timestamp))
        return produced
    except (Errors.KafkaError, OSError, ValueError, AssertionError) as exc:
        raise GatewayError(readable(exc)) from exc
    finally:
        producer.close(timeout=5)


def _check_partition(producer: KafkaProducer, topic: str, partition: int | None) -> None:
    """Fail with a sentence, not kafka-python's assertion, for a topic or partition that is not there."""
    known = producer.partitions_for(topic)
    if not known:
        raise GatewayError(f"The cluster has no topic {topic!r}.")
    if partition is not None and partition not in known:
        raise GatewayError(f"Topic {topic} has partitions 0 to {max(known)}; there is no partition {partition}.")
