"""KIP-890 part 1: a transactional produce to a partition must belong to the producer's open
transaction, as its coordinator knows it, or the batch is refused with INVALID_TXN_STATE.

Without this check a late batch (a retry that arrives after its transaction ended) would
open a transaction on the partition that no coordinator will ever end: a hanging
transaction, which pins the last stable offset. The partition's own producer state answers
for batches after the first (an open transaction of the producer there means the
coordinator added it); only the first batch of each transaction on each partition asks the
coordinator, with AddPartitionsToTxn's verify-only form (in process when this broker is the
coordinator).
"""
from __future__ import annotations

import kafka.errors as Errors
from kafka.protocol.producer.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse

from engine.cluster.topics import INTERNAL_TOPICS
from engine.errors import ApiError
from engine.storage.records import HEADER_SIZE, read_header

TopicPartition = tuple[str, int]
VERIFY_VERSION = 4
VERIFY_TIMEOUT_S = 10.0
TXN = AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction
# Answered to the producer as NOT_ENOUGH_REPLICAS, which clients retry (Kafka does the same).
RETRIABLE = {Errors.NotCoordinatorError.errno, Errors.CoordinatorNotAvailableError.errno,
             Errors.CoordinatorLoadInProgressError.errno, Errors.ConcurrentTransactionsError.errno,
             Errors.NotLeaderForPartitionError.errno, Errors.RequestTimedOutError.errno}


async def unverified_partitions(broker, request) -> dict[TopicPartition, tuple[int, str]]:
    """(error code, message) for each partition of a transactional Produce that its
    transaction's coordinator does not know as part of the producer's open transaction.
    Nothing with `transaction.partition.verification.enable=false` (Kafka's switch)."""
    if not broker.config.get("transaction.partition.verification.enable"):
        return {}
    needed: dict[TopicPartition, object] = {}
    for topic in request.topic_data:
        for data in topic.partition_data:
            if topic.name in INTERNAL_TOPICS or not data.records or len(data.records) < HEADER_SIZE:
                continue
            header = read_header(bytes(data.records[:HEADER_SIZE]))
            partition = broker.partitions.get((topic.name, data.index))
            if not header.is_transactional or partition is None or not partition.is_leader:
                continue   # not transactional, or the append answers NOT_LEADER / UNKNOWN itself
            ongoing = getattr(partition, "ongoing_transaction_first_offset", None)
            if ongoing is not None and ongoing(header.producer_id) is not None:
                continue
            needed[(topic.name, data.index)] = header
    if not needed:
        return {}
    header = next(iter(needed.values()))
    codes = await verify(broker, request.transactional_id, header.producer_id, header.producer_epoch, set(needed))
    return {tp: _for_produce(code) for tp, code in codes.items() if code != 0}


async def verify(broker, transactional_id: str, producer_id: int, producer_epoch: int,
                 partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
    coordinator = broker.txn_coordinator
    node_id = coordinator.coordinator_for(transactional_id)
    if node_id is None:
        return dict.fromkeys(partitions, Errors.CoordinatorNotAvailableError.errno)
    try:
        if node_id == broker.node_id:
            return coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
        return await _verify_remotely(coordinator.channel, node_id, transactional_id, producer_id,
                                      producer_epoch, partitions)
    except ApiError as exc:
        return dict.fromkeys(partitions, exc.code)


async def _verify_remotely(channel, node_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
                           partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(partitions):
        by_topic.setdefault(topic, []).append(index)
    request = AddPartitionsToTxnRequest(transactions=[TXN(
        transactional_id=transactional_id, producer_id=producer_id, producer_epoch=producer_epoch, verify_only=True,
        topics=[TXN.AddPartitionsToTxnTopic(name=t, partitions=p) for t, p in by_topic.items()])])
    response = await channel.request(node_id, request, VERIFY_VERSION, AddPartitionsToTxnResponse,
                                     timeout_s=VERIFY_TIMEOUT_S, unreachable=Errors.CoordinatorNotAvailableError)
    if response.error_code:
        return dict.fromkeys(partitions, response.error_code)
    found = {(t.name, p.partition_index): p.partition_error_code
             for txn in response.results_by_transaction for t in txn.topic_results for p in t.results_by_partition}
    return {tp: found.get(tp, Errors.InvalidTxnStateError.errno) for tp in partitions}


async def check_offsets_partition(broker, transactional_id: str, producer_id: int, producer_epoch: int,
                                  partition) -> None:
    """TxnOffsetCommit's KIP-890 check: the group's `__consumer_offsets` partition must be in the
    producer's open transaction (AddOffsetsToTxn), else INVALID_TXN_STATE; a coordinator that
    cannot answer yet is COORDINATOR_NOT_AVAILABLE (the client retries). Raises ApiError."""
    if not broker.config.get("transaction.partition.verification.enable") \
            or partition.ongoing_transaction_first_offset(producer_id) is not None:
        return
    tp = (partition.topic, partition.index)
    code = (await verify(broker, transactional_id, producer_id, producer_epoch, {tp}))[tp]
    if code in RETRIABLE:
        raise ApiError(Errors.CoordinatorNotAvailableError, "The transaction coordinator could not verify it yet")
    if code == Errors.InvalidTxnStateError.errno:
        raise ApiError(Errors.InvalidTxnStateError, "The group's offsets partition is not part of the producer's "
                                                    "open transaction (AddOffsetsToTxn first; KIP-890)")
    if code:
        raise ApiError(Errors.for_code(code))


def _for_produce(code: int) -> tuple[int, str]:
    if code in RETRIABLE:
        return Errors.NotEnoughReplicasError.errno, "The transaction coordinator could not verify the partition yet"
    if code == Errors.ProducerFencedError.errno:
        return Errors.InvalidProducerEpochError.errno, "The producer's epoch is older than its transaction's"
    if code == Errors.InvalidTxnStateError.errno:
        return code, "The partition is not part of the producer's open transaction (KIP-890)"
    return code, "The transaction coordinator refused the partition"
