"""Produce: v3-12.

- Batches are validated (magic 2, length, CRC-32C, `max.message.bytes`) and stored as
  received: the broker only sets baseOffset and partitionLeaderEpoch (and rewrites the
  timestamps under `message.timestamp.type=LogAppendTime`). Compressed batches are never
  decompressed.
- acks 0, 1 and -1; acks=0 sends no response at all. Any other value: INVALID_REQUIRED_ACKS.
- acks=-1 checks `min.insync.replicas` against the ISR first (NOT_ENOUGH_REPLICAS).
- Idempotent producers: a duplicate of one of a producer's last five batches is acknowledged
  with its original offset and not appended again; a sequence gap is
  OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch is INVALID_PRODUCER_EPOCH.
- Per-partition errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, CORRUPT_MESSAGE,
  MESSAGE_TOO_LARGE.
Gaps: transactions are not supported (a transactional_id is refused with
TRANSACTIONAL_ID_AUTHORIZATION_FAILED); no followers yet, so acks=-1 waits for the leader only.
"""
import logging

import kafka.errors as Errors
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from engine.broker.broker import now_ms
from engine.errors import ApiError
from engine.protocol.registry import api
from engine.storage.errors import StorageError

log = logging.getLogger(__name__)
TopicResponse = ProduceResponse.TopicProduceResponse
PartitionResponse = TopicResponse.PartitionProduceResponse


@api(ProduceRequest, ProduceResponse, versions=(3, 12))
async def handle_produce(ctx, request: ProduceRequest):
    if request.acks not in (-1, 0, 1):
        error = Errors.InvalidRequiredAcksError.errno
        return _response([(t.name, [(p.index, _error(p.index, error)) for p in t.partition_data])
                          for t in request.topic_data])
    results = []
    for topic in request.topic_data:
        partitions = []
        for data in topic.partition_data:
            partitions.append((data.index, _append(ctx, request, topic.name, data.index, data.records)))
        results.append((topic.name, partitions))
    if request.acks == 0:
        return None
    return _response(results)


def _append(ctx, request, topic: str, index: int, records) -> PartitionResponse:
    if request.transactional_id is not None:
        return _error(index, Errors.TransactionalIdAuthorizationFailedError.errno, "Transactions are not supported")
    try:
        partition = ctx.broker.leader_partition(topic, index)
        if request.acks == -1:
            _check_min_insync(ctx.broker, topic, index)
        if not records:
            raise ApiError(Errors.CorruptRecordError, "Produce request carried no record batch")
        info = partition.append(bytearray(records), now_ms())
    except ApiError as exc:
        return _error(index, exc.code, exc.message)
    except StorageError as exc:
        return _error(index, exc.error_code, str(exc))
    return PartitionResponse(index=index, error_code=0, base_offset=info.first_offset,
                             log_append_time_ms=info.log_append_time, log_start_offset=info.log_start_offset,
                             record_errors=[], error_message=None)


def _check_min_insync(broker, topic: str, index: int) -> None:
    state = broker.image.topics[topic]
    min_isr = state.configs.get("min.insync.replicas", broker.config.topic_default("min.insync.replicas")[0])
    isr = state.partitions[index].isr
    if len(isr) < min_isr:
        raise ApiError(Errors.NotEnoughReplicasError,
                       f"The size of the current ISR {isr} is insufficient to satisfy the min.isr "
                       f"requirement of {min_isr} for partition {topic}-{index}")


def _error(index: int, code: int, message: str | None = None) -> PartitionResponse:
    return PartitionResponse(index=index, error_code=code, base_offset=-1, log_append_time_ms=-1,
                             log_start_offset=-1, record_errors=[], error_message=message)


def _response(results) -> ProduceResponse:
    topics = [TopicResponse(name=name, partition_responses=[r for _, r in partitions])
              for name, partitions in results]
    return ProduceResponse(responses=topics, throttle_time_ms=0)
