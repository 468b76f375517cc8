"""Consumer group operations over the Kafka protocol only, with kafka-python's KafkaAdminClient
(the command line and, later, the console use them; they work against any Kafka cluster).

- `lag` (kafka_rules.lag): consumer lag, the high watermark minus the committed offset
  (or, with `read_committed=True`, the last stable offset minus it: a read_committed
  consumer stops at the first offset of the oldest open transaction).
- `describe_group`: a row per partition the group has an offset for or is assigned, with
  kafka-consumer-groups.sh's columns: committed offset (OffsetFetch), log end offset (the
  high watermark, ListOffsets latest), lag, and the member holding it (DescribeGroups; for a
  group of the consumer group protocol, KIP-848, ConsumerGroupDescribe).
- `plan_reset` / `execute_reset`: `--reset-offsets` as Kafka's tool does it: target offsets
  from ListOffsets (earliest, latest, by timestamp) or given, clamped to the partition's
  range, then committed with OffsetCommit (generation -1), only while the group is inactive.
"""
from __future__ import annotations

from dataclasses import dataclass

import kafka.errors as Errors
from kafka.admin import KafkaAdminClient
from kafka.protocol.consumer import IsolationLevel, OffsetSpec
from kafka.structs import OffsetAndMetadata, TopicPartition

from engine.protocol.specs import ConsumerGroupDescribeRequest
from kafka_rules.lag import lag

INACTIVE_STATES = ("Empty", "Dead")


class GroupCommandError(Exception):
    """The request cannot be carried out (unknown group, active group, unknown topic)."""


@dataclass(frozen=True)
class PartitionRow:
    """One row of `--describe`, with kafka-consumer-groups.sh's columns."""

    group: str
    topic: str
    partition: int
    current_offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None


@dataclass(frozen=True)
class GroupDescription:
    group: str
    state: str
    members: int
    partitions: list[PartitionRow]


def connect(bootstrap: str, **config) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="engine-groups", **config)


def list_groups(admin: KafkaAdminClient) -> list[dict]:
    """Every consumer group of the cluster (each broker lists those it coordinates), by id;
    share groups (KIP-932) are `share-groups --list`'s, as Kafka's tools split them."""
    groups = {g["group_id"]: g for g in admin.list_groups() if g.get("protocol_type") != "share"}
    return [groups[name] for name in sorted(groups)]


def _describe(admin: KafkaAdminClient, group_id: str) -> dict:
    description = admin.describe_groups([group_id])[group_id]
    if description.get("error") and "GroupIdNotFound" not in description["error"]:
        raise GroupCommandError(description["error"])
    if description.get("error") or (description.get("group_state") == "Dead" and not description.get("members")):
        return _describe_consumer_group(admin, group_id) or description
    return description


def _describe_consumer_group(admin: KafkaAdminClient, group_id: str) -> dict | None:
    """A KIP-848 group (which DescribeGroups does not know) in DescribeGroups' shape, or None
    if the cluster has no ConsumerGroupDescribe or does not know the group either."""
    try:
        admin._manager.broker_version_data.api_version(ConsumerGroupDescribeRequest)
    except Errors.IncompatibleBrokerVersion:
        return None

    async def send():
        # kafka-python's admin has no call for this API: its own coordinator lookup and connections.
        coordinator = await admin._find_coordinator_id(group_id)
        request = ConsumerGroupDescribeRequest(group_ids=[group_id], include_authorized_operations=False)
        return await admin._manager.send(request, node_id=coordinator)
    [group] = admin._manager.run(send).groups
    if group.error_code:
        return None
    return {"group_id": group_id, "group_state": group.group_state, "error": None, "members": [
        {"member_id": m.member_id, "client_id": m.client_id, "client_host": m.client_host,
         "member_assignment": {"assigned_partitions": [{"topic": t.topic_name, "partitions": list(t.partitions)}
                                                       for t in m.assignment.topic_partitions]}}
        for m in group.members]}


def _assigned_partitions(member: dict) -> list[TopicPartition]:
    assignment = member.get("member_assignment")
    if not assignment or isinstance(assignment, (bytes, bytearray)):
        return []  # not a consumer group, or nothing assigned
    if isinstance(assignment, dict):
        return [TopicPartition(t["topic"], p) for t in assignment.get("assigned_partitions", [])
                for p in t["partitions"]]
    return assignment.partitions()


