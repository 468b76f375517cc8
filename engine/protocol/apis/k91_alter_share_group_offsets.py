"""AlterShareGroupOffsets: v0 (KIP-932).

Sets the start offsets of an empty share group's share partitions (`kafka-share-groups
--reset-offsets --execute`): each is re-initialized at its share coordinator with the new
start offset and the next state epoch, so a leader still holding the old state is fenced and
reads the new one (engine/coordinator/share_groups.py). Records before the new start offset
are not delivered to the group; those after it are, from the start.
Errors: at the top GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (members remain), NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS; per partition UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST (a
negative offset) and the share coordinator's errors.
Authorization (as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED at the top;
READ on each topic, else TOPIC_AUTHORIZATION_FAILED on its partitions (left as they were).
"""
import uuid

import kafka.errors as Errors

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse
from engine.security import authorize
from kafka_rules.acls import READ

R = AlterShareGroupOffsetsResponse
ZERO_UUID = uuid.UUID(int=0)
Topic = R.AlterShareGroupOffsetsResponseTopic
Partition = Topic.AlterShareGroupOffsetsResponsePartition


@api(AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse, versions=(0, 0))
async def handle_alter_share_group_offsets(ctx, request: AlterShareGroupOffsetsRequest) -> R:
    offsets = {(t.topic_name, p.partition_index): p.start_offset for t in request.topics for p in t.partitions}
    try:
        authorize.require_group(ctx, READ, request.group_id)          # before the topics, as KafkaApis
        readable = authorize.authorize_topics(ctx, READ, {topic for topic, _ in offsets})
        results = await ctx.coordinator.share.alter_offsets(
            request.group_id, {tp: offset for tp, offset in offsets.items() if tp[0] in readable})
    except ApiError as exc:
        return R(throttle_time_ms=0, error_code=exc.code, error_message=exc.message, responses=[])
    image = ctx.broker.image
    refused = {tp: (Errors.TopicAuthorizationFailedError.errno, None) for tp in offsets if tp[0] not in readable}
    by_topic: dict[str, list] = {}
    for (topic, index), (code, message) in [*results.items(), *refused.items()]:
        by_topic.setdefault(topic, []).append(Partition(partition_index=index, error_code=code, error_message=message))
    return R(throttle_time_ms=0, error_code=0, error_message=None, responses=[
        Topic(topic_name=topic, topic_id=image.topics[topic].topic_id if topic in image.topics else ZERO_UUID,
              partitions=ps) for topic, ps in by_topic.items()])
