"""The cluster metadata image: brokers, topics, partition assignments and configs.

The image changes only by applying metadata records (see `records.py`), in the order the
controller wrote them, as KRaft brokers replay `__cluster_metadata`. Readers (the API
handlers) never mutate it.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from kafka_rules.acl_index import AclIndex


@dataclass
class PartitionState:
    partition: int
    replicas: list[int]
    leader: int
    leader_epoch: int = 0
    isr: list[int] = field(default_factory=list)
    partition_epoch: int = 0          # bumped on every change; fences stale ISR proposals
    adding_replicas: list[int] = field(default_factory=list)     # an ongoing reassignment's new replicas
    removing_replicas: list[int] = field(default_factory=list)   # ... and the ones it will drop

    @property
    def preferred_leader(self) -> int:
        return self.replicas[0]


@dataclass
class TopicState:
    name: str
    topic_id: uuid.UUID
    partitions: dict[int, PartitionState] = field(default_factory=dict)
    configs: dict[str, Any] = field(default_factory=dict)

    @property
    def is_internal(self) -> bool:
        return self.name.startswith("__")


@dataclass(frozen=True)
class BrokerRegistration:
    node_id: int
    host: str                      # the inter-broker listener's advertised endpoint (replica fetchers dial it)
    port: int
    rack: str | None = None
    # Every listener's advertised endpoint, (name, host, port): a client is told the brokers'
    # endpoints of the listener it came through. Empty in records of older data dirs.
    endpoints: tuple[tuple[str, str, int], ...] = ()

    def endpoint(self, listener: str | None) -> tuple[str, int] | None:
        """The broker's (host, port) on `listener`; None if it has no such listener."""
        if listener is None or not self.endpoints:
            return self.host, self.port
        for name, host, port in self.endpoints:
            if name == listener:
                return host, port
        return None


@dataclass
class MetadataImage:
    cluster_id: str = ""
    controller_id: int = -1
    controller_epoch: int = 0      # raised by every controller election
    brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    topics: dict[str, TopicState] = field(default_factory=dict)
    topics_by_id: dict[uuid.UUID, TopicState] = field(default_factory=dict)
    broker_configs: dict[str, dict[str, Any]] = field(default_factory=dict)  # "" = cluster-wide default
    group_configs: dict[str, dict[str, Any]] = field(default_factory=dict)   # group id -> overrides (KIP-848/932)
    topics_by_collision_key: dict[str, str] = field(default_factory=dict)   # see topics.collision_key
    next_producer_id: int = 0
    # Client quotas (KIP-546) by entity: see client_quotas.py.
    client_quotas: dict[tuple[tuple[str, str | None], ...], dict[str, float]] = field(default_factory=dict)
    # SCRAM credentials (KIP-554) by user and mechanism: see scram_credentials.py. Secrets: never log.
    scram_credentials: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    # ACLs (KIP-801) by id, indexed by resource: see engine/cluster/acl_records.py.
    acls: AclIndex = field(default_factory=AclIndex, repr=False)
    version: int = 0               # raised by every applied record: cached answers compare it

    def topic(self, name: str) -> TopicState | None:
        return self.topics.get(name)

    def partition(self, topic: str, partition: int) -> PartitionState | None:
        state = self.topics.get(topic)
        return None if state is None else state.partitions.get(partition)

    def live_broker_ids(self) -> list[int]:
        return sorted(self.brokers)
