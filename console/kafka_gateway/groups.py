"""Consumer group calls, batched so that a page about 2,000 groups costs a handful of requests.

Use them through a gateway: `with open_gateway(settings) as gw: gw.groups.list_groups()`.
Every method raises only `GatewayError` for a failure of the whole call; a failure that
concerns one group or one partition is reported in the result (`errors`) instead, so one
broken group never hides the others. Results are the dataclasses of `group_records`.

How each Kafka API is batched (what a caller pays, whatever the number of groups):
- ListGroups: one request to every live broker, all in flight together. Each broker lists
  the groups it coordinates (`GroupListing.listed_by`).
- FindCoordinator v4+ (KIP-699): one request carries every group id. Brokers before v4 get
  one request per group, all in flight together.
- DescribeGroups: one request per coordinator, naming all of its groups; member metadata
  and assignments are decoded with kafka-python's ConsumerProtocolSubscription and
  ConsumerProtocolAssignment (KIP-429 versions included). Groups it does not know are asked
  again with ConsumerGroupDescribe (KIP-848 groups, `consumer_groups.py`), one request per
  coordinator, only when there are such groups.
- OffsetFetch v8+ (KIP-709): one request per coordinator, naming all of its groups. Brokers
  before v8 get one request per group, all in flight together.
- ListOffsets: one request per partition leader for all partitions asked for: callers pass
  the union of every group's partitions, so a partition read by 50 groups is asked once.
  (Not split further: kafka-python fails a sixth request in flight to one broker
  (NodeNotReadyError "max_in_flight"), and splitting measured no faster.)
- OffsetCommit (generation -1, no member: an admin commit, as AlterConsumerGroupOffsets),
  OffsetDelete and DeleteGroups: one request per coordinator.

`lag_snapshot(group_ids)` strings the reads together in three round trips for callers that
want groups' members and committed offsets next to the partitions' high watermarks (the
groups pages, lag analytics): start there.

Requests go through kafka-python's connection manager (`_manager`), as in `client.py`: its
public admin calls send one request per coordinator one after another, raise on the first
group error, and turn every partition into a namedtuple first.
"""
from __future__ import annotations

import struct
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import kafka.errors as Errors
from kafka.protocol.admin import DeleteGroupsRequest, DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.consumer import ListOffsetsRequest, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from kafka.protocol.metadata import FindCoordinatorRequest

from console.kafka_gateway import cache, consumer_groups
from console.kafka_gateway.errors import GatewayError, describe_error_code, readable, translated
from console.kafka_gateway.group_records import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    CommittedOffset,
    Coordinators,
    DescribedGroup,
    GroupListing,
    GroupMember,
    GroupOffsets,
    LogOffsets,
    TopicPartitionKey,
)
from console.kafka_gateway.records import ConfigEntry, PartitionInfo
from console.kafka_gateway.wire import bulk_allocation, cluster_metadata, metadata_request, send_all

CONSUMER_PROTOCOL = "consumer"
GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE = 0, 1
_NO_GROUP_SUPPORT = (Errors.IncompatibleBrokerVersion, Errors.UnsupportedVersionError)
_UNDECODABLE = (struct.error, ValueError, UnicodeDecodeError, EOFError, IndexError, TypeError)
_RETRIABLE_COORDINATOR_ERRORS = (Errors.CoordinatorNotAvailableError.errno, Errors.CoordinatorLoadInProgressError.errno)
_COORDINATOR_RETRY_SECONDS = 0.5
# OffsetCommit v9 is the KIP-848 shape; an admin commit (generation -1, no member) needs no more than v8.
_OFFSET_COMMIT_MAX_VERSION = 8
T = TypeVar("T")


@dataclass(frozen=True)
class LagSnapshot:
    """Groups' coordinators, descriptions (members, decoded assignments) and committed offsets,
    with the log end offset (high watermark) of every partition they committed on or own."""

    coordinators: Coordinators
    described: dict[str, DescribedGroup]
    committed: GroupOffsets
    log_end_offsets: LogOffsets
    last_stable_offsets: LogOffsets | None = None     # asked for with last_stable=True
    log_start_offsets: LogOffsets | None = None       # of the partitions without a commit, with whole_topics=True


# The consumer group configs of Kafka's GroupConfig (KIP-848), on the GROUP resource.
CONSUMER_GROUP_CONFIGS = ("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms")


