"""Gateway calls for the analytics collector (console.analytics.collector), beyond the pages':
DescribeLogDirs read for each log dir's total and usable bytes (v4, KIP-827) together with
its replicas, and the retention configs of every topic in one DescribeConfigs request.

Like `client.Gateway`, these speak only the Kafka protocol; they use the gateway's admin
client and its connection manager (see client.py's docstring for why requests whose answers
grow with the cluster are sent directly).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kafka.admin import ConfigResource, ConfigResourceType
from kafka.protocol.admin import DescribeLogDirsRequest

from console.kafka_gateway.client import Gateway
from console.kafka_gateway.errors import GatewayError, describe_error_code, translated
from console.kafka_gateway.records import ReplicaLogDir
from console.kafka_gateway.wire import bulk_allocation, send_to_each

UNKNOWN = -1                 # DescribeLogDirs before v4 has no volume sizes
RETENTION_CONFIGS = ("cleanup.policy", "retention.ms", "retention.bytes", "segment.bytes")


@dataclass(frozen=True)
class LogDirUsage:
    broker_id: int
    log_dir: str
    total_bytes: int          # the volume's size, UNKNOWN before DescribeLogDirs v4
    usable_bytes: int         # what the broker may still write there, UNKNOWN before v4
    size_bytes: int           # the replicas in the dir


@dataclass(frozen=True)
class RetentionConfig:
    topic: str
    cleanup_policy: str
    retention_ms: int
    retention_bytes: int
    segment_bytes: int


@translated
def log_dirs(gateway: Gateway, brokers: Iterable[int]) -> tuple[list[ReplicaLogDir], list[LogDirUsage]]:
    """Every replica of every partition, and every log dir's usage: one DescribeLogDirs per broker."""
    brokers = list(brokers)
    if not brokers:
        return [], []
    manager = gateway._admin._manager
    with bulk_allocation():
        responses = manager.run(send_to_each, manager, lambda: DescribeLogDirsRequest(topics=None), brokers)
        replicas, dirs = [], []
        for broker_id, response in zip(brokers, responses):
            if getattr(response, "error_code", 0):
                raise GatewayError(describe_error_code(response.error_code))
            for result in response.results:
                if result.error_code:
                    continue
                size = 0
                for topic in result.topics:
                    for p in topic.partitions:
                        if p.is_future_key:
                            continue
                        size += p.partition_size
                        replicas.append(ReplicaLogDir(broker_id, result.log_dir, topic.name, p.partition_index,
                                                      p.partition_size, p.offset_lag))
                dirs.append(LogDirUsage(broker_id, result.log_dir, _or_unknown(result, "total_bytes"),
                                        _or_unknown(result, "usable_bytes"), size))
    return replicas, dirs


def _or_unknown(result, field: str) -> int:
    value = getattr(result, field, None)
    return UNKNOWN if value is None else value


@translated
def retention_configs(gateway: Gateway, topics: Iterable[str]) -> list[RetentionConfig]:
    """cleanup.policy, retention.ms, retention.bytes and segment.bytes of each topic, in one request."""
    topics = sorted(set(topics))
    if not topics:
        return []
    wanted = list(RETENTION_CONFIGS)
    answer = gateway._admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t, wanted) for t in topics],
                                             config_filter="all")
    found = answer.get("topic", {})
    configs = []
    for topic in topics:
        values = {name: (entry or {}).get("value") for name, entry in found.get(topic, {}).items()}
        if not values:
            continue
        configs.append(RetentionConfig(topic, values.get("cleanup.policy") or "delete",
                                       _int(values.get("retention.ms"), 604_800_000),
                                       _int(values.get("retention.bytes"), -1),
                                       _int(values.get("segment.bytes"), 1_073_741_824)))
    return configs


def _int(raw: str | None, default: int) -> int:
    try:
        return int(raw) if raw is not None else default
    except ValueError:
        return default
