"""DeleteShareGroupOffsets: v0 (KIP-932).

Deletes an empty share group's state on topics (`kafka-share-groups --delete-offsets`): each
share partition's state at its share coordinator, and the topic from the group's record of
initialized partitions. Consumption of the topic by the group later starts afresh from
`share.auto.offset.reset`.
Errors: at the top GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS; per topic UNKNOWN_TOPIC_OR_PARTITION (the group has no state on
it); per partition the share coordinator's errors.
Authorization (as KafkaApis): DELETE on the group, else GROUP_AUTHORIZATION_FAILED at the
top; READ on each topic, else TOPIC_AUTHORIZATION_FAILED for the topic (its state is kept).
"""
import uuid

import kafka.errors as Errors

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.protocol.specs import DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse
from engine.security import authorize
from kafka_rules.acls import DELETE, READ

R = DeleteShareGroupOffsetsResponse
ZERO_UUID = uuid.UUID(int=0)
Topic = R.DeleteShareGroupOffsetsResponseTopic
Partition = Topic.DeleteShareGroupOffsetsResponsePartition


@api(DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse, versions=(0, 0))
async def handle_delete_share_group_offsets(ctx, request: DeleteShareGroupOffsetsRequest) -> R:
    names = [t.topic_name for t in request.topics]
    try:
        authorize.require_group(ctx, DELETE, request.group_id)        # before the topics, as KafkaApis
        readable = authorize.authorize_topics(ctx, READ, names)
        results = await ctx.coordinator.share.delete_offsets(request.group_id, [n for n in names if n in readable])
    except ApiError as exc:
        return R(throttle_time_ms=0, error_code=exc.code, error_message=exc.message, responses=[])
    image = ctx.broker.image
    results.update({name: (Errors.TopicAuthorizationFailedError.errno, None, {}) for name in names
                    if name not in readable})
    topics = []
    for topic, (code, message, partitions) in results.items():
        topic_id = image.topics[topic].topic_id if topic in image.topics else ZERO_UUID
        rows = [Partition(partition_index=p, error_code=c, error_message=None) for p, c in sorted(partitions.items())]
        if code:
            rows = [Partition(partition_index=-1, error_code=code, error_message=message)]
        topics.append(Topic(topic_name=topic, topic_id=topic_id, partitions=rows))
    return R(throttle_time_ms=0, error_code=0, error_message=None, responses=topics)