class GroupCalls:
    """The consumer group calls of one gateway (see the module docstring)."""

    def __init__(self, gateway) -> None:
        self._gateway = gateway
        self._manager = gateway._admin._manager

    # --- reads ------------------------------------------------------------------------------

    @translated
    def list_groups(self) -> list[GroupListing] | None:
        """ListGroups on every live broker; None when the cluster has no group APIs."""
        brokers = [b.node_id for b in self._manager.cluster.brokers()]
        try:
            answers = self._run(send_all, [(b, ListGroupsRequest()) for b in brokers])
        except _NO_GROUP_SUPPORT:
            return None
        listed: dict[str, GroupListing] = {}
        for broker_id, answer in zip(brokers, answers):
            if isinstance(answer, _NO_GROUP_SUPPORT):
                return None
            if isinstance(answer, Exception):
                raise GatewayError(f"Broker {broker_id} did not list its groups: {readable(answer)}")
            if answer.error_code:
                raise GatewayError(f"Broker {broker_id} did not list its groups: "
                                   f"{describe_error_code(answer.error_code)}")
            for g in answer.groups:
                listed[g.group_id] = GroupListing(group_id=g.group_id, state=g.group_state or "",
                                                  protocol_type=g.protocol_type or "", listed_by=broker_id,
                                                  group_type=g.group_type or "")
        return sorted(listed.values(), key=lambda g: g.group_id)

    @translated
    def find_coordinators(self, group_ids: Iterable[str], *, key_type: int = GROUP_KEY_TYPE) -> Coordinators:
        """FindCoordinator for every group id (or transactional id, with TRANSACTION_KEY_TYPE). The first lookup on a cluster creates
        `__consumer_offsets`, and until its leaders are up Kafka answers COORDINATOR_NOT_AVAILABLE
        (clients retry): those ids are asked once more after a short pause."""
        group_ids = list(dict.fromkeys(group_ids))
        found: dict[str, int] = {}
        errors: dict[str, str] = {}
        for attempt in range(2):
            retry = []
            for group_id, node_id, error_code, message in self._lookup_coordinators(group_ids, key_type):
                if error_code == 0:
                    found[group_id] = node_id
                    errors.pop(group_id, None)
                elif error_code in _RETRIABLE_COORDINATOR_ERRORS and attempt == 0:
                    retry.append(group_id)
                    errors[group_id] = describe_error_code(error_code, message)
                else:
                    errors[group_id] = message if error_code == -1 else describe_error_code(error_code, message)
            if not retry:
                break
            group_ids = retry
            time.sleep(_COORDINATOR_RETRY_SECONDS)
        return Coordinators(found=found, errors=errors)

    def _lookup_coordinators(self, group_ids: list[str], key_type: int) -> list[tuple[str, int, int, str | None]]:
        """(group id, node id, error code (-1: no answer), message) per id."""
        if not group_ids:
            return []
        if self._version(FindCoordinatorRequest) >= 4:
            request = FindCoordinatorRequest(key_type=key_type, coordinator_keys=group_ids, min_version=4)
            return [(c.key, c.node_id, c.error_code, c.error_message) for c in self._one(None, request).coordinators]
        requests = [(None, FindCoordinatorRequest(key=g, key_type=key_type, max_version=3)) for g in group_ids]
        rows = []
        for group_id, answer in zip(group_ids, self._run(send_all, requests)):
            if isinstance(answer, Exception):
                rows.append((group_id, -1, -1, readable(answer)))
            else:
                rows.append((group_id, answer.node_id, answer.error_code, answer.error_message))
        return rows

    @translated
    def describe_groups(self, coordinators: Mapping[str, int]) -> dict[str, DescribedGroup]:
        """DescribeGroups, one request per coordinator; a coordinator that fails gives its
        groups a DescribedGroup with `error` set."""
        by_node = _by_coordinator(coordinators)
        return self._with_consumer_groups(_described(by_node, self._run(send_all, _describe_requests(by_node))))

    @translated
    def committed_offsets(self, coordinators: Mapping[str, int],
                          partitions: Mapping[str, Iterable[TopicPartitionKey]] | None = None) -> GroupOffsets:
        """OffsetFetch: every committed offset of each group (or only `partitions[group]`).
        Partitions without a committed offset are left out."""
        requests, asked = self._fetch_requests(_by_coordinator(coordinators), partitions)
        if not requests:
            return GroupOffsets()
        with bulk_allocation():
            return _fetched(asked, self._run(send_all, requests))

    def _fetch_requests(self, by_node: dict[int, list[str]],
                        partitions: Mapping[str, Iterable[TopicPartitionKey]] | None) -> tuple[list, list]:
        """(node, OffsetFetch) pairs and the group ids each asks for: one per coordinator (v8+)
        or one per group."""
        wanted = (lambda g: None) if partitions is None else (lambda g: _fetch_topics(partitions.get(g, ())))
        batched = self._version(OffsetFetchRequest) >= 8
        requests, asked = [], []
        for node, ids in by_node.items():
            if batched:
                groups = [OffsetFetchRequest.OffsetFetchRequestGroup(group_id=g, topics=wanted(g)) for g in ids]
                requests.append((node, OffsetFetchRequest(groups=groups, require_stable=False, min_version=8)))
                asked.append(ids)
            else:
                requests += [(node, OffsetFetchRequest(group_id=g, topics=wanted(g), min_version=2, max_version=7))
                             for g in ids]
                asked += [[g] for g in ids]
        return requests, asked

    @translated
    def log_offsets(self, partitions: Iterable[PartitionInfo], *, timestamp: int = LATEST_TIMESTAMP,
                    isolation_level: int = 0) -> LogOffsets:
        """ListOffsets for each partition once, one request per leader, all in flight together.
        `timestamp`: LATEST_TIMESTAMP (high watermark), EARLIEST_TIMESTAMP (log start offset),
        or milliseconds (the first offset whose record is at or after it; -1 if none).
        `isolation_level=1` (read_committed): LATEST_TIMESTAMP answers the last stable offset."""
        by_leader: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
        errors: dict[TopicPartitionKey, str] = {}
        wanted = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition
        for p in partitions:
            if p.is_offline:
                errors[(p.topic, p.partition)] = "The partition has no leader."
                continue
            by_leader[p.leader][p.topic].append(wanted(partition_index=p.partition, timestamp=timestamp,
                                                       current_leader_epoch=-1))
        requests = [(leader, ListOffsetsRequest(replica_id=-1, isolation_level=isolation_level, topics=[
            ListOffsetsRequest.ListOffsetsTopic(name=t, partitions=ps) for t, ps in topics.items()]))
            for leader, topics in by_leader.items()]
        offsets: dict[TopicPartitionKey, int] = {}
        with bulk_allocation():
            for (leader, topics), answer in zip(by_leader.items(), self._run(send_all, requests)):
                if isinstance(answer, Exception):
                    reason = readable(answer)
                    errors.update({(t, p.partition_index): reason for t, ps in topics.items() for p in ps})
                    continue
                for topic in answer.topics:
                    name = topic.name
                    for p in topic.partitions:
                        if p.error_code:
                            errors[(name, p.partition_index)] = describe_error_code(p.error_code)
                        else:
                            offsets[(name, p.partition_index)] = p.offset
        return LogOffsets(offsets=offsets, errors=errors)

    @translated
    def lag_snapshot(self, group_ids: Iterable[str], *, all_topics: bool = True, describe: bool = True,
                     last_stable: bool = False, whole_topics: bool = False) -> LagSnapshot:
        """Everything the lag of these groups needs, in three round trips whatever their number:
        1. FindCoordinator (v4: one request);
        2. DescribeGroups and OffsetFetch per coordinator, and Metadata, all in flight together;
        3. ListOffsets (latest) per leader, for every partition any of the groups committed on
           or is assigned, each asked once.
        `all_topics`: ask Metadata for every topic (the engine answers that from a cache, and
        it can go out with step 2); False asks only the groups' topics after step 2 (cheaper
        for a few groups in a big cluster). `describe=False` skips DescribeGroups (lag only:
        partitions owned without a commit are then not included). `last_stable=True` also asks
        ListOffsets read_committed (the last stable offset, where read_committed consumers stop).
        `whole_topics=True`: every partition of every topic the groups commit on, are assigned
        or subscribe to, also those no one committed on (with their log start offsets: how much
        a consumer starting from the earliest offset would have to read)."""
        coordinators = self.find_coordinators(group_ids)
        if not coordinators.found:
            return LagSnapshot(coordinators=coordinators, described={}, committed=GroupOffsets(),
                               log_end_offsets=LogOffsets())
        by_node = _by_coordinator(coordinators.found)
        describe = _describe_requests(by_node) if describe else []
        fetch, asked = self._fetch_requests(by_node, None)
        metadata = self._gateway.cached_metadata() if all_topics else None
        extra = [(None, metadata_request(None))] if all_topics and metadata is None else []
        sent_at = cache.METADATA.now()
        with bulk_allocation():
            answers = self._run(send_all, describe + fetch + extra)
            described = self._with_consumer_groups(_described(by_node, answers[:len(describe)]))
            committed = _fetched(asked, answers[len(describe):len(describe) + len(fetch)])
            partitions = {tp for offsets in committed.offsets.values() for tp in offsets}
            partitions.update(tp for d in described.values() for m in d.members for tp in m.assignment)
            if extra:
                if isinstance(answers[-1], Exception):
                    raise answers[-1]
                metadata = cluster_metadata(answers[-1])
                self._gateway.remember_metadata(metadata, fetched_at=sent_at)
            topics = {t for t, _ in partitions}
            if whole_topics:
                topics.update(t for d in described.values() for m in d.members for t in m.subscribed_topics)
            if not extra and not all_topics:
                metadata = self._gateway.metadata(sorted(topics)) if topics else None
        if whole_topics and metadata:
            partitions.update((p.topic, p.partition) for t in metadata.topics if t.name in topics
                              for p in t.partitions)
        leaders = [p for t in metadata.topics for p in t.partitions
                   if (p.topic, p.partition) in partitions] if metadata else []
        committed_anywhere = {tp for offsets in committed.offsets.values() for tp in offsets}
        return LagSnapshot(coordinators=coordinators, described=described, committed=committed,
                           log_end_offsets=self.log_offsets(leaders),
                           last_stable_offsets=self.log_offsets(leaders, isolation_level=1) if last_stable else None,
                           log_start_offsets=self.log_offsets(
                               [p for p in leaders if (p.topic, p.partition) not in committed_anywhere],
                               timestamp=EARLIEST_TIMESTAMP) if whole_topics else None)

    # --- writes -----------------------------------------------------------------------------

    @translated
    def commit_offsets(self, group_id: str, *, coordinator: int,
                       offsets: Mapping[TopicPartitionKey, tuple[int, str]]) -> dict[TopicPartitionKey, str]:
        """OffsetCommit as an admin (generation -1, no member id: Kafka accepts it only while
        the group is Empty). offsets: {(topic, partition): (offset, metadata)}.
        Returns the partitions that failed, with the reason."""
        if not offsets:
            return {}
        topic = OffsetCommitRequest.OffsetCommitRequestTopic
        by_topic: dict[str, list] = defaultdict(list)
        for (name, partition), (offset, metadata) in offsets.items():
            by_topic[name].append(topic.OffsetCommitRequestPartition(
                partition_index=partition, committed_offset=offset, committed_leader_epoch=-1,
                committed_metadata=metadata))
        request = OffsetCommitRequest(group_id=group_id, generation_id_or_member_epoch=-1, member_id="",
                                      group_instance_id=None, retention_time_ms=-1,
                                      topics=[topic(name=t, partitions=ps) for t, ps in by_topic.items()],
                                      max_version=_OFFSET_COMMIT_MAX_VERSION)
        answer = self._one(coordinator, request)
        self._offsets_changed()
        return {(t.name, p.partition_index): describe_error_code(p.error_code)
                for t in answer.topics for p in t.partitions if p.error_code}

    @translated
    def delete_offsets(self, group_id: str, *, coordinator: int,
                       partitions: Iterable[TopicPartitionKey]) -> dict[TopicPartitionKey, str]:
        """OffsetDelete; returns the partitions that failed, with the reason. A group-level
        refusal (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP ...) raises GatewayError."""
        topic = OffsetDeleteRequest.OffsetDeleteRequestTopic
        by_topic: dict[str, list] = defaultdict(list)
        for name, partition in partitions:
            by_topic[name].append(topic.OffsetDeleteRequestPartition(partition_index=partition))
        if not by_topic:
            return {}
        answer = self._one(coordinator, OffsetDeleteRequest(
            group_id=group_id, topics=[topic(name=t, partitions=ps) for t, ps in by_topic.items()]))
        self._offsets_changed()
        if answer.error_code:
            raise GatewayError(describe_error_code(answer.error_code))
        return {(t.name, p.partition_index): describe_error_code(p.error_code)
                for t in answer.topics for p in t.partitions if p.error_code}

    @translated
    def delete_groups(self, coordinators: Mapping[str, int]) -> dict[str, str]:
        """DeleteGroups, one request per coordinator; returns the groups that failed, with the reason."""
        self._offsets_changed()
        return self.ask_coordinators(
            coordinators, lambda ids: DeleteGroupsRequest(groups_names=ids),
            read=lambda node, answer: ((r.group_id, describe_error_code(r.error_code))
                                       for r in answer.results if r.error_code),
            failed=lambda group_id, node, reason: reason)

    # --- plumbing ---------------------------------------------------------------------------

    @translated
    def configs(self, group_id: str) -> list[ConfigEntry]:
        """The group's consumer group configs, each with its source (the group's, or the brokers')."""
        return [e for e in self._gateway.group_configs(group_id) if e.name in CONSUMER_GROUP_CONFIGS]

    @translated
    def alter_configs(self, group_id: str, *, set_configs: Mapping[str, str], delete: Iterable[str] = ()) -> None:
        self._gateway.alter_group_configs(group_id, set_configs=set_configs, delete=delete)

    def _offsets_changed(self) -> None:
        """This console changed committed offsets: the background lag snapshot of the cluster
        is wrong now, so the next page collects a new one (console.kafka_gateway.cache)."""
        if self._gateway.cache_key is not None:
            cache.GROUP_LAGS.drop(self._gateway.cache_key)

    def ask_coordinators(self, coordinators: Mapping[str, int], request: Callable[[list[str]], object], *,
                         read: Callable[[int, object], Iterable[tuple[str, T]]],
                         failed: Callable[[str, int, str], T]) -> dict[str, T]:
        """One request per coordinator naming all of its keys (group or transactional ids), all
        in flight together; each answer read into {key: result} (`per_coordinator`)."""
        by_node = _by_coordinator(coordinators)
        return per_coordinator(by_node, self._run(send_all, [(node, request(ids)) for node, ids in by_node.items()]),
                               read=read, failed=failed)

    def _with_consumer_groups(self, described: dict[str, DescribedGroup]) -> dict[str, DescribedGroup]:
        """Groups DescribeGroups did not know, described by ConsumerGroupDescribe if the cluster has it."""
        unknown = consumer_groups.unknown_groups(described)
        if not unknown or self._version(consumer_groups.ConsumerGroupDescribeRequest) < 0:
            return described
        by_node = dict(unknown)
        return consumer_groups.merged(described, by_node,
                                      self._run(send_all, consumer_groups.describe_requests(by_node)))

    def _version(self, request_class) -> int:
        try:
            return self._manager.broker_version_data.api_version(request_class)
        except Errors.IncompatibleBrokerVersion:
            return -1

    def _run(self, coroutine, *args):
        return self._manager.run(coroutine, self._manager, *args)

    def _one(self, node_id: int | None, request):
        [answer] = self._run(send_all, [(node_id, request)])
        if isinstance(answer, Exception):
            raise answer
        return answer


