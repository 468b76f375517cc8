"""Partition reassignment calls: AlterPartitionReassignments, ListPartitionReassignments,
the replication throttle configs (IncrementalAlterConfigs), and replica sizes (DescribeLogDirs).

Use them through a gateway: `with open_gateway(settings) as gw: gw.reassignments.ongoing()`.
Everything is standard Kafka protocol, so jobs run on Apache Kafka as on the engine (with
or without its admin interface). Every method raises only GatewayError for a failure of the
whole call; per-partition and per-resource failures are returned, so one refused partition
does not hide the others.

Throttles, as `kafka-reassign-partitions.sh --throttle` sets them:
- each broker taking part: `leader.replication.throttled.rate` and
  `follower.replication.throttled.rate` (bytes/s), dynamic broker configs, sent to that broker;
- each moving topic: `leader.replication.throttled.replicas` lists partition:broker for the
  current replicas (they send), `follower.replication.throttled.replicas` for the new ones
  (they fetch), so only the moving replicas are held back.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import kafka.errors as Errors
from kafka import TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

from console.kafka_gateway.errors import GatewayError, readable, translated

Key = tuple[str, int]
BROKER_RATE_CONFIGS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
TOPIC_REPLICAS_CONFIGS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


@dataclass(frozen=True)
class OngoingReassignment:
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


class ReassignmentCalls:
    """The reassignment calls of one gateway (see the module docstring)."""

    def __init__(self, gateway) -> None:
        self._gateway = gateway
        self._admin = gateway._admin
        self._timeout_ms = gateway._timeout_ms

    @translated
    def alter(self, reassignments: Mapping[Key, Sequence[int] | None]) -> dict[Key, str]:
        """Start (a replica list) or cancel (None) reassignments; {partition: error} for refusals."""
        if not reassignments:
            return {}
        wanted = {TopicPartition(t, p): (None if r is None else list(r)) for (t, p), r in reassignments.items()}
        try:
            answer = self._admin.alter_partition_reassignments(wanted, timeout_ms=self._timeout_ms)
        finally:
            self._gateway.metadata_changed()
        return {(tp.topic, tp.partition): f"{error.__name__}: {error.description}"
                for tp, error in answer.items() if error is not None}

    @translated
    def ongoing(self) -> dict[Key, OngoingReassignment]:
        answer = self._admin.list_partition_reassignments(timeout_ms=self._timeout_ms)
        return {(tp.topic, tp.partition): OngoingReassignment(tuple(s["replicas"]), tuple(s["adding_replicas"]),
                                                              tuple(s["removing_replicas"]))
                for tp, s in answer.items()}

    @translated
    def set_broker_throttles(self, brokers: Iterable[int], rate: int) -> dict[int, str]:
        """Both throttle rates on each broker; {broker: error} for the ones that refused."""
        return self._alter_brokers(brokers, {name: str(int(rate)) for name in BROKER_RATE_CONFIGS})

    @translated
    def clear_broker_throttles(self, brokers: Iterable[int]) -> dict[int, str]:
        return self._alter_brokers(brokers, {name: (AlterConfigOp.DELETE, None) for name in BROKER_RATE_CONFIGS})

    @translated
    def set_topic_throttled_replicas(self, throttled: Mapping[str, tuple[str, str]]) -> dict[str, str]:
        """{topic: (leader replicas, follower replicas)} in Kafka's "partition:broker,..." form."""
        return self._alter_topics({topic: dict(zip(TOPIC_REPLICAS_CONFIGS, values))
                                   for topic, values in throttled.items()})

    @translated
    def clear_topic_throttled_replicas(self, topics: Iterable[str]) -> dict[str, str]:
        return self._alter_topics({topic: {name: (AlterConfigOp.DELETE, None) for name in TOPIC_REPLICAS_CONFIGS}
                                   for topic in topics})

    @translated
    def broker_config_values(self, broker_id: int, names: Sequence[str]) -> dict[str, str | None]:
        """The current values of some broker configs (None when not set)."""
        entries = {c.name: c for c in self._gateway._describe_configs(ConfigResourceType.BROKER, str(broker_id),
                                                                      list(names))}
        return {n: (entries[n].value if n in entries and not entries[n].is_default else None) for n in names}

    @translated
    def topic_config_values(self, topic: str, names: Sequence[str]) -> dict[str, str | None]:
        entries = {c.name: c for c in self._gateway._describe_configs(ConfigResourceType.TOPIC, topic, list(names))}
        return {n: (entries[n].value if n in entries and not entries[n].is_default else None) for n in names}

    def replica_sizes(self, partitions: Mapping[str, Iterable[int]], brokers: Iterable[int]) -> dict[tuple, int]:
        """{(topic, partition, broker): bytes} from DescribeLogDirs on the given live brokers."""
        return {(r.topic, r.partition, r.broker_id): r.size
                for r in self._gateway.replica_log_dirs(partitions, brokers)}

    def _alter_brokers(self, brokers: Iterable[int], configs: dict) -> dict[int, str]:
        failed = {}
        for broker in sorted(set(brokers)):
            # One request per broker: a broker that is down must not keep the others unthrottled.
            try:
                answer = self._admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, str(broker),
                                                                   dict(configs))],
                                                   incremental=True, raise_on_unknown=False)
            except (Errors.KafkaError, OSError, ValueError) as exc:
                failed[broker] = readable(exc)
                continue
            result = answer.get("broker", {}).get(str(broker), "OK")
            if result != "OK":
                failed[broker] = str(result)
        return failed

    def _alter_topics(self, configs_by_topic: Mapping[str, dict]) -> dict[str, str]:
        if not configs_by_topic:
            return {}
        resources = [ConfigResource(ConfigResourceType.TOPIC, topic, dict(configs))
                     for topic, configs in configs_by_topic.items()]
        answer = self._admin.alter_configs(resources, incremental=True, raise_on_unknown=False)
        results = answer.get("topic", {})
        return {topic: str(results[topic]) for topic in configs_by_topic
                if topic in results and results[topic] != "OK"}


def throttled_replicas_value(entries: Iterable[tuple[int, int]]) -> str:
    """Kafka's "partition:broker,..." form, sorted."""
    return ",".join(f"{p}:{b}" for p, b in sorted(set(entries)))


__all__ = ["BROKER_RATE_CONFIGS", "TOPIC_REPLICAS_CONFIGS", "GatewayError", "OngoingReassignment",
           "ReassignmentCalls", "throttled_replicas_value"]
