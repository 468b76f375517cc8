"""DescribeShareGroupOffsets: v0-1 (KIP-932; v1: KIP-1226's Lag).

For each group, the share partitions' start offsets: of the topics and partitions asked
for, or (topics null) of every partition the group has state for; the partition's leader
epoch; and (v1) the lag - the high watermark, less the start offset, less the records after
it already acknowledged or archived (engine/coordinator/share_groups.py). A partition without
state answers start offset -1 (lag -1).
Errors: per group GROUP_ID_NOT_FOUND (unknown, or not a share group), NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE; per partition
UNKNOWN_TOPIC_OR_PARTITION and the share coordinator's errors.
Authorization (as KafkaApis): DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED for the
group; DESCRIBE on each topic, else TOPIC_AUTHORIZATION_FAILED on the partitions asked for
(with topics null, the topics the principal may not describe are left out).
"""
import uuid

import kafka.errors as Errors

from engine.coordinator.share_groups import ShareOffset
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse
from engine.security import authorize
from kafka_rules.acls import DESCRIBE

R = DescribeShareGroupOffsetsResponse
ZERO_UUID = uuid.UUID(int=0)
Group = R.DescribeShareGroupOffsetsResponseGroup
Topic = Group.DescribeShareGroupOffsetsResponseTopic
Partition = Topic.DescribeShareGroupOffsetsResponsePartition
_REFUSED = ShareOffset(error=Errors.TopicAuthorizationFailedError.errno)


@api(DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse, versions=(0, 1))
async def handle_describe_share_group_offsets(ctx, request: DescribeShareGroupOffsetsRequest) -> R:
    return R(throttle_time_ms=0, groups=[await _describe(ctx, g) for g in request.groups])


async def _describe(ctx, wanted) -> Group:
    topics = None if wanted.topics is None else [(t.topic_name, list(t.partitions)) for t in wanted.topics]
    refused: list = []
    try:
        authorize.require_group(ctx, DESCRIBE, wanted.group_id)      # before the topics, as KafkaApis
        if topics is not None:
            allowed = authorize.authorize_topics(ctx, DESCRIBE, (name for name, _ in topics))
            refused = [((name, p), _REFUSED) for name, partitions in topics if name not in allowed
                       for p in partitions]
            topics = [(name, partitions) for name, partitions in topics if name in allowed]
        found = await ctx.coordinator.share.describe_offsets(wanted.group_id, topics)
    except ApiError as exc:
        return Group(group_id=wanted.group_id, topics=[], error_code=exc.code, error_message=exc.message)
    if wanted.topics is None:
        allowed = authorize.authorize_topics(ctx, DESCRIBE, {name for name, _ in found})
        found = {tp: offset for tp, offset in found.items() if tp[0] in allowed}
    image = ctx.broker.image
    by_topic: dict[str, list] = {}
    for (topic, index), offset in [*found.items(), *refused]:
        by_topic.setdefault(topic, []).append(Partition(
            partition_index=index, start_offset=offset.start_offset, leader_epoch=offset.leader_epoch,
            lag=offset.lag, error_code=offset.error, error_message=offset.message))
    return Group(group_id=wanted.group_id, error_code=0, error_message=None, topics=[
        Topic(topic_name=topic, topic_id=image.topics[topic].topic_id if topic in image.topics else ZERO_UUID,
              partitions=sorted(ps, key=lambda p: p.partition_index))
        for topic, ps in sorted(by_topic.items())])