def _describe_requests(by_node: dict[int, list[str]]) -> list:
    return [(node, DescribeGroupsRequest(groups=ids, include_authorized_operations=False))
            for node, ids in by_node.items()]


def per_coordinator(by_node: dict[int, list[str]], answers: list, *,
                    read: Callable[[int, object], Iterable[tuple[str, T]]],
                    failed: Callable[[str, int, str], T]) -> dict[str, T]:
    """The answers of one request per coordinator (`by_node`'s order), read into {key: result}
    by `read(node, answer)`; a request that failed gives each key it named `failed(key, node, why)`."""
    found: dict[str, T] = {}
    for (node, keys), answer in zip(by_node.items(), answers):
        if isinstance(answer, Exception):
            found.update({key: failed(key, node, readable(answer)) for key in keys})
        else:
            found.update(read(node, answer))
    return found


def _described(by_node: dict[int, list[str]], answers: list) -> dict[str, DescribedGroup]:
    return per_coordinator(by_node, answers, failed=_failed_description,
                           read=lambda node, answer: ((g.group_id, _description(g, node)) for g in answer.groups))


def _fetched(asked: list[list[str]], answers: list) -> GroupOffsets:
    offsets: dict[str, dict[TopicPartitionKey, CommittedOffset]] = {}
    errors: dict[str, str] = {}
    for ids, answer in zip(asked, answers):
        if isinstance(answer, Exception):
            errors.update({g: readable(answer) for g in ids})
            continue
        groups = answer.groups if answer.API_VERSION >= 8 else [_as_group(ids[0], answer)]
        for group in groups:
            if group.error_code:
                errors[group.group_id] = describe_error_code(group.error_code)
            else:
                offsets[group.group_id] = _committed(group)
    return GroupOffsets(offsets=offsets, errors=errors)


