"""AddPartitionsToTxn: v0-5.

Adds partitions to a producer's transaction, starting it if none is open; the coordinator
writes the new partition set to `__transaction_state` before answering.
- v0-3: one transaction, per-partition results. v4+ (brokers, KIP-890): a batch of
  transactions, each with `verify_only`: then nothing is added, and each partition answers 0
  if it is in the producer's open transaction, else INVALID_TXN_STATE (Produce uses it).
- Per partition: UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist (the others then
  answer OPERATION_NOT_ATTEMPTED and nothing is added); otherwise the transaction's error on
  every partition: INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (v0-1: INVALID_PRODUCER_EPOCH),
  CONCURRENT_TRANSACTIONS while the previous transaction completes, NOT_COORDINATOR,
  COORDINATOR_LOAD_IN_PROGRESS.
Authorization (as KafkaApis): v0-3 need WRITE on the transactional id and on each topic;
v4+ (brokers verifying for Produce) CLUSTER_ACTION on the cluster.
Gaps: v5's TRANSACTION_ABORTABLE is never sent.
"""
import kafka.errors as Errors
from kafka.protocol.producer.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse

from engine.errors import ApiError
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import CLUSTER_ACTION, WRITE
from engine.protocol.txn_errors import for_version

R = AddPartitionsToTxnResponse
TopicResult = R.AddPartitionsToTxnTopicResult
PartitionResult = TopicResult.AddPartitionsToTxnPartitionResult


@api(AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, versions=(0, 5))
async def handle_add_partitions_to_txn(ctx, request: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse:
    if ctx.api_version <= 3:
        errors = await _add(ctx, request.v3_and_below_transactional_id, request.v3_and_below_producer_id,
                            request.v3_and_below_producer_epoch, request.v3_and_below_topics, False)
        return R(throttle_time_ms=0, error_code=0, results_by_topic_v3_and_below=_topic_results(TopicResult, errors))
    if not authorize.authorize_cluster(ctx, CLUSTER_ACTION):       # v4+ is the brokers' batched form
        return R(throttle_time_ms=0, error_code=Errors.ClusterAuthorizationFailedError.errno, results_by_transaction=[])
    results = []
    for txn in request.transactions:
        errors = await _add(ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, txn.topics,
                            txn.verify_only)
        cls = R.AddPartitionsToTxnResult.AddPartitionsToTxnTopicResult
        results.append(R.AddPartitionsToTxnResult(transactional_id=txn.transactional_id,
                                                  topic_results=_topic_results(cls, errors)))
    return R(throttle_time_ms=0, error_code=0, results_by_transaction=results)


async def _add(ctx, transactional_id: str, producer_id: int, producer_epoch: int, topics,
               verify_only: bool) -> dict[tuple[str, int], int]:
    partitions = {(t.name, p) for t in topics for p in t.partitions}
    if ctx.api_version <= 3:
        refused = _refusals(ctx, transactional_id, partitions)
        if refused:
            return refused
    unknown = {tp for tp in partitions if ctx.broker.image.partition(*tp) is None}
    if unknown:
        return {tp: Errors.UnknownTopicOrPartitionError.errno if tp in unknown
                else Errors.OperationNotAttemptedError.errno for tp in partitions}
    coordinator = ctx.broker.txn_coordinator
    try:
        if verify_only:
            return coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
        await coordinator.add_partitions(transactional_id, producer_id, producer_epoch, partitions)
        return dict.fromkeys(partitions, 0)
    except ApiError as exc:
        return dict.fromkeys(partitions, for_version(exc.code, ctx.api_version, 2))


def _refusals(ctx, transactional_id: str, partitions: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """WRITE on the transactional id, then on each topic, as KafkaApis (v0-3): refused
    partitions get TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED."""
    if not authorize.authorize_transactional_id(ctx, WRITE, transactional_id):
        return dict.fromkeys(partitions, Errors.TransactionalIdAuthorizationFailedError.errno)
    writable = authorize.authorize_topics(ctx, WRITE, {topic for topic, _ in partitions})
    if all(topic in writable for topic, _ in partitions):
        return {}
    return {tp: Errors.OperationNotAttemptedError.errno if tp[0] in writable
            else Errors.TopicAuthorizationFailedError.errno for tp in partitions}


def _topic_results(cls, errors: dict[tuple[str, int], int]) -> list:
    by_topic: dict[str, list] = {}
    for (topic, index), code in sorted(errors.items()):
        by_topic.setdefault(topic, []).append(
            cls.AddPartitionsToTxnPartitionResult(partition_index=index, partition_error_code=code))
    return [cls(name=topic, results_by_partition=results) for topic, results in by_topic.items()]
