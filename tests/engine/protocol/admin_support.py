"""Helpers shared by the admin and config tests: real clients, plus a raw request where no
Python client can say it (the cluster-wide broker resource, whose name is "")."""
from __future__ import annotations

import time
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, KafkaAdminClient
from kafka.protocol.admin import (DescribeConfigsRequest, DescribeConfigsResponse, IncrementalAlterConfigsRequest,
                                  IncrementalAlterConfigsResponse)

from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until  # noqa: F401 - the admin tests import it from here

BROKER = 4  # ConfigResource type


def admin_client(bootstrap: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)


def create_topic(admin: KafkaAdminClient, name: str, *, validate_only: bool = False, **spec) -> dict:
    """CreateTopics for one topic; the per-topic result (error_code, num_partitions, configs ...)."""
    result = admin.create_topics({name: spec}, validate_only=validate_only, raise_errors=False)
    (topic,) = result["topics"]
    return topic


def describe_topic(admin: KafkaAdminClient, name: str) -> dict:
    """The topic's Metadata entry, partitions sorted by index."""
    (topic,) = admin.describe_topics([name])
    topic["partitions"] = sorted(topic["partitions"], key=lambda p: p["partition_index"])
    return topic


def topic_configs(admin: KafkaAdminClient, name: str, config_filter: str = "all") -> dict[str, tuple]:
    """{config name: (value, source name)} from DescribeConfigs."""
    found = admin.describe_configs([ConfigResource("TOPIC", name)], config_filter=config_filter)
    return {key: (entry["value"], entry["config_source"]) for key, entry in found["topic"][name].items()}


def broker_configs(admin: KafkaAdminClient, node_id: int, config_filter: str = "all") -> dict[str, dict]:
    found = admin.describe_configs([ConfigResource("BROKER", str(node_id))], config_filter=config_filter)
    return found["broker"][str(node_id)]


def produce(bootstrap: str, topic: str, values: list[bytes], *, partition: int | None = None,
            timestamp_ms: int | None = None) -> list[int]:
    """Send each value as its own batch (so small segment.bytes rolls often); the offsets."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    try:
        offsets = []
        for value in values:
            future = producer.send(topic, value=value, partition=partition, timestamp_ms=timestamp_ms)
            offsets.append(future.get(timeout=15).offset)
        return offsets
    finally:
        producer.close()


def consumer(bootstrap: str) -> KafkaConsumer:
    return KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=3000)


def offsets(bootstrap: str, topic: str, partition: int = 0) -> tuple[int, int]:
    """(log start offset, high watermark) from ListOffsets earliest / latest."""
    client = consumer(bootstrap)
    try:
        tp = TopicPartition(topic, partition)
        return client.beginning_offsets([tp])[tp], client.end_offsets([tp])[tp]
    finally:
        client.close()


def consume_from_beginning(bootstrap: str, topic: str, partition: int = 0, until: int | None = None) -> list:
    """Every record of one partition from its log start, up to `until` (default: the high watermark)."""
    client = consumer(bootstrap)
    try:
        tp = TopicPartition(topic, partition)
        client.assign([tp])
        client.seek_to_beginning(tp)
        end = client.end_offsets([tp])[tp] if until is None else until
        records = []
        deadline = time.monotonic() + 15
        while client.position(tp) < end and time.monotonic() < deadline:
            records += client.poll(timeout_ms=500).get(tp, [])
        return records
    finally:
        client.close()


def partition_dirs(data_dir: Path, topic: str) -> list[Path]:
    """Every `<data_dir>/broker-<id>/<topic>-<p>` dir (and any `-delete` leftovers) of the topic."""
    return sorted(p for p in Path(data_dir).glob(f"broker-*/{topic}-*") if p.is_dir())


def segment_files(partition_dir: Path) -> list[Path]:
    return sorted(partition_dir.glob("*.log"))


# --- the cluster-wide broker resource ("") over a raw connection -------------------------

def alter_cluster_default(port: int, changes: dict[str, tuple[int, str | None]], *, validate_only=False) -> int:
    """IncrementalAlterConfigs on BROKER "" (cluster-wide default); {name: (op, value)}; the error code."""
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    request = IncrementalAlterConfigsRequest(validate_only=validate_only, resources=[Resource(
        resource_type=BROKER, resource_name="", configs=[
            Resource.AlterableConfig(name=k, config_operation=op, value=v) for k, (op, v) in changes.items()])])
    client = RawClient(port)
    try:
        response = client.request(request, 1, IncrementalAlterConfigsResponse)
    finally:
        client.close()
    (result,) = response.responses
    return result.error_code


def describe_cluster_default(port: int) -> dict[str, tuple]:
    """DescribeConfigs on BROKER "": {name: (value, source code)}."""
    Resource = DescribeConfigsRequest.DescribeConfigsResource
    request = DescribeConfigsRequest(resources=[Resource(resource_type=BROKER, resource_name="",
                                                         configuration_keys=None)],
                                     include_synonyms=False, include_documentation=False)
    client = RawClient(port)
    try:
        response = client.request(request, 4, DescribeConfigsResponse)
    finally:
        client.close()
    (result,) = response.results
    assert result.error_code == 0, result.error_message
    return {c.name: (c.value, c.config_source) for c in result.configs}
