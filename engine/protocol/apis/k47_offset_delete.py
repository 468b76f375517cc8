"""OffsetDelete: v0.

Deletes a group's committed offsets for some partitions (tombstones in
`__consumer_offsets`), as long as no member of the group subscribes to their topic
(GROUP_SUBSCRIBED_TO_TOPIC per partition). Top-level errors: GROUP_ID_NOT_FOUND,
NON_EMPTY_GROUP (a non-consumer group with members), NOT_COORDINATOR. Partitions that do
not exist get UNKNOWN_TOPIC_OR_PARTITION.
Authorization (as KafkaApis): DELETE on the group (GROUP_AUTHORIZATION_FAILED), READ on each
topic (TOPIC_AUTHORIZATION_FAILED).
"""
import kafka.errors as Errors
from kafka.protocol.consumer import OffsetDeleteRequest, OffsetDeleteResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DELETE, READ

TopicResponse = OffsetDeleteResponse.OffsetDeleteResponseTopic
PartitionResponse = TopicResponse.OffsetDeleteResponsePartition


@api(OffsetDeleteRequest, OffsetDeleteResponse, versions=(0, 0))
async def handle_offset_delete(ctx, request: OffsetDeleteRequest) -> OffsetDeleteResponse:
    image = ctx.broker.image
    requested = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    if not authorize.authorize_group(ctx, DELETE, request.group_id):
        return OffsetDeleteResponse(error_code=Errors.GroupAuthorizationFailedError.errno, throttle_time_ms=0,
                                    topics=[])
    readable = authorize.authorize_topics(ctx, READ, (t.name for t in request.topics))
    errors = {tp: Errors.TopicAuthorizationFailedError.errno for tp in requested if tp[0] not in readable}
    errors.update({tp: Errors.UnknownTopicOrPartitionError.errno for tp in requested
                   if tp not in errors and image.partition(*tp) is None})
    try:
        errors.update(await ctx.coordinator.delete_offsets(
            request.group_id, [tp for tp in requested if tp not in errors]))
    except ApiError as exc:
        return OffsetDeleteResponse(error_code=exc.code, throttle_time_ms=0, topics=[])
    return OffsetDeleteResponse(error_code=0, throttle_time_ms=0, topics=[
        TopicResponse(name=t.name, partitions=[
            PartitionResponse(partition_index=p.partition_index, error_code=errors[(t.name, p.partition_index)])
            for p in t.partitions])
        for t in request.topics])
