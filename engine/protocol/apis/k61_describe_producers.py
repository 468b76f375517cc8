"""DescribeProducers: v0 (KIP-664).

The producers a partition's replica on this broker remembers (its producer state, which
leaders and followers both build from the batches they append): id, epoch, last sequence,
last timestamp, the epoch of the coordinator that last wrote it a marker, and the first
offset of its open transaction (-1 if none). Any replica answers, as in Kafka; the admin
client asks the leader unless told a broker (`find-hanging --broker-id`). `kafka-transactions.sh
find-hanging` and `abort` read it: an open transaction the coordinator does not know
is a hanging one, and its start offset and epoch are what the abort's marker needs.

- Per-partition errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (no replica here).
- A producer forgotten after `producer.id.expiration.ms` (none with an open transaction
  is) is not listed, as in Kafka.
Authorization: READ on each topic, else TOPIC_AUTHORIZATION_FAILED (as KafkaApis).
"""
import kafka.errors as Errors
from kafka.protocol.admin import DescribeProducersRequest, DescribeProducersResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import READ

TopicResponse = DescribeProducersResponse.TopicResponse
PartitionResponse = TopicResponse.PartitionResponse
ProducerState = PartitionResponse.ProducerState


@api(DescribeProducersRequest, DescribeProducersResponse, versions=(0, 0))
async def handle_describe_producers(ctx, request: DescribeProducersRequest) -> DescribeProducersResponse:
    readable = authorize.authorize_topics(ctx, READ, (t.name for t in request.topics))
    return DescribeProducersResponse(throttle_time_ms=0, topics=[
        TopicResponse(name=t.name, partitions=[
            _describe(ctx.broker, t.name, p) if t.name in readable else
            PartitionResponse(partition_index=p, error_code=Errors.TopicAuthorizationFailedError.errno,
                              error_message=None, active_producers=[]) for p in t.partition_indexes])
        for t in request.topics])


def _describe(broker, topic: str, index: int) -> PartitionResponse:
    try:
        partition = broker.hosted_partition(topic, index)
    except ApiError as exc:
        return PartitionResponse(partition_index=index, error_code=exc.code, error_message=exc.message,
                                 active_producers=[])
    producers = [ProducerState(producer_id=e.producer_id, producer_epoch=e.epoch, last_sequence=e.last_seq,
                               last_timestamp=e.last_timestamp, coordinator_epoch=e.coordinator_epoch,
                               current_txn_start_offset=e.txn_first_offset)
                 for e in partition.log.producer_state.producers.values()]
    return PartitionResponse(partition_index=index, error_code=0, error_message=None, active_producers=producers)
