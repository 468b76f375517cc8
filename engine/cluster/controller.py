"""The controller: the single owner and writer of cluster metadata.

Every change is validated here, written to the metadata journal (fsync'd), then applied
to the image and announced to the brokers' listeners. Brokers read the image; they never
change it.

Gaps (next issue): there is one controller for the engine process and no controller epoch
or election yet; partitions have no followers, so the ISR is the leader alone.
"""
from __future__ import annotations

import logging
import random
import uuid
from pathlib import Path
from typing import Any, Callable

import kafka.errors as Errors

from engine.cluster import records as R
from engine.cluster.assignment import assign_replicas
from engine.cluster.journal import MetadataJournal
from engine.cluster.metadata import MetadataImage, TopicState
from engine.cluster.topics import collision_key, validate_topic_name
from engine.config import (BrokerConfig, InvalidConfigError, validate_broker_configs,
                           validate_topic_configs)
from engine.errors import ApiError

log = logging.getLogger(__name__)

PRODUCER_ID_BLOCK = 1000
MetadataListener = Callable[[set[str], list[TopicState]], None]


class Controller:
    def __init__(self, metadata_dir: Path, broker_config: BrokerConfig) -> None:
        self.image = MetadataImage()
        self.broker_config = broker_config
        self._journal = MetadataJournal(metadata_dir)
        self._listeners: list[MetadataListener] = []
        self._producer_ids_left = 0
        self._next_producer_id = 0
        for record in self._journal.replay():
            R.apply(self.image, record)
        if not self.image.cluster_id:
            self._commit([R.cluster_record(_new_cluster_id())])
        self._apply_broker_config_overrides()

    def broker_config_for(self, node_id: int) -> BrokerConfig:
        """The effective config of one broker: static values, cluster-wide then per-broker dynamic ones."""
        dynamic = {**self.image.broker_configs.get("", {}), **self.image.broker_configs.get(str(node_id), {})}
        return BrokerConfig(static=dict(self.broker_config.static), dynamic=dynamic)

    # --- plumbing -------------------------------------------------------------------------

    def add_listener(self, listener: MetadataListener) -> None:
        self._listeners.append(listener)

    def _commit(self, records: list[dict], *, changed: set[str] | None = None,
                deleted: list[TopicState] | None = None) -> None:
        self._journal.append(records)
        for record in records:
            R.apply(self.image, record)
        for listener in self._listeners:
            listener(changed or set(), deleted or [])

    def _apply_broker_config_overrides(self) -> None:
        self.broker_config.dynamic = dict(self.image.broker_configs.get("", {}))

    def snapshot_records(self) -> list[dict]:
        image = self.image
        out = [R.cluster_record(image.cluster_id), R.producer_ids_record(image.next_producer_id)]
        out += [R.broker_record(b.node_id, b.host, b.port, b.rack) for b in image.brokers.values()]
        for name, configs in image.broker_configs.items():
            out += [R.config_record("broker", name, key, value) for key, value in configs.items()]
        for topic in image.topics.values():
            out.append(R.topic_record(topic.name, topic.topic_id, topic.configs))
            out += [R.partition_record(topic.topic_id, p.partition, p.replicas, p.leader, p.leader_epoch, p.isr)
                    for p in topic.partitions.values()]
        return out

    def shutdown(self) -> None:
        self._journal.write_snapshot(self.snapshot_records())
        self._journal.close()

    # --- brokers --------------------------------------------------------------------------

    def register_broker(self, node_id: int, host: str, port: int, rack: str | None = None) -> None:
        current = self.image.brokers.get(node_id)
        if current is None or (current.host, current.port, current.rack) != (host, port, rack):
            self._commit([R.broker_record(node_id, host, port, rack)])
        if self.image.controller_id < 0 or node_id < self.image.controller_id:
            self.image.controller_id = node_id

    # --- topics ---------------------------------------------------------------------------

    def validate_new_topic(self, name: str, num_partitions: int, replication_factor: int,
                           assignments: dict[int, list[int]] | None, configs: dict[str, Any]) -> dict[int, list[int]]:
        """Check a CreateTopics entry and return its replica assignment; raises ApiError."""
        validate_topic_name(name)
        if name in self.image.topics:
            raise ApiError(Errors.TopicAlreadyExistsError, f"Topic '{name}' already exists.")
        colliding = [t for t in self.image.topics if collision_key(t) == collision_key(name)]
        if colliding:
            raise ApiError(Errors.InvalidTopicError,
                           f"Topic '{name}' collides with existing topic: {colliding[0]}")
        try:
            validate_topic_configs(configs)
        except InvalidConfigError as exc:
            raise ApiError(Errors.InvalidConfigurationError, str(exc)) from None
        if assignments:
            return self._check_manual_assignment(assignments, start=0)
        if num_partitions == -1:
            num_partitions = self.broker_config.get("num.partitions")
        if replication_factor == -1:
            replication_factor = self.broker_config.get("default.replication.factor")
        if num_partitions <= 0:
            raise ApiError(Errors.InvalidPartitionsError, "Number of partitions must be larger than 0.")
        brokers = self.image.live_broker_ids()
        if replication_factor <= 0 or replication_factor > len(brokers):
            raise ApiError(Errors.InvalidReplicationFactorError,
                           f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}."
                           if replication_factor > 0 else "Replication factor must be larger than 0.")
        return assign_replicas(brokers, num_partitions, replication_factor)

    def _check_manual_assignment(self, assignments: dict[int, list[int]], *, start: int) -> dict[int, list[int]]:
        if sorted(assignments) != list(range(start, start + len(assignments))):
            raise ApiError(Errors.InvalidReplicaAssignmentError,
                           "Partitions in the assignment must be consecutive, starting from " + str(start))
        sizes = {len(replicas) for replicas in assignments.values()}
        if len(sizes) != 1 or 0 in sizes:
            raise ApiError(Errors.InvalidReplicaAssignmentError,
                           "All partitions must have the same, non-zero number of replicas")
        for replicas in assignments.values():
            if len(set(replicas)) != len(replicas):
                raise ApiError(Errors.InvalidReplicaAssignmentError, f"Duplicate brokers in assignment {replicas}")
            unknown = [b for b in replicas if b not in self.image.brokers]
            if unknown:
                raise ApiError(Errors.InvalidReplicaAssignmentError, f"Unknown broker(s) {unknown} in assignment")
        return assignments

    def create_topic(self, name: str, num_partitions: int, replication_factor: int,
                     assignments: dict[int, list[int]] | None = None,
                     configs: dict[str, Any] | None = None) -> TopicState:
        configs = configs or {}
        assignment = self.validate_new_topic(name, num_partitions, replication_factor, assignments, configs)
        topic_id = uuid.uuid4()
        records = [R.topic_record(name, topic_id, validate_topic_configs(configs))]
        records += [R.partition_record(topic_id, p, replicas, replicas[0], 0, [replicas[0]])
                    for p, replicas in sorted(assignment.items())]
        self._commit(records, changed={name})
        log.info("Created topic %s with %d partitions", name, len(assignment))
        return self.image.topics[name]

    def delete_topic(self, name: str) -> None:
        topic = self.image.topics.get(name)
        if topic is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        if not self.broker_config.get("delete.topic.enable"):
            raise ApiError(Errors.TopicDeletionDisabledError)
        self._commit([R.remove_topic_record(topic.topic_id)], deleted=[topic])

    def create_partitions(self, name: str, count: int, assignments: list[list[int]] | None,
                          *, validate_only: bool = False) -> None:
        topic = self.image.topics.get(name)
        if topic is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        current = len(topic.partitions)
        if count <= current:
            raise ApiError(Errors.InvalidPartitionsError,
                           f"Topic currently has {current} partitions, {count} would not be an increase.")
        if assignments:
            if len(assignments) != count - current:
                raise ApiError(Errors.InvalidReplicaAssignmentError,
                               f"Increasing the number of partitions by {count - current} but "
                               f"{len(assignments)} assignments provided.")
            new = self._check_manual_assignment(
                {current + i: list(r) for i, r in enumerate(assignments)}, start=current)
        else:
            rf = len(topic.partitions[0].replicas)
            new = assign_replicas(self.image.live_broker_ids(), count - current, rf, start_partition=current)
        if validate_only:
            return
        self._commit([R.partition_record(topic.topic_id, p, r, r[0], 0, [r[0]]) for p, r in sorted(new.items())],
                     changed={name})

    # --- configs --------------------------------------------------------------------------

    def alter_topic_configs(self, name: str, changes: dict[str, Any | None], *, validate_only: bool = False) -> None:
        """changes maps config name to new value, or None to revert to the default."""
        if name not in self.image.topics:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        try:
            parsed = validate_topic_configs({k: v for k, v in changes.items() if v is not None})
        except InvalidConfigError as exc:
            raise ApiError(Errors.InvalidConfigurationError, str(exc)) from None
        if validate_only:
            return
        records = [R.config_record("topic", name, key, parsed.get(key)) for key in changes]
        if records:
            self._commit(records, changed={name})

    def alter_broker_configs(self, broker: str, changes: dict[str, Any | None], *, validate_only: bool = False) -> None:
        """broker is a node id as a string, or "" for the cluster-wide default."""
        if broker and int(broker) not in self.image.brokers:
            raise ApiError(Errors.InvalidRequestError, f"Unknown broker {broker}")
        try:
            parsed = validate_broker_configs({k: v for k, v in changes.items() if v is not None}, dynamic_only=True)
        except InvalidConfigError as exc:
            raise ApiError(Errors.InvalidConfigurationError, str(exc)) from None
        if validate_only:
            return
        records = [R.config_record("broker", broker, key, parsed.get(key)) for key in changes]
        if records:
            self._commit(records, changed=set(self.image.topics))
            self._apply_broker_config_overrides()

    # --- producer ids ---------------------------------------------------------------------

    def allocate_producer_id(self) -> int:
        """Hand out producer ids from blocks reserved durably, so ids are never reused after a crash."""
        if self._producer_ids_left == 0:
            start = self.image.next_producer_id
            self._commit([R.producer_ids_record(start + PRODUCER_ID_BLOCK)])
            self._next_producer_id, self._producer_ids_left = start, PRODUCER_ID_BLOCK
        producer_id = self._next_producer_id
        self._next_producer_id += 1
        self._producer_ids_left -= 1
        return producer_id


def _new_cluster_id() -> str:
    import base64
    return base64.urlsafe_b64encode(uuid.UUID(int=random.getrandbits(128)).bytes).decode().rstrip("=")
