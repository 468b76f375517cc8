"""Produce: v3-12.

- Each partition's data is exactly one batch of magic 2 (INVALID_RECORD otherwise; zstd
  needs v7+, UNSUPPORTED_COMPRESSION_TYPE), as Kafka's ProduceRequest.validateRecords
  (engine/protocol/produce_request.py): an answer names one offset per partition, so a
  second batch could only be acknowledged with the first, appended or not.
- Batches are validated (magic 2, length, CRC-32C, `max.message.bytes`, and the records
  against the header: count, offset deltas, lengths; a lie is INVALID_RECORD) and stored as received: the broker only sets baseOffset and
  partitionLeaderEpoch (and rewrites the timestamps under `message.timestamp.type=LogAppendTime`).
  Compressed batches are inflated as a bounded stream to be checked (32 x max.message.bytes
  at most, else INVALID_RECORD; unreadable data is CORRUPT_MESSAGE), never recompressed; that
  check runs on a worker thread (engine/broker/record_checks.py), appends stay in order per partition.
- acks 0, 1 and -1; acks=0 sends no response at all, and when a partition failed the connection
  is closed instead, as Kafka does, so that the client refreshes its metadata (a moved leader,
  say). Any other value: INVALID_REQUIRED_ACKS.
- acks=-1 first checks `min.insync.replicas` against the ISR (NOT_ENOUGH_REPLICAS), then
  waits until the high watermark covers the batch, i.e. every ISR member has it, bounded by
  the request's timeout_ms (REQUEST_TIMED_OUT). If the ISR shrank below the minimum
  meanwhile, the answer is NOT_ENOUGH_REPLICAS_AFTER_APPEND; if leadership moved,
  NOT_LEADER_OR_FOLLOWER (the record may or may not survive: the client retries).
- Idempotent producers: a duplicate of one of a producer's last five batches is acknowledged
  with its original offset and not appended again; a sequence gap is
  OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch is INVALID_PRODUCER_EPOCH (as Kafka's
  ProducerStateManager since 2.7, KIP-588: PRODUCER_FENCED comes from the coordinator's APIs).
- Transactional batches need the request's transactional_id, else the whole request is
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED (Kafka's answer), and must all be one producer's at
  one epoch, else INVALID_PRODUCER_ID_MAPPING. Their batches are appended like any
  other; the first transactional batch of a producer opens its transaction in the
  partition (the last stable offset stops there until the COMMIT/ABORT marker); a
  non-transactional batch of a producer with an open transaction is INVALID_TXN_STATE.
- Internal topics (`__consumer_offsets`, `__transaction_state`) are written only by their
  coordinators: a client's produce there is INVALID_TOPIC_EXCEPTION on every broker, as in
  Kafka's ReplicaManager, so no client can put records there that the loaders cannot read.
- Per-partition errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, CORRUPT_MESSAGE,
  MESSAGE_TOO_LARGE, KAFKA_STORAGE_ERROR (an I/O failure of the log dir), INVALID_RECORD
  (with `record_errors` naming each keyless record of a compacted topic, as Kafka's LogValidator),
  INVALID_TIMESTAMP (with `record_errors` naming each CreateTime record outside the topic's
  message.timestamp.before/after.max.ms of the broker's clock).
- KIP-890 part 1 (engine/coordinator/transactions/verification.py): a transactional batch for a
  partition where the producer has no open transaction yet is appended only if the
  transaction's coordinator has the partition in that transaction, else INVALID_TXN_STATE
  (INVALID_PRODUCER_EPOCH for a fenced producer; NOT_ENOUGH_REPLICAS, which clients retry,
  while the coordinator cannot answer). The log checks it on every batch, with a guard that
  a marker written meanwhile voids (Kafka's VerificationGuard). `transaction.partition.verification.enable=false`
  turns the check off, as on Kafka.
- Client quotas (KIP-13, KIP-219): the request's record bytes count against the client's
  `producer_byte_rate`; over it, the records are still appended, the answer carries
  `throttle_time_ms`, and the connection reads nothing more for that long
  (engine/protocol/byte_rate_throttle.py). Kafka counts the whole request's size; this
  engine counts its record batches (the bulk of it).
- Partitions are appended in slices of the event loop (engine/cluster/slices.py): a request
  may name a hundred thousand. A connection's requests are still handled one at a time.
- Authorization (with an authorizer, as KafkaApis): a transactional producer needs WRITE on
  its transactional id, else every partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED; each
  topic needs WRITE, else its partitions are TOPIC_AUTHORIZATION_FAILED (before anything else).
"""
import asyncio
import logging

import kafka.errors as Errors
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from engine.broker import record_checks
from engine.cluster import slices
from engine.coordinator.transactions.verification import NOT_TRANSACTIONAL, verify_produce
from engine.cluster.topics import INTERNAL_TOPICS
from engine.broker.min_insync import check_min_insync
from engine.errors import ApiError
from engine.protocol.byte_rate_throttle import throttle_produce
from engine.protocol.dispatch import SilentClose
from engine.protocol.produce_request import RequestRefused, partition_data_error, transactional_producer
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import WRITE
from engine.storage.errors import StorageError

log = logging.getLogger(__name__)
TopicResponse = ProduceResponse.TopicProduceResponse
PartitionResponse = TopicResponse.PartitionProduceResponse
RecordError = PartitionResponse.BatchIndexAndErrorMessage


