"""The gateway: the only code in the console that talks to Kafka.

It speaks the standard protocol through kafka-python's KafkaAdminClient, so it works against
Apache Kafka as well as our engine. Everything engine-specific (stopping and starting a
broker) goes through `engine_admin`, found via a broker config that Kafka does not have.

A `Gateway` is short-lived: `with open_gateway(settings) as gw:` connects (one bootstrap:
ApiVersions and a Metadata request for no topics), serves one page or one admin action, and
closes its sockets and its I/O thread. Every public method raises only `GatewayError`, with
a message meant for the page. Results are the dataclasses of `records`.

Pages must stay fast with thousands of topics, so the two requests whose answers grow with
the cluster (Metadata for all topics, DescribeLogDirs) are built here and in `wire` and sent through
kafka-python's connection manager (`_manager`, a private API pinned by kafka-python==3.0.12
in requirements.txt and covered by the gateway tests): its public calls turn every
partition into a dict first, and ask for Metadata once more on the way. Everything else
uses KafkaAdminClient's public methods.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

import kafka.errors as Errors
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.protocol.admin import DescribeLogDirsRequest
from kafka.protocol.consumer import OffsetSpec

from console.kafka_gateway import admin_calls, cache, engine_admin, wire
from console.kafka_gateway.errors import (
    describe_error_code,
    error_for_code,
    translated,
)
from console.kafka_gateway.groups import GroupCalls
from console.kafka_gateway.quotas import QuotaCalls
from console.kafka_gateway.reassignments import ReassignmentCalls
from console.kafka_gateway.share_groups import ShareGroupCalls
from console.kafka_gateway.records import (
    ClusterMetadata,
    ConfigEntry,
    ConnectionSettings,
    ElectionResult,
    EngineBroker,
    EngineBrokerChange,
    PartitionInfo,
    PartitionOffsets,
    ReplicaLogDir,
)
from console.kafka_gateway.transactions import TransactionCalls

PREFERRED_ELECTION = 0
ELECTION_NOT_NEEDED = Errors.ElectionNotNeededError.errno
# Our engine's read-only broker config naming the partitions its log cleaner gave up on.
UNCLEANABLE_PARTITIONS_CONFIG = "engine.log.cleaner.uncleanable.partitions"


def _changes_metadata(method):
    """The call changes cluster metadata: drop the cached copy when it returns (or fails
    halfway), so the next page asks the cluster."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        finally:
            self.metadata_changed()
    return wrapper


@contextmanager
def open_gateway(settings: ConnectionSettings, *, request_timeout_ms: int = 10000,
                 bootstrap_timeout_ms: int = 5000, metadata_max_age: float = 0.0) -> Iterator[Gateway]:
    """`metadata_max_age`: seconds a cached all-topics Metadata answer may be old for
    `metadata(cached=True)` (console.kafka_gateway.cache); 0 always asks the cluster."""
    admin = wire.connect(settings, request_timeout_ms, bootstrap_timeout_ms)
    try:
        gateway = Gateway(admin, request_timeout_ms=request_timeout_ms, engine_admin_token=settings.engine_admin_token,
                          cache_key=cache.cache_key(settings), metadata_max_age=metadata_max_age)
        # For work that outlives this gateway (console.kafka_gateway.log_dirs opens its own).
        gateway.reopen = functools.partial(open_gateway, settings, request_timeout_ms=request_timeout_ms,
                                           bootstrap_timeout_ms=bootstrap_timeout_ms)
        yield gateway
    finally:
        admin.close()


