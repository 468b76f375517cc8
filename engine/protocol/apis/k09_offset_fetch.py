"""OffsetFetch: v1-9.

Committed offsets of a group, from the coordinator's memory (loaded from and written to
`__consumer_offsets`). A partition without a committed offset answers offset -1, leader
epoch -1, metadata "". A null topic list (v2+) asks for every committed offset of the group.
- v1: group errors are repeated on every partition; v2-7 carry a top-level error code;
  v8+ fetch several groups at once (KIP-709), each with its own error.
- Transactional offsets (TxnOffsetCommit) show only once their transaction commits. v7+
  require_stable (KIP-447): a partition with such an offset still pending answers
  UNSTABLE_OFFSET_COMMIT (offset -1), so a read_committed consumer waits for the outcome.
- The answer is built in slices of the event loop (engine/cluster/slices.py), and one of
  thousands of partitions is encoded off it (engine/protocol/big_requests.py).
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

from engine.cluster import slices
from engine.errors import ApiError
from engine.protocol.dispatch import EncodeOffLoop
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE

R = OffsetFetchResponse
Group = R.OffsetFetchResponseGroup
# (topic, partition) classes: v1-7 and v8+ name them differently.
CLASSES_V1 = (R.OffsetFetchResponseTopic, R.OffsetFetchResponseTopic.OffsetFetchResponsePartition)
ENCODE_OFF_LOOP_ENTRIES = 5000
CLASSES_V8 = (Group.OffsetFetchResponseTopics, Group.OffsetFetchResponseTopics.OffsetFetchResponsePartitions)


@api(OffsetFetchRequest, OffsetFetchResponse, versions=(1, 9))
async def handle_offset_fetch(ctx, request: OffsetFetchRequest) -> OffsetFetchResponse:
    with slices.Pacer() as pacer:     # a request may name a million groups or partitions
        return await _answer(ctx, request, pacer)


async def _answer(ctx, request: OffsetFetchRequest, pacer: slices.Pacer):
    if ctx.api_version >= 8:
        groups = []
        for group in request.groups:
            member = (group.member_id, group.member_epoch) if ctx.api_version >= 9 else (None, -1)
            error, topics = await _fetch(ctx, group.group_id, group.topics, CLASSES_V8, request.require_stable,
                                         pacer, member)
            groups.append(Group(group_id=group.group_id, topics=topics, error_code=error))
            await pacer.tick()
        response = R(throttle_time_ms=0, groups=groups)
        entries = sum(len(t.partitions) for g in groups for t in g.topics)
        return EncodeOffLoop(response) if entries > ENCODE_OFF_LOOP_ENTRIES else response
    error, topics = await _fetch(ctx, request.group_id, request.topics, CLASSES_V1,
                                 ctx.api_version >= 7 and request.require_stable, pacer)
    if error and ctx.api_version == 1:  # no top-level error code yet: every partition carries it
        for topic in topics:
            for partition in topic.partitions:
                partition.error_code = error
    response = R(throttle_time_ms=0, topics=topics, error_code=error)
    # Every offset of a group (topics null) can be a big answer to a small request.
    return EncodeOffLoop(response) if sum(len(t.partitions) for t in topics) > ENCODE_OFF_LOOP_ENTRIES else response


async def _fetch(ctx, group_id: str, requested, classes, require_stable: bool, pacer: slices.Pacer,
                 member=(None, -1)) -> tuple[int, list]:
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

    def answer(entry) -> None:
        (topic, index), committed = entry
        if topic not in described:
            if wanted is not None and not error:
                topics.setdefault(topic, []).append(partition_class(
                    partition_index=index, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                    error_code=Errors.TopicAuthorizationFailedError.errno))
            return
        if (topic, index) in unstable:
            topics.setdefault(topic, []).append(partition_class(
                partition_index=index, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                error_code=Errors.UnstableOffsetCommitError.errno))
            return
        topics.setdefault(topic, []).append(partition_class(
            partition_index=index, committed_offset=committed.offset if committed else -1,
            committed_leader_epoch=committed.leader_epoch if committed else -1,
            metadata=committed.metadata if committed else "", error_code=0))
    await slices.map_sliced(found, answer, pacer)
    return error, await slices.map_sliced(topics.items(), lambda t: topic_class(name=t[0], partitions=t[1]), pacer)
