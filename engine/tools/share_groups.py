"""Share group operations over the Kafka protocol only (KIP-932), as `kafka-share-groups.sh`
does them, with kafka-python's KafkaAdminClient: its own calls where it has them (ListGroups
with the `share` type filter, DeleteGroups, ListOffsets, Metadata), and its connection manager
and coordinator lookup for the share APIs it has no call for (the specs in
engine/protocol/specs/). They work against any Kafka 4.1+ cluster.

- `list_groups`: ListGroups (type share) on every broker.
- `describe`: ShareGroupDescribe at the group's coordinator: state, epochs, members and
  their assignments.
- `describe_offsets`: DescribeShareGroupOffsets: start offset, leader epoch and lag per
  share partition.
- `plan_reset` / `execute_reset`: `--reset-offsets`: target start offsets from ListOffsets
  (earliest, latest, by timestamp) or given, clamped to the partition's range, then
  AlterShareGroupOffsets, only while the group is empty.
- `delete_offsets`: DeleteShareGroupOffsets; `delete_groups`: DeleteGroups.
"""
from __future__ import annotations

from dataclasses import dataclass

import kafka.errors as Errors
from kafka.admin import KafkaAdminClient
from kafka.structs import TopicPartition

from engine.protocol.specs import (AlterShareGroupOffsetsRequest, DeleteShareGroupOffsetsRequest,
                                   DescribeShareGroupOffsetsRequest, ShareGroupDescribeRequest)
from engine.tools.consumer_groups import ResetSpec, reset_targets

GROUP_ID_NOT_FOUND = Errors.GroupIdNotFoundError.errno


class ShareGroupCommandError(Exception):
    """The request cannot be carried out; the message says why."""


@dataclass(frozen=True)
class Member:
    member_id: str
    host: str
    client_id: str
    member_epoch: int
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class ShareGroupDescription:
    group: str
    coordinator: int
    state: str
    group_epoch: int
    assignment_epoch: int
    members: tuple[Member, ...]


@dataclass(frozen=True)
class ShareOffset:
    group: str
    topic: str
    partition: int
    start_offset: int | None
    leader_epoch: int | None
    lag: int | None


def connect(bootstrap: str, **config) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="engine-share-groups", **config)


def list_groups(admin: KafkaAdminClient, states: list[str] | None = None) -> list[tuple[str, str]]:
    """(group id, state) of every share group, by id."""
    listed = admin.list_groups(types_filter=["share"], states_filter=states or None)
    return sorted({(g["group_id"], g.get("group_state") or "") for g in listed})


def _send_to_coordinator(admin: KafkaAdminClient, group_id: str, request):
    async def send():
        coordinator = await admin._find_coordinator_id(group_id)
        return coordinator, await admin._manager.send(request, node_id=coordinator)
    return admin._manager.run(send)


def describe(admin: KafkaAdminClient, group_id: str) -> ShareGroupDescription:
    coordinator, response = _send_to_coordinator(
        admin, group_id, ShareGroupDescribeRequest(group_ids=[group_id], include_authorized_operations=False))
    [group] = response.groups
    if group.error_code == GROUP_ID_NOT_FOUND:
        raise ShareGroupCommandError(f"Share group '{group_id}' does not exist.")
    if group.error_code:
        raise ShareGroupCommandError(_error_text(group.error_code, group.error_message))
    members = tuple(Member(m.member_id, m.client_host, m.client_id, m.member_epoch,
                           tuple(sorted(TopicPartition(t.topic_name, p) for t in m.assignment.topic_partitions
                                        for p in t.partitions)))
                    for m in group.members)
    return ShareGroupDescription(group_id, coordinator, group.group_state, group.group_epoch,
                                 group.assignment_epoch, members)


def describe_offsets(admin: KafkaAdminClient, group_id: str,
                     partitions: list[TopicPartition] | None = None) -> list[ShareOffset]:
    """Every share partition the group has state for (or those named), by topic and partition."""
    R = DescribeShareGroupOffsetsRequest
    Group = R.DescribeShareGroupOffsetsRequestGroup
    topics = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        topics = [Group.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=sorted(ps))
                  for t, ps in sorted(by_topic.items())]
    _, response = _send_to_coordinator(admin, group_id, R(groups=[Group(group_id=group_id, topics=topics)]))
    [group] = response.groups
    if group.error_code == GROUP_ID_NOT_FOUND:
        raise ShareGroupCommandError(f"Share group '{group_id}' does not exist.")
    if group.error_code:
        raise ShareGroupCommandError(_error_text(group.error_code, group.error_message))
    rows = []
    for topic in group.topics:
        for p in topic.partitions:
            if p.error_code:
                raise ShareGroupCommandError(f"{topic.topic_name}-{p.partition_index}: "
                                             f"{_error_text(p.error_code, p.error_message)}")
            rows.append(ShareOffset(group_id, topic.topic_name, p.partition_index,
                                    p.start_offset if p.start_offset >= 0 else None,
                                    p.leader_epoch if p.leader_epoch >= 0 else None,
                                    p.lag if p.lag >= 0 else None))
    return sorted(rows, key=lambda r: (r.topic, r.partition))


