"""Share groups (KIP-932) through the Kafka protocol: ShareGroupDescribe, DescribeShareGroupOffsets,
AlterShareGroupOffsets, DeleteShareGroupOffsets, and the GROUP config resource (type 32) of
DescribeConfigs and IncrementalAlterConfigs; each request goes to the groups' coordinators,
one request per coordinator naming all of its groups (`GroupCalls.ask_coordinators`). They
work against Apache Kafka 4.1+ as against the engine.

What Kafka does not tell through its protocol - a share partition's records in flight by
state, its lock expiries and archived records - the bundled engine offers on its admin
interface (`engine_admin`, found through `engine.admin.endpoint`); on another cluster
`partition_stats` answers None and the pages say those numbers are not available.

The codec classes come from `engine.protocol.specs`: Kafka's own JSON specs loaded with
kafka-python's loader (kafka-python 3.0.12 ships none for these APIs).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import kafka.errors as Errors

from console.kafka_gateway.errors import GatewayError, describe_error_code, translated
from console.kafka_gateway.records import ConfigEntry
from console.kafka_gateway.share_records import (ShareGroupInfo, ShareGroupOffsets, ShareMember, ShareOffset,
                                                 SharePartitionStats)
from console.kafka_gateway.wire import send_all
from engine.protocol.specs import (AlterShareGroupOffsetsRequest, DeleteShareGroupOffsetsRequest,
                                   DescribeShareGroupOffsetsRequest, ShareGroupDescribeRequest)

SHARE_GROUP_CONFIGS = ("share.auto.offset.reset", "share.isolation.level", "share.record.lock.duration.ms",
                       "share.delivery.count.limit", "share.partition.max.record.locks", "share.session.timeout.ms",
                       "share.heartbeat.interval.ms")


class ShareGroupCalls:
    """The share group calls of one gateway (see the module docstring)."""

    def __init__(self, gateway) -> None:
        self._gateway = gateway
        self._groups = gateway.groups
        self._manager = gateway._admin._manager

    def supported(self) -> bool:
        """The cluster speaks share groups (ShareGroupDescribe v1, Kafka 4.1+)."""
        return self._version(ShareGroupDescribeRequest) >= 1

    @translated
    def describe(self, coordinators: Mapping[str, int]) -> dict[str, ShareGroupInfo]:
        def read(node, answer):
            for g in answer.groups:
                if g.error_code:
                    yield g.group_id, _failed_info(g.group_id, node, describe_error_code(g.error_code, g.error_message))
                    continue
                members = tuple(sorted((_member(m) for m in g.members), key=lambda m: (m.client_id, m.member_id)))
                yield g.group_id, ShareGroupInfo(g.group_id, g.group_state, g.group_epoch, g.assignment_epoch,
                                                 g.assignor_name, node, members)
        return self._groups.ask_coordinators(
            coordinators, lambda ids: ShareGroupDescribeRequest(group_ids=ids, include_authorized_operations=False),
            read=read, failed=lambda group_id, node, reason: _failed_info(group_id, node, reason))

    @translated
    def offsets(self, coordinators: Mapping[str, int]) -> ShareGroupOffsets:
        """Every share partition each group has state for, with its lag when the cluster tells it."""
        R = DescribeShareGroupOffsetsRequest
        found: dict[str, list[ShareOffset]] = {}
        errors: dict[str, str] = {}

        def read(node, answer):
            for g in answer.groups:
                if g.error_code:
                    yield g.group_id, describe_error_code(g.error_code, g.error_message)
                    continue
                yield g.group_id, sorted(
                    (ShareOffset(t.topic_name, p.partition_index, p.start_offset, p.leader_epoch,
                                 p.lag if p.lag >= 0 and p.start_offset >= 0 else None,
                                 describe_error_code(p.error_code, p.error_message) if p.error_code else None)
                     for t in g.topics for p in t.partitions), key=lambda o: (o.topic, o.partition))
        answers = self._groups.ask_coordinators(
            coordinators, lambda ids: R(groups=[R.DescribeShareGroupOffsetsRequestGroup(group_id=i, topics=None)
                                                for i in ids]),
            read=read, failed=lambda group_id, node, reason: reason)
        for group_id, answer in answers.items():
            (errors if isinstance(answer, str) else found)[group_id] = answer
        return ShareGroupOffsets(found, errors)

    @translated
    def alter_offsets(self, group_id: str, *, coordinator: int, offsets: Mapping[tuple[str, int], int]
                      ) -> dict[tuple[str, int], str]:
        """AlterShareGroupOffsets (the group must be empty); the partitions Kafka refused, with why."""
        R = AlterShareGroupOffsetsRequest
        Topic = R.AlterShareGroupOffsetsRequestTopic
        by_topic: dict[str, list] = {}
        for (topic, partition), offset in sorted(offsets.items()):
            by_topic.setdefault(topic, []).append(Topic.AlterShareGroupOffsetsRequestPartition(
                partition_index=partition, start_offset=offset))
        answer = self._one(coordinator, R(group_id=group_id, topics=[Topic(topic_name=t, partitions=ps)
                                                                      for t, ps in by_topic.items()]))
        if answer.error_code:
            raise GatewayError(describe_error_code(answer.error_code, answer.error_message))
        return {(t.topic_name, p.partition_index): describe_error_code(p.error_code, p.error_message)
                for t in answer.responses for p in t.partitions if p.error_code}

    @translated
    def delete_offsets(self, group_id: str, *, coordinator: int, topics: Iterable[str]) -> dict[str, str]:
        """DeleteShareGroupOffsets (the group must be empty); the topics Kafka refused, with why."""
        R = DeleteShareGroupOffsetsRequest
        answer = self._one(coordinator, R(group_id=group_id, topics=[R.DeleteShareGroupOffsetsRequestTopic(
            topic_name=t) for t in topics]))
        if answer.error_code:
            raise GatewayError(describe_error_code(answer.error_code, answer.error_message))
        return {t.topic_name: describe_error_code(p.error_code, p.error_message)
                for t in answer.responses for p in t.partitions if p.error_code}

    # --- group configs (KIP-848's GROUP config resource) ------------------------------------

    @translated
    def configs(self, group_id: str) -> list[ConfigEntry]:
        entries = self._gateway.group_configs(group_id)
        return [e for e in entries if e.name in SHARE_GROUP_CONFIGS]

    def alter_configs(self, group_id: str, *, set_configs: Mapping[str, str], delete: Iterable[str] = ()) -> None:
        self._gateway.alter_group_configs(group_id, set_configs=set_configs, delete=delete)

    # --- the bundled engine's counters --------------------------------------------------------

    def partition_stats(self, group_id: str | None) -> list[SharePartitionStats] | None:
        """The engine's view of the group's share partitions (every group's with None); None on
        a cluster without the engine's admin interface."""
        brokers = self._manager.cluster.brokers()
        if not brokers:
            return None
        endpoint = self._gateway.engine_admin_endpoint(via_broker=min(b.node_id for b in brokers))
        if endpoint is None:
            return None
        return [_stats(row) for row in self._gateway.engine_share_partitions(endpoint, group_id)]

    # --- plumbing ------------------------------------------------------------------------------

    def _version(self, request_class) -> int:
        try:
            return self._manager.broker_version_data.api_version(request_class)
        except Errors.IncompatibleBrokerVersion:
            return -1

    def _one(self, node_id: int, request):
        [answer] = self._manager.run(send_all, self._manager, [(node_id, request)])
        if isinstance(answer, Exception):
            raise answer
        return answer


def _failed_info(group_id: str, node: int, reason: str) -> ShareGroupInfo:
    return ShareGroupInfo(group_id, "", -1, -1, "", node, (), reason)


def _member(raw) -> ShareMember:
    assignment = tuple(sorted((t.topic_name, p) for t in raw.assignment.topic_partitions for p in t.partitions))
    return ShareMember(member_id=raw.member_id, rack_id=raw.rack_id, client_id=raw.client_id,
                       client_host=raw.client_host, member_epoch=raw.member_epoch,
                       subscribed_topics=tuple(sorted(raw.subscribed_topic_names)), assignment=assignment)


def _stats(row: dict) -> SharePartitionStats:
    return SharePartitionStats(
        group_id=str(row["group"]), topic=str(row["topic"]), partition=int(row["partition"]), broker=int(row["broker"]),
        start_offset=int(row["start_offset"]), end_offset=int(row["end_offset"]),
        high_watermark=int(row["high_watermark"]), available=int(row["available"]), acquired=int(row["acquired"]),
        acknowledged=int(row["acknowledged"]), archived=int(row["archived"]), in_flight=int(row["in_flight"]),
        deliveries=int(row["deliveries"]), lock_expiries=int(row["lock_expiries_total"]),
        archived_total={str(k): int(v) for k, v in dict(row["archived_total"]).items()})
