"""ListOffsets: v1-10.

Timestamps: -2 earliest (log start offset), -1 latest (high watermark; read_committed,
isolation_level 1, gets the last stable offset: the first offset of a transaction still
open), -3 the record
with the largest timestamp (KIP-734, v7+), -4 earliest local (v8+, no tiering: log start),
-5 latest tiered (v9+, KIP-1005: nothing is tiered, so -1/-1, as Kafka answers without
remote storage); any other value finds the first record whose timestamp is at or after it
(-1/-1 if none; searches stop at the offset "latest" answers, as Kafka's). Other negative
values are INVALID_REQUEST.
Leader epochs are fenced as in Fetch (KIP-320). A request naming many partitions is answered
in slices of the event loop (engine/cluster/slices.py).
Authorization: DESCRIBE on each topic, else TOPIC_AUTHORIZATION_FAILED (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse

from engine.cluster import slices
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE
from engine.storage.errors import StorageError

TopicResponse = ListOffsetsResponse.ListOffsetsTopicResponse
PartitionResponse = TopicResponse.ListOffsetsPartitionResponse
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5


@api(ListOffsetsRequest, ListOffsetsResponse, versions=(1, 10))
async def handle_list_offsets(ctx, request: ListOffsetsRequest) -> ListOffsetsResponse:
    committed = request.isolation_level == 1
    described = authorize.authorize_topics(ctx, DESCRIBE, (t.name for t in request.topics))
    # Partition by partition, then topic by topic, in slices of the event loop: a request may
    # name a million of either.
    answers = iter(await slices.map_sliced(
        ((t.name, p) for t in request.topics for p in t.partitions),
        lambda wanted: _lookup(ctx, wanted[0], wanted[1], committed) if wanted[0] in described
        else _answer(wanted[1].partition_index, Errors.TopicAuthorizationFailedError.errno)))
    topics = await slices.map_sliced(request.topics, lambda t: TopicResponse(
        name=t.name, partitions=[next(answers) for _ in t.partitions]))
    return ListOffsetsResponse(throttle_time_ms=0, topics=topics)


def _lookup(ctx, topic: str, wanted, read_committed: bool) -> PartitionResponse:
    try:
        partition = ctx.broker.leader_partition(topic, wanted.partition_index)
        partition.check_leader_epoch(wanted.current_leader_epoch)
        offset, timestamp = _offset_for(partition, wanted.timestamp, read_committed)
    except ApiError as exc:
        return _answer(wanted.partition_index, exc.code)
    except StorageError as exc:
        return _answer(wanted.partition_index, exc.error_code)
    return _answer(wanted.partition_index, 0, timestamp, offset, partition.leader_epoch)


def _offset_for(partition, timestamp: int, read_committed: bool = False) -> tuple[int, int]:
    latest = partition.last_stable_offset if read_committed else partition.high_watermark
    if timestamp == LATEST:
        return latest, -1
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return partition.log_start_offset, -1
    if timestamp == LATEST_TIERED:
        return -1, -1
    if timestamp == MAX_TIMESTAMP:
        found = partition.log.max_timestamp_and_offset()
    elif timestamp >= 0:
        found = partition.log.offset_for_timestamp(timestamp)
    else:
        raise ApiError(Errors.InvalidRequestError, f"Unsupported timestamp {timestamp}")
    if found is None or found[0] >= latest:
        return -1, -1
    offset, found_timestamp = found
    return offset, found_timestamp


def _answer(index: int, error: int, timestamp: int = -1, offset: int = -1, epoch: int = -1) -> PartitionResponse:
    return PartitionResponse(partition_index=index, error_code=error, old_style_offsets=[], timestamp=timestamp,
                             offset=offset, leader_epoch=epoch)