# --- reset, delete ----------------------------------------------------------------------------

def resolve_partitions(admin: KafkaAdminClient, group_id: str, topics: list[str] | None) -> list[TopicPartition]:
    """`--topic T` (every partition) or `T:0,2`; None: every partition the group has state for."""
    if topics is None:
        return [TopicPartition(r.topic, r.partition) for r in describe_offsets(admin, group_id)]
    result = []
    for item in topics:
        name, _, listed = item.partition(":")
        if listed:
            try:
                result += [TopicPartition(name, int(p)) for p in listed.split(",") if p.strip()]
            except ValueError:
                raise ShareGroupCommandError(f"Invalid partition list in {item!r}: expected TOPIC:P,P") from None
            continue
        described = admin.describe_topics([name])
        partitions = [p["partition_index"] for t in described if t["name"] == name and not t["error_code"]
                      for p in t["partitions"]]
        if not partitions:
            raise ShareGroupCommandError(f"Topic '{name}' does not exist.")
        result += [TopicPartition(name, p) for p in sorted(partitions)]
    return result


def plan_reset(admin: KafkaAdminClient, group_id: str, partitions: list[TopicPartition],
               spec: ResetSpec) -> dict[TopicPartition, int]:
    """The new start offset of each partition; refuses unless the group is empty (as Kafka)."""
    state = describe(admin, group_id).state
    if state != "Empty":
        raise ShareGroupCommandError(f"Share group '{group_id}' is not empty: its state is {state}. "
                                     "Offsets can only be reset while it has no members.")
    return reset_targets(admin, partitions, spec)


def execute_reset(admin: KafkaAdminClient, group_id: str, plan: dict[TopicPartition, int]) -> None:
    if not plan:
        return
    R = AlterShareGroupOffsetsRequest
    Topic = R.AlterShareGroupOffsetsRequestTopic
    by_topic: dict[str, list] = {}
    for tp, offset in sorted(plan.items()):
        by_topic.setdefault(tp.topic, []).append(Topic.AlterShareGroupOffsetsRequestPartition(
            partition_index=tp.partition, start_offset=offset))
    _, response = _send_to_coordinator(admin, group_id, R(group_id=group_id, topics=[
        Topic(topic_name=t, partitions=ps) for t, ps in by_topic.items()]))
    if response.error_code:
        raise ShareGroupCommandError(_error_text(response.error_code, response.error_message))
    failed = {f"{t.topic_name}-{p.partition_index}": _error_text(p.error_code, p.error_message)
              for t in response.responses for p in t.partitions if p.error_code}
    if failed:
        raise ShareGroupCommandError(f"Failed to reset the start offsets: {failed}")


def delete_offsets(admin: KafkaAdminClient, group_id: str, topics: list[str]) -> dict[str, str | None]:
    """DeleteShareGroupOffsets: topic -> None when deleted, else the error text."""
    R = DeleteShareGroupOffsetsRequest
    _, response = _send_to_coordinator(admin, group_id, R(group_id=group_id, topics=[
        R.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in topics]))
    if response.error_code == GROUP_ID_NOT_FOUND:
        raise ShareGroupCommandError(f"Share group '{group_id}' does not exist.")
    if response.error_code:
        raise ShareGroupCommandError(_error_text(response.error_code, response.error_message))
    results = {}
    for topic in response.responses:
        failed = [p for p in topic.partitions if p.error_code]
        results[topic.topic_name] = _error_text(failed[0].error_code, failed[0].error_message) if failed else None
    return results


def delete_groups(admin: KafkaAdminClient, group_ids: list[str]) -> dict[str, str | None]:
    """DeleteGroups: group -> None when deleted, else the error text."""
    results = {}
    for group_id, outcome in admin.delete_groups(group_ids).items():     # "OK" or the error's class name
        error = getattr(Errors, outcome, None) if outcome != "OK" else None
        results[group_id] = None if outcome == "OK" else \
            (_error_text(error.errno, None) if error is not None else outcome)
    return results


def _error_text(code: int, message: str | None) -> str:
    error = Errors.for_code(code)
    name = getattr(error, "message", error.__name__)
    return f"{name} ({code}): {message or error.description}"