def _by_coordinator(coordinators: Mapping[str, int]) -> dict[int, list[str]]:
    by_node: dict[int, list[str]] = defaultdict(list)
    for group_id, node_id in coordinators.items():
        by_node[node_id].append(group_id)
    return dict(by_node)


def _fetch_topics(partitions: Iterable[TopicPartitionKey]) -> list:
    by_topic: dict[str, list[int]] = defaultdict(list)
    for topic, partition in partitions:
        by_topic[topic].append(partition)
    topic_class = OffsetFetchRequest.OffsetFetchRequestGroup.OffsetFetchRequestTopics
    return [topic_class(name=t, partition_indexes=ps) for t, ps in by_topic.items()]


class _as_group:
    """An OffsetFetch v2-7 answer (one group) in the shape of a v8+ group entry."""

    def __init__(self, group_id: str, answer) -> None:
        self.group_id, self.error_code, self.topics = group_id, answer.error_code, answer.topics


def _committed(group) -> dict[TopicPartitionKey, CommittedOffset]:
    committed = {}
    for topic in group.topics:
        name = topic.name
        for p in topic.partitions:
            if p.error_code == 0 and p.committed_offset >= 0:
                committed[(name, p.partition_index)] = CommittedOffset(p.committed_offset, p.committed_leader_epoch,
                                                                       p.metadata or "")
    return committed