@api(ProduceRequest, ProduceResponse, versions=(3, 12))
async def handle_produce(ctx, request: ProduceRequest):
    if request.acks not in (-1, 0, 1):
        error = Errors.InvalidRequiredAcksError.errno
        return _response([(t.name, [_error(p.index, error) for p in t.partition_data]) for t in request.topic_data])
    if request.transactional_id is not None and not authorize.authorize_transactional_id(
            ctx, WRITE, request.transactional_id):
        error = Errors.TransactionalIdAuthorizationFailedError.errno
        return _answer(request, [(t.name, [_error(p.index, error) for p in t.partition_data])
                                 for t in request.topic_data])
    writable = authorize.authorize_topics(ctx, WRITE, (t.name for t in request.topic_data))
    try:
        producer = transactional_producer(request)
    except RequestRefused as refused:
        return _answer(request, [(t.name, [_error(p.index, refused.error.errno, refused.message)
                                           for p in t.partition_data]) for t in request.topic_data])
    verdict = await verify_produce(ctx.broker, request, producer, topics=writable) \
        if producer is not None else NOT_TRANSACTIONAL
    results, waits = [], []
    with slices.Pacer() as pacer:     # a request may name a hundred thousand partitions
        for topic in request.topic_data:
            partitions = []
            for data in topic.partition_data:
                if topic.name not in writable:
                    partitions.append(_error(data.index, Errors.TopicAuthorizationFailedError.errno))
                else:
                    partitions.append(await _append_data(ctx, request, topic.name, data, verdict, waits))
                await pacer.tick()
            results.append((topic.name, partitions))
    # KIP-13/219: counted once the records are in; acks=0 gets no answer but its channel is muted.
    throttle_ms = throttle_produce(ctx, sum(len(data.records or b"") for topic in request.topic_data
                                            for data in topic.partition_data))
    if request.acks == 0:
        return _answer(request, results)
    if waits:
        await _wait_for_replication(ctx, waits, request.timeout_ms)
    return _response(results, throttle_ms)


def _answer(request, results, throttle_ms: int = 0):
    """The response; for acks=0 none, or the connection closed if a partition failed."""
    if request.acks != 0:
        return _response(results, throttle_ms)
    codes = [p.error_code for _, partitions in results for p in partitions]
    return SilentClose(codes) if any(codes) else None


async def _append_data(ctx, request, topic: str, data, verdict, waits: list) -> PartitionResponse:
    """One partition's data: refused, or appended (and, under acks=all, added to `waits`)."""
    refused = partition_data_error(ctx.api_version, data.records) or verdict.refused.get((topic, data.index))
    if refused is not None:
        return _error(data.index, *refused)
    answer, partition, required_offset = await _append(ctx, request, topic, data.index, data.records,
                                                       verdict.for_append((topic, data.index)))
    if request.acks == -1 and partition is not None:
        waits.append((answer, partition, required_offset))
    return answer


async def _append(ctx, request, topic: str, index: int, records, verification):
    if topic in INTERNAL_TOPICS:
        return _error(index, Errors.InvalidTopicError.errno, f"Cannot append to internal topic {topic}"), None, -1
    try:
        partition = ctx.broker.leader_partition(topic, index)
        if request.acks == -1:
            check_min_insync(ctx.broker, partition, Errors.NotEnoughReplicasError)
        info = await record_checks.append(partition, bytearray(records), verification=verification,
                                          current=lambda: ctx.broker.partitions.get((topic, index)) is partition)
    except ApiError as exc:
        return _error(index, exc.code, exc.message), None, -1
    except StorageError as exc:
        answer = _error(index, exc.error_code, str(exc))
        answer.record_errors = [RecordError(batch_index=i, batch_index_error_message=message)
                                for i, message in getattr(exc, "record_errors", ())]
        return answer, None, -1
    except OSError as exc:  # the log dir failed (e.g. rolling a segment on a full disk)
        return _error(index, Errors.KafkaStorageError.errno, str(exc)), None, -1
    ctx.broker.metrics.produced(topic, info.last_offset - info.first_offset + 1, len(records))
    answer = PartitionResponse(index=index, error_code=0, base_offset=info.first_offset,
                               log_append_time_ms=info.log_append_time, log_start_offset=info.log_start_offset,
                               record_errors=[], error_message=None)
    return answer, partition, info.last_offset + 1


async def _wait_for_replication(ctx, waits, timeout_ms: int) -> None:
    """Hold the response until every acks=all batch is below its partition's high watermark."""
    futures = [partition.wait_for_high_watermark(required) for _, partition, required in waits]
    _, pending = await asyncio.wait(futures, timeout=max(timeout_ms, 0) / 1000)
    for (answer, partition, _), future in zip(waits, futures):
        if future in pending:
            future.cancel()
            _fail(answer, Errors.RequestTimedOutError, "Timed out waiting for the in-sync replicas")
        elif future.result() is False:
            _fail(answer, Errors.NotLeaderForPartitionError, "Leadership moved before the batch was replicated")
        else:
            try:
                check_min_insync(ctx.broker, partition, Errors.NotEnoughReplicasAfterAppendError)
            except ApiError as exc:
                _fail(answer, exc.error, exc.message)


def _fail(answer: PartitionResponse, error, message: str) -> None:
    answer.error_code = error.errno
    answer.error_message = message
    answer.base_offset = -1


def _error(index: int, code: int, message: str | None = None) -> PartitionResponse:
    return PartitionResponse(index=index, error_code=code, base_offset=-1, log_append_time_ms=-1,
                             log_start_offset=-1, record_errors=[], error_message=message)


def _response(results, throttle_ms: int = 0) -> ProduceResponse:
    topics = [TopicResponse(name=name, partition_responses=partitions) for name, partitions in results]
    return ProduceResponse(responses=topics, throttle_time_ms=throttle_ms)