def describe_group(admin: KafkaAdminClient, group_id: str, *, read_committed: bool = False) -> GroupDescription:
    description = _describe(admin, group_id)
    owners = {tp: member for member in description.get("members", []) for tp in _assigned_partitions(member)}
    committed = admin.list_group_offsets(group_id).get(group_id, {})
    if description.get("error") and not committed:
        raise GroupCommandError(f"Consumer group '{group_id}' does not exist.")
    partitions = sorted(set(owners) | set(committed), key=lambda tp: (tp.topic, tp.partition))
    isolation = IsolationLevel.READ_COMMITTED if read_committed else IsolationLevel.READ_UNCOMMITTED
    ends = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in partitions},
                                        isolation_level=isolation) if partitions else {}
    rows = []
    for tp in partitions:
        current = committed[tp].offset if tp in committed and committed[tp].offset >= 0 else None
        end = ends[tp].offset if tp in ends else None
        owner = owners.get(tp, {})
        rows.append(PartitionRow(group_id, tp.topic, tp.partition, current, end, lag(end, current),
                                 owner.get("member_id"), owner.get("client_host"), owner.get("client_id")))
    return GroupDescription(group_id, description.get("group_state") or "Dead",
                            len(description.get("members", [])), rows)


# --- offset reset ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ResetSpec:
    """Exactly one of: earliest, latest, a timestamp (ms) or an offset."""
    to_earliest: bool = False
    to_latest: bool = False
    to_timestamp: int | None = None
    to_offset: int | None = None


def resolve_partitions(admin: KafkaAdminClient, group_id: str, topics: list[str] | None) -> list[TopicPartition]:
    """`--topic T` (every partition) or `T:0,2`; None means the group's committed topics."""
    if topics is None:
        return sorted(admin.list_group_offsets(group_id).get(group_id, {}), key=lambda tp: (tp.topic, tp.partition))
    result = []
    for item in topics:
        name, _, listed = item.partition(":")
        if listed:
            result += [TopicPartition(name, int(p)) for p in listed.split(",") if p.strip()]
            continue
        described = admin.describe_topics([name])
        partitions = [p["partition_index"] for t in described if t["name"] == name and not t["error_code"]
                      for p in t["partitions"]]
        if not partitions:
            raise GroupCommandError(f"Topic '{name}' does not exist.")
        result += [TopicPartition(name, p) for p in sorted(partitions)]
    return result


def plan_reset(admin: KafkaAdminClient, group_id: str, partitions: list[TopicPartition],
               spec: ResetSpec) -> dict[TopicPartition, int]:
    """The new offset of each partition; refuses unless the group is inactive (as Kafka)."""
    state = _describe(admin, group_id).get("group_state") or "Dead"
    if state not in INACTIVE_STATES:
        raise GroupCommandError(f"Assignments can only be reset if the group '{group_id}' is inactive, "
                                f"but the current state is {state}.")
    return reset_targets(admin, partitions, spec)


def reset_targets(admin: KafkaAdminClient, partitions: list[TopicPartition],
                  spec: ResetSpec) -> dict[TopicPartition, int]:
    """Each partition's offset for the reset target, within its log (kafka-consumer-groups.sh's
    and kafka-share-groups.sh's rule)."""
    if not partitions:
        return {}
    earliest = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in partitions})
    latest = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in partitions})
    if spec.to_earliest:
        return {tp: earliest[tp].offset for tp in partitions}
    if spec.to_latest:
        return {tp: latest[tp].offset for tp in partitions}
    if spec.to_timestamp is not None:
        found = admin.list_partition_offsets({tp: spec.to_timestamp for tp in partitions})
        # No record at or after the time: the log end, as Kafka's tool does.
        return {tp: found[tp].offset if found[tp].offset >= 0 else latest[tp].offset for tp in partitions}
    if spec.to_offset is not None:
        return {tp: min(max(spec.to_offset, earliest[tp].offset), latest[tp].offset) for tp in partitions}
    raise ValueError("no reset target")


def execute_reset(admin: KafkaAdminClient, group_id: str, plan: dict[TopicPartition, int]) -> None:
    if not plan:
        return
    errors = admin.alter_group_offsets(group_id, {tp: OffsetAndMetadata(offset, "", None)
                                                  for tp, offset in plan.items()})
    failed = {tp: error.__name__ for tp, error in errors.items() if error.errno != 0}
    if failed:
        raise GroupCommandError(f"Failed to commit the new offsets: {failed}")
