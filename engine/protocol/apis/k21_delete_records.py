"""DeleteRecords: v0-2.

Advances a partition's log start offset to the given offset (-1 means the high watermark)
and deletes the segments wholly below it. An offset above the high watermark is
OFFSET_OUT_OF_RANGE. A topic whose cleanup.policy lacks `delete` (compact only, as
__consumer_offsets) answers POLICY_VIOLATION, as Kafka's Partition.deleteRecordsOnLeader
does. The internal topics answer INVALID_TOPIC_EXCEPTION first, as Kafka's ReplicaManager does
(engine/cluster/internal_topics.py). The answer's low_watermark is the new log start offset.
Partitions are handled in slices of the event loop (engine/cluster/slices.py): a request may
name a million.
Authorization: DELETE on each topic, else TOPIC_AUTHORIZATION_FAILED (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin import DeleteRecordsRequest, DeleteRecordsResponse

from engine.cluster import internal_topics, slices
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DELETE
from engine.storage.errors import StorageError

TopicResult = DeleteRecordsResponse.DeleteRecordsTopicResult
PartitionResult = TopicResult.DeleteRecordsPartitionResult


@api(DeleteRecordsRequest, DeleteRecordsResponse, versions=(0, 2))
async def handle_delete_records(ctx, request: DeleteRecordsRequest) -> DeleteRecordsResponse:
    deletable = authorize.authorize_topics(ctx, DELETE, (t.name for t in request.topics))
    answers = iter(await slices.map_sliced(((t.name, p) for t in request.topics for p in t.partitions),
                                           lambda wanted: _delete(ctx, *wanted) if wanted[0] in deletable else
                                           _not_authorized(wanted[1])))
    topics = await slices.map_sliced(request.topics, lambda t: TopicResult(
        name=t.name, partitions=[next(answers) for _ in t.partitions]))
    return DeleteRecordsResponse(throttle_time_ms=0, topics=topics)


def _not_authorized(wanted) -> PartitionResult:
    return PartitionResult(partition_index=wanted.partition_index, low_watermark=-1,
                           error_code=Errors.TopicAuthorizationFailedError.errno)


def _delete(ctx, topic: str, wanted) -> PartitionResult:
    index = wanted.partition_index
    try:
        internal_topics.check_delete_records(topic)
        partition = ctx.broker.leader_partition(topic, index)
        if not partition.log.config.delete:
            raise ApiError(Errors.PolicyViolationError,
                           f"Records of partition {topic}-{index} can not be deleted due to the configured policy")
        offset = partition.high_watermark if wanted.offset == -1 else wanted.offset
        if offset < 0 or offset > partition.high_watermark:
            raise ApiError(Errors.OffsetOutOfRangeError,
                           f"Cannot delete records of {topic}-{index} before {offset}: the high watermark is "
                           f"{partition.high_watermark}")
        low_watermark = partition.log.delete_records_before(offset) if offset > partition.log_start_offset \
            else partition.log_start_offset
    except ApiError as exc:
        return PartitionResult(partition_index=index, low_watermark=-1, error_code=exc.code)
    except StorageError as exc:
        return PartitionResult(partition_index=index, low_watermark=-1, error_code=exc.error_code)
    return PartitionResult(partition_index=index, low_watermark=low_watermark, error_code=0)