def _description(raw, coordinator: int) -> DescribedGroup:
    consumer = raw.protocol_type == CONSUMER_PROTOCOL
    members = tuple(sorted((_member(m, consumer) for m in raw.members), key=lambda m: (m.client_id, m.member_id)))
    error = describe_error_code(raw.error_code, raw.error_message) if raw.error_code else None
    if raw.error_code == Errors.GroupIdNotFoundError.errno:
        error = None     # v6+ (KIP-1043) says so; older versions answer Dead with no members
    return DescribedGroup(group_id=raw.group_id, state=raw.group_state or ("Dead" if not raw.error_code else ""),
                          protocol_type=raw.protocol_type or "", protocol=raw.protocol_data or "",
                          coordinator=coordinator, members=members, error=error)


def _failed_description(group_id: str, coordinator: int, reason: str) -> DescribedGroup:
    return DescribedGroup(group_id=group_id, state="", protocol_type="", protocol="", coordinator=coordinator,
                          members=(), error=reason)


def _member(raw, consumer: bool) -> GroupMember:
    """Decode the consumer protocol's subscription and assignment bytes (other protocols,
    such as Connect's, keep theirs opaque)."""
    topics: tuple[str, ...] = ()
    assignment: tuple[TopicPartitionKey, ...] = ()
    undecodable = False
    if consumer:
        try:
            if raw.member_metadata:
                topics = tuple(sorted(ConsumerProtocolSubscription.decode(bytes(raw.member_metadata)).topics or ()))
            if raw.member_assignment:
                decoded = ConsumerProtocolAssignment.decode(bytes(raw.member_assignment))
                assignment = tuple(sorted((a.topic, p) for a in decoded.assigned_partitions or () for p in a.partitions))
        except _UNDECODABLE:
            undecodable = True
    return GroupMember(member_id=raw.member_id, group_instance_id=raw.group_instance_id, client_id=raw.client_id,
                       client_host=raw.client_host, subscribed_topics=topics, assignment=assignment,
                       undecodable=undecodable)
