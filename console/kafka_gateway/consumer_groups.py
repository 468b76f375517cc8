"""Groups of the consumer group protocol (KIP-848), described with ConsumerGroupDescribe.

DescribeGroups describes classic groups only: Kafka answers a consumer-protocol group as Dead
with no members (GROUP_ID_NOT_FOUND from v6). The gateway asks ConsumerGroupDescribe, one
request per coordinator, for the groups DescribeGroups left unknown, when the broker has the
API, and gives them the same DescribedGroup shape: state (Empty, Assigning, Reconciling,
Stable), protocol type "consumer", the server assignor as the protocol, and each member's
subscription, current assignment and (v1, KIP-1099) protocol: a group being migrated between the
protocols has members of both. Groups still unknown to both stay as DescribeGroups
answered.

The codec classes come from `engine.protocol.specs`: Kafka's own JSON specs loaded with
kafka-python's loader (kafka-python 3.0.12 ships none for this API).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import kafka.errors as Errors

from console.kafka_gateway.errors import describe_error_code
from console.kafka_gateway.group_records import DescribedGroup, GroupMember
from engine.protocol.specs import ConsumerGroupDescribeRequest

GROUP_TYPE_CONSUMER = "consumer"
MEMBER_PROTOCOLS = {0: "classic", 1: "consumer"}    # ConsumerGroupDescribe v1's MemberType


def unknown_groups(described: dict[str, DescribedGroup]) -> dict[int, list[str]]:
    """{coordinator: group ids} that DescribeGroups did not know (maybe consumer-protocol groups)."""
    by_node: dict[int, list[str]] = defaultdict(list)
    for group_id, group in described.items():
        if group.error is None and not group.is_known:
            by_node[group.coordinator].append(group_id)
    return dict(by_node)


def describe_requests(by_node: dict[int, list[str]]) -> list:
    return [(node, ConsumerGroupDescribeRequest(group_ids=ids, include_authorized_operations=False))
            for node, ids in by_node.items()]


def merged(described: dict[str, DescribedGroup], by_node: dict[int, list[str]], answers: list
           ) -> dict[str, DescribedGroup]:
    """`described` with the groups ConsumerGroupDescribe knows replaced by its description."""
    result = dict(described)
    for node, answer in zip(by_node, answers):
        if isinstance(answer, Exception):
            continue   # keep DescribeGroups' answer: these groups stay unknown
        for group in answer.groups:
            if group.error_code == Errors.GroupIdNotFoundError.errno:
                continue   # neither a classic nor a consumer-protocol group here
            if group.error_code:
                result[group.group_id] = replace(result[group.group_id],
                                                 error=describe_error_code(group.error_code, group.error_message))
                continue
            result[group.group_id] = _description(group, node)
    return result


def _description(raw, coordinator: int) -> DescribedGroup:
    members = tuple(sorted((_member(m) for m in raw.members), key=lambda m: (m.client_id, m.member_id)))
    return DescribedGroup(group_id=raw.group_id, state=raw.group_state, protocol_type=GROUP_TYPE_CONSUMER,
                          protocol=raw.assignor_name or "", coordinator=coordinator, members=members,
                          group_type=GROUP_TYPE_CONSUMER)


def _member(raw) -> GroupMember:
    assignment = tuple(sorted((t.topic_name, p) for t in raw.assignment.topic_partitions for p in t.partitions))
    return GroupMember(member_id=raw.member_id, group_instance_id=raw.instance_id, client_id=raw.client_id,
                       client_host=raw.client_host, subscribed_topics=tuple(sorted(raw.subscribed_topic_names)),
                       assignment=assignment, protocol=MEMBER_PROTOCOLS.get(getattr(raw, "member_type", -1), ""))
