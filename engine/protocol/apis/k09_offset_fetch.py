"""OffsetFetch: v1-9.

Committed offsets of a group, from the coordinator's memory (loaded from and written to
`__consumer_offsets`). A partition without a committed offset answers offset -1, leader
epoch -1, metadata "". A null topic list (v2+) asks for every committed offset of the group.
- v1: group errors are repeated on every partition; v2-7 carry a top-level error code;
  v8+ fetch several groups at once (KIP-709), each with its own error.
- Transactional offsets (TxnOffsetCommit) show only once their transaction commits. v7+
  require_stable (KIP-447): a partition with such an offset still pending answers
  UNSTABLE_OFFSET_COMMIT (offset -1), so a read_committed consumer waits for the outcome.
- Errors: NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, INVALID_GROUP_ID.
- v9 (KIP-848): a member of a consumer-protocol group names its member id and epoch, and
  gets UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH unless they are current; admin tools send a
  null member id and epoch -1. Classic groups ignore both, as Kafka does.
- Authorization (as KafkaApis): DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED;
  DESCRIBE on each topic: a topic named and refused is TOPIC_AUTHORIZATION_FAILED, and the
  all-topics form leaves the refused ones out.
"""
import kafka.errors as Errors
from kafka.protocol.consumer import OffsetFetchRequest, OffsetFetchResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE

R = OffsetFetchResponse
Group = R.OffsetFetchResponseGroup
# (topic, partition) classes: v1-7 and v8+ name them differently.
CLASSES_V1 = (R.OffsetFetchResponseTopic, R.OffsetFetchResponseTopic.OffsetFetchResponsePartition)
CLASSES_V8 = (Group.OffsetFetchResponseTopics, Group.OffsetFetchResponseTopics.OffsetFetchResponsePartitions)


@api(OffsetFetchRequest, OffsetFetchResponse, versions=(1, 9))
async def handle_offset_fetch(ctx, request: OffsetFetchRequest) -> OffsetFetchResponse:
    if ctx.api_version >= 8:
        groups = []
        for group in request.groups:
            member = (group.member_id, group.member_epoch) if ctx.api_version >= 9 else (None, -1)
            error, topics = _fetch(ctx, group.group_id, group.topics, CLASSES_V8, request.require_stable, member)
            groups.append(Group(group_id=group.group_id, topics=topics, error_code=error))
        return R(throttle_time_ms=0, groups=groups)
    error, topics = _fetch(ctx, request.group_id, request.topics, CLASSES_V1,
                           ctx.api_version >= 7 and request.require_stable)
    if error and ctx.api_version == 1:  # no top-level error code yet: every partition carries it
        for topic in topics:
            for partition in topic.partitions:
                partition.error_code = error
    return R(throttle_time_ms=0, topics=topics, error_code=error)


def _fetch(ctx, group_id: str, requested, classes, require_stable: bool, member=(None, -1)) -> tuple[int, list]:
    topic_class, partition_class = classes
    wanted = None if requested is None else [(t.name, p) for t in requested for p in t.partition_indexes]
    try:
        if not authorize.authorize_group(ctx, DESCRIBE, group_id):
            raise ApiError(Errors.GroupAuthorizationFailedError)
        found = ctx.coordinator.fetch_offsets(group_id, wanted, member_id=member[0], member_epoch=member[1])
        unstable = ctx.coordinator.unstable_partitions(group_id, wanted) if require_stable else set()
        error = 0
    except ApiError as exc:
        found, error = ([] if wanted is None else [(tp, None) for tp in wanted]), exc.code
        unstable = set()
        if ctx.api_version >= 2:
            found = []
    topics: dict[str, list] = {}
    described = authorize.authorize_topics(ctx, DESCRIBE, {topic for (topic, _), _ in found})
    for (topic, index), committed in found:
        if topic not in described:
            if wanted is not None and not error:
                topics.setdefault(topic, []).append(partition_class(
                    partition_index=index, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                    error_code=Errors.TopicAuthorizationFailedError.errno))
            continue
        if (topic, index) in unstable:
            topics.setdefault(topic, []).append(partition_class(
                partition_index=index, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                error_code=Errors.UnstableOffsetCommitError.errno))
            continue
        topics.setdefault(topic, []).append(partition_class(
            partition_index=index, committed_offset=committed.offset if committed else -1,
            committed_leader_epoch=committed.leader_epoch if committed else -1,
            metadata=committed.metadata if committed else "", error_code=0))
    return error, [topic_class(name=name, partitions=partitions) for name, partitions in topics.items()]