class Gateway:
    """The calls the console makes to one cluster, over one admin client (see the module docstring)."""

    def __init__(self, admin: KafkaAdminClient, *, request_timeout_ms: int, engine_admin_token: str = "",
                 cache_key: cache.CacheKey | None = None, metadata_max_age: float = 0.0) -> None:
        self._admin = admin
        self._engine_admin_token = engine_admin_token
        self._timeout_ms = request_timeout_ms
        self._engine_endpoint: dict[int, str | None] = {}
        self.cache_key = cache_key
        self.metadata_max_age = metadata_max_age if cache_key is not None else 0.0
        self.reopen = None          # () -> a context manager giving a new gateway to the same cluster

    # --- metadata -------------------------------------------------------------------------

    @translated
    def metadata(self, topics: Iterable[str] | None = None, *, cached: bool = False) -> ClusterMetadata:
        """One Metadata request: live brokers, controller, cluster id, and the topics asked
        for (all topics when `topics` is None). Topics the cluster does not know are left out.
        `cached`: all topics, from the process-wide cache when it is young enough (see
        console.kafka_gateway.cache); pages that list the whole cluster use it."""
        if cached and topics is None:
            return cache.METADATA.get(self.cache_key, max_age=self.metadata_max_age, fetch=self._fetch_metadata)
        return self._fetch_metadata(topics)

    def cached_metadata(self) -> ClusterMetadata | None:
        """The cached all-topics metadata if young enough, without asking the cluster."""
        return cache.METADATA.fresh(self.cache_key, max_age=self.metadata_max_age) if self.cache_key else None

    def remember_metadata(self, metadata: ClusterMetadata, *, fetched_at: float) -> None:
        if self.metadata_max_age > 0:
            cache.METADATA.remember(self.cache_key, metadata, fetched_at=fetched_at)

    def metadata_changed(self) -> None:
        """Drop the cluster's cached metadata: this gateway just changed it."""
        if self.cache_key is not None:
            cache.METADATA.invalidate(self.cache_key)

    def _fetch_metadata(self, topics: Iterable[str] | None = None) -> ClusterMetadata:
        # Sent by us (see the module docstring): describe_topics() would drop brokers and
        # controller, and turn 20,000 partitions into dicts first.
        with wire.bulk_allocation():
            response = self._admin._manager.run(wire.send, self._admin._manager, wire.metadata_request(topics))
            return wire.cluster_metadata(response)

    @property
    def reassignments(self):
        """Partition reassignment calls (console.kafka_gateway.reassignments.ReassignmentCalls)."""
        return ReassignmentCalls(self)

    # --- configs --------------------------------------------------------------------------

    @translated
    def topic_configs(self, topic: str) -> list[ConfigEntry]:
        return self._describe_configs(ConfigResourceType.TOPIC, topic)

    @translated
    def topic_config_details(self, topic: str) -> list[ConfigEntry]:
        """Every config of the topic with its synonyms (so: its default without the topic's
        override), and the broker's documentation and type when it sends them (v3+)."""
        return admin_calls.config_details(self._admin, ConfigResourceType.TOPIC, topic, own_source=admin_calls.TOPIC_OVERRIDE)

    @translated
    def broker_config_details(self, broker_id: int) -> list[ConfigEntry]:
        """Every config of the broker, as topic_config_details: `default_value` is what applies
        without the broker's own dynamic override (the cluster-wide default, the static file,
        or Kafka's default). Kafka marks the configs it cannot change at run time read-only."""
        return admin_calls.config_details(self._admin, ConfigResourceType.BROKER, str(broker_id),
                                          own_source=admin_calls.BROKER_OVERRIDE)

    @translated
    def topics_config_values(self, topics: Iterable[str], keys: Iterable[str]) -> dict[str, dict[str, str | None]]:
        """{topic: {key: value}} for a few keys of many topics, in one DescribeConfigs request."""
        topics, keys = list(topics), list(keys)
        if not topics:
            return {}
        answer = self._admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t, keys) for t in topics],
                                              config_filter="all")
        found = answer.get("topic", {})
        return {t: {k: e.get("value") for k, e in found.get(t, {}).items()} for t in topics}

    @translated
    def broker_configs(self, broker_id: int) -> list[ConfigEntry]:
        return self._describe_configs(ConfigResourceType.BROKER, str(broker_id))

    def _describe_configs(self, resource_type: ConfigResourceType, name: str,
                          names: list[str] | None = None) -> list[ConfigEntry]:
        answer = self._admin.describe_configs([ConfigResource(resource_type, name, names)], config_filter="all")
        entries = answer.get(resource_type.name.lower(), {}).get(name, {})
        return sorted((admin_calls.config_entry(key, e) for key, e in entries.items()), key=lambda c: c.name)

    @translated
    def group_configs(self, group_id: str) -> list[ConfigEntry]:
        """DescribeConfigs of the GROUP resource (KIP-848; type 32): a group's dynamic configs."""
        return self._describe_configs(ConfigResourceType.GROUP, group_id)

    @translated
    def alter_group_configs(self, group_id: str, *, set_configs: Mapping[str, str], delete: Iterable[str] = ()) -> None:
        """IncrementalAlterConfigs of the GROUP resource: SET the values, DELETE (back to the broker's) the others."""
        admin_calls.alter_configs(self._admin, ConfigResourceType.GROUP, group_id, set_configs=set_configs,
                                  delete=delete, validate_only=False, what=f"the change to group {group_id}")

    @translated
    def alter_topic_configs(self, topic: str, *, set_configs: Mapping[str, str], delete: Iterable[str] = (),
                            validate_only: bool = False) -> None:
        """IncrementalAlterConfigs: SET the given values, DELETE (back to the default) the others.
        `validate_only`: the cluster checks the change with its own rules and changes nothing."""
        admin_calls.alter_configs(self._admin, ConfigResourceType.TOPIC, topic, set_configs=set_configs, delete=delete,
                                  validate_only=validate_only, what=f"the change to topic {topic}")

    @translated
    def alter_broker_configs(self, broker: str, *, set_configs: Mapping[str, str], delete: Iterable[str] = (),
                             validate_only: bool = False) -> None:
        """IncrementalAlterConfigs on a BROKER resource: `broker` is a broker id, or "" for the
        cluster-wide default (kafka-configs.sh --entity-default)."""
        where = f"broker {broker}" if broker else "the cluster-wide broker default"
        admin_calls.alter_configs(self._admin, ConfigResourceType.BROKER, broker, set_configs=set_configs, delete=delete,
                                  validate_only=validate_only, what=f"the change to {where}")

    # --- offsets and log dirs -------------------------------------------------------------

    @translated
    def high_watermarks(self, partitions: Iterable[PartitionInfo]) -> dict[tuple[str, int], int]:
        """ListOffsets (latest) for the partitions that have a leader, one request per leader."""
        return self._list_offsets(partitions, OffsetSpec.LATEST)

    @translated
    def partition_offsets(self, partitions: Iterable[PartitionInfo]) -> dict[tuple[str, int], PartitionOffsets]:
        """Log start offset and high watermark of each partition that has a leader."""
        partitions = list(partitions)
        starts = self._list_offsets(partitions, OffsetSpec.EARLIEST)
        ends = self._list_offsets(partitions, OffsetSpec.LATEST)
        return {key: PartitionOffsets(log_start_offset=starts[key], high_watermark=ends[key])
                for key in ends if key in starts}

    @translated
    def delete_records(self, topic: str, before: Mapping[int, int]) -> dict[int, int]:
        """DeleteRecords: each partition's records below its offset go (-1: below the high
        watermark); the new log start offsets. Refused partitions raise one GatewayError that
        names them by error (console.kafka_gateway.admin_calls)."""
        return admin_calls.delete_records(self._admin, topic, self.metadata([topic]).topic(topic), before,
                                          timeout_ms=self._timeout_ms)

    def _list_offsets(self, partitions: Iterable[PartitionInfo], spec: OffsetSpec) -> dict[tuple[str, int], int]:
        specs = {TopicPartition(p.topic, p.partition): spec for p in partitions if not p.is_offline}
        if not specs:
            return {}
        answer = self._admin.list_partition_offsets(specs, timeout_ms=self._timeout_ms)
        return {(tp.topic, tp.partition): result.offset for tp, result in answer.items()}

    @translated
    def replica_log_dirs(self, partitions: Mapping[str, Iterable[int]] | None,
                         brokers: Iterable[int]) -> list[ReplicaLogDir]:
        """DescribeLogDirs, sent to each of `brokers` (live ones) at once: the replicas of the
        given partitions ({topic: [ids]}), or of every partition when `partitions` is None."""
        brokers = list(brokers)
        if not brokers or (partitions is not None and not partitions):
            return []
        wanted = DescribeLogDirsRequest.DescribableLogDirTopic
        topics = None if partitions is None else [wanted(topic=t, partitions=list(ids)) for t, ids in partitions.items()]
        with wire.bulk_allocation():
            responses = self._admin._manager.run(wire.send_to_each, self._admin._manager,
                                                 lambda: DescribeLogDirsRequest(topics=topics), brokers)
            replicas = []
            for broker_id, response in zip(brokers, responses):
                if response.error_code:
                    raise error_for_code(response.error_code)
                for result in response.results:
                    if result.error_code:
                        continue
                    for topic in result.topics:
                        replicas.extend(ReplicaLogDir(broker_id, result.log_dir, topic.name, p.partition_index,
                                                      p.partition_size, p.offset_lag)
                                        for p in topic.partitions if not p.is_future_key)
        return replicas

    # --- topic admin ------------------------------------------------------------------------

    @_changes_metadata
    @translated
    def create_topic(self, *, name: str, num_partitions: int = -1, replication_factor: int = -1,
                     configs: Mapping[str, str] | None = None,
                     assignments: Mapping[int, list[int]] | None = None, validate_only: bool = False) -> None:
        """CreateTopics, then wait until every partition has a leader. With `assignments`
        ({partition: [broker ids]}) the partition count and replication factor come from it.
        `validate_only`: the cluster checks name, counts and configs, and creates nothing."""
        spec: dict = {"configs": dict(configs or {})}
        if assignments:
            spec["assignments"] = {int(p): list(replicas) for p, replicas in assignments.items()}
        else:
            spec.update(num_partitions=num_partitions, replication_factor=replication_factor)
        answer = self._admin.create_topics({name: spec}, timeout_ms=self._timeout_ms, raise_errors=False,
                                           validate_only=validate_only, wait_for_metadata=False)
        for topic in answer["topics"]:
            if topic["error_code"] != 0:
                raise error_for_code(topic["error_code"], topic.get("error_message"), what=f"creating topic {name}")
        if not validate_only:
            self._admin.wait_for_topics([name], timeout_ms=self._timeout_ms)

    @_changes_metadata
    @translated
    def delete_topic(self, name: str) -> None:
        answer = self._admin.delete_topics([name], timeout_ms=self._timeout_ms, raise_errors=False)
        for topic in answer["topics"]:
            if topic["error_code"] != 0:
                raise error_for_code(topic["error_code"], topic.get("error_message"), what=f"deleting topic {name}")

    @_changes_metadata
    @translated
    def create_partitions(self, topic: str, *, total_count: int, validate_only: bool = False) -> None:
        response = self._admin.create_partitions({topic: total_count}, timeout_ms=self._timeout_ms,
                                                 raise_errors=False, validate_only=validate_only)
        for result in response.results:
            if result.error_code != 0:
                raise error_for_code(result.error_code, result.error_message,
                                     what=f"growing {topic} to {total_count} partitions")

    @_changes_metadata
    @translated
    def elect_preferred_leaders(self, partitions: Mapping[str, Iterable[int]]) -> ElectionResult:
        """ElectLeaders (preferred) for the given partitions; an empty mapping elects nothing."""
        wanted = {topic: list(ids) for topic, ids in partitions.items() if ids}
        if not wanted:
            return ElectionResult()
        response = self._admin.elect_leaders(PREFERRED_ELECTION, wanted, timeout_ms=self._timeout_ms,
                                             raise_errors=False)
        if getattr(response, "error_code", 0):
            raise error_for_code(response.error_code)
        elected, failed, not_needed = [], [], 0
        for result in response.replica_election_results:
            for p in result.partition_result:
                if p.error_code == 0:
                    elected.append((result.topic, p.partition_id))
                elif p.error_code == ELECTION_NOT_NEEDED:
                    not_needed += 1
                else:
                    failed.append((result.topic, p.partition_id, describe_error_code(p.error_code, p.error_message)))
        return ElectionResult(elected=tuple(sorted(elected)), not_needed=not_needed, failed=tuple(sorted(failed)))

    @translated
    def partition_reassignments(self) -> dict[tuple[str, int], dict]:
        """Ongoing reassignments: {(topic, partition): {replicas, adding_replicas, removing_replicas}}."""
        answer = self._admin.list_partition_reassignments(timeout_ms=self._timeout_ms)
        return {(tp.topic, tp.partition): dict(state) for tp, state in answer.items()}

    # --- consumer groups --------------------------------------------------------------------

    @property
    def groups(self):
        """The batched consumer group calls (console.kafka_gateway.groups.GroupCalls)."""
        return GroupCalls(self)

    @property
    def share_groups(self):
        """The share group calls (KIP-932; console.kafka_gateway.share_groups.ShareGroupCalls)."""
        return ShareGroupCalls(self)

    @property
    def transactions(self):
        """The transaction calls (console.kafka_gateway.transactions.TransactionCalls)."""
        return TransactionCalls(self)

    @property
    def quotas(self):
        """The client quota calls (console.kafka_gateway.quotas.QuotaCalls)."""
        return QuotaCalls(self)

    @property
    def acls(self):
        """The ACL calls (console.kafka_gateway.acls.AclCalls)."""
        from console.kafka_gateway.acls import AclCalls
        return AclCalls(self)

    @property
    def scram_users(self):
        """The SCRAM credential calls (console.kafka_gateway.scram_users.ScramUserCalls)."""
        from console.kafka_gateway.scram_users import ScramUserCalls
        return ScramUserCalls(self)

    # --- the bundled engine's admin interface ----------------------------------------------

    @translated
    def engine_admin_endpoint(self, *, via_broker: int) -> str | None:
        """The engine's admin URL as broker `via_broker` advertises it; None on other clusters."""
        if via_broker not in self._engine_endpoint:
            configs = self._describe_configs(ConfigResourceType.BROKER, str(via_broker),
                                             [engine_admin.ADMIN_ENDPOINT_CONFIG])
            entry = next((c for c in configs if c.name == engine_admin.ADMIN_ENDPOINT_CONFIG), None)
            self._engine_endpoint[via_broker] = (entry.value or None) if entry else None
        return self._engine_endpoint[via_broker]

    @translated
    def engine_uncleanable_partitions(self, broker_id: int) -> tuple[str, ...] | None:
        """The partitions broker `broker_id`'s log cleaner gave up on ("topic-partition"), from
        our engine's read-only broker config; None on clusters that have no such config (no
        Kafka API reports them)."""
        configs = self._describe_configs(ConfigResourceType.BROKER, str(broker_id), [UNCLEANABLE_PARTITIONS_CONFIG])
        entry = next((c for c in configs if c.name == UNCLEANABLE_PARTITIONS_CONFIG), None)
        if entry is None:
            return None
        return tuple(p for p in (entry.value or "").split(",") if p)

    def engine_brokers(self, endpoint: str) -> list[EngineBroker]:
        return engine_admin.list_brokers(endpoint, token=self._engine_admin_token, timeout=self._timeout_ms / 1000)

    def engine_share_partitions(self, endpoint: str, group_id: str | None) -> list[dict]:
        return engine_admin.share_partitions(endpoint, group_id, token=self._engine_admin_token,
                                             timeout=self._timeout_ms / 1000)

    @_changes_metadata
    def engine_broker_command(self, endpoint: str, broker_id: int, action: str) -> EngineBrokerChange:
        # A controlled shutdown moves leaderships first: allow it more than one request's time.
        return engine_admin.broker_command(endpoint, broker_id, action, token=self._engine_admin_token,
                                           timeout=max(60.0, self._timeout_ms / 1000))


def group_partitions(partitions: Iterable[PartitionInfo]) -> dict[str, list[int]]:
    """{topic: [partition ids]}, the shape DescribeLogDirs and ElectLeaders take."""
    grouped: dict[str, list[int]] = defaultdict(list)
    for p in partitions:
        grouped[p.topic].append(p.partition)
    return dict(grouped)
