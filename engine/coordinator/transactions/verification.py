"""KIP-890 part 1: a transactional produce to a partition must belong to the producer's open
transaction, as its coordinator knows it, or the batch is refused with INVALID_TXN_STATE.

Without this check a late batch (a retry that arrives after its transaction ended), or a
client's made-up one, would open a transaction on the partition that no coordinator will
ever end: a hanging transaction, which pins the last stable offset. The partition's own
producer state answers for batches after the first (an open transaction of the producer
there means the coordinator added it); only the first batch of each transaction on each
partition asks the coordinator, with AddPartitionsToTxn's verify-only form (in process when
this broker is the coordinator), and the log takes it only with the guard that verification
came with (engine/storage/log_transactions.py checks every batch).
"""
from __future__ import annotations

import kafka.errors as Errors
from kafka.protocol.producer.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse

from engine.clock import now_ms
from engine.cluster.topics import INTERNAL_TOPICS
from engine.errors import ApiError
from engine.storage.errors import CorruptRecordError
from engine.storage.producer_state import TxnVerification
from engine.storage.records import iter_batches

TopicPartition = tuple[str, int]
VERIFY_VERSION = 4
VERIFY_TIMEOUT_S = 10.0
TXN = AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction
# Answered to the producer as NOT_ENOUGH_REPLICAS, which clients retry (Kafka does the same).
RETRIABLE = {Errors.NotCoordinatorError.errno, Errors.CoordinatorNotAvailableError.errno,
             Errors.CoordinatorLoadInProgressError.errno, Errors.ConcurrentTransactionsError.errno,
             Errors.NotLeaderForPartitionError.errno, Errors.RequestTimedOutError.errno}


class ProduceVerification:
    """The KIP-890 verdict on each partition of one transactional Produce: refused ones with
    (error code, message), and what the others' appends carry (`for_append`)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.refused: dict[TopicPartition, tuple[int, str]] = {}
        self.guards: dict[TopicPartition, object] = {}

    def for_append(self, tp: TopicPartition) -> TxnVerification | None:
        """None with verification off; else the guard of a partition the coordinator confirmed
        (none for one where the producer's transaction was open already: the log checks it is still)."""
        return TxnVerification(self.guards.get(tp)) if self.enabled else None


NOT_TRANSACTIONAL = ProduceVerification(enabled=False)   # a Produce without transactional batches


async def verify_produce(broker, request, producer: tuple[int, int], topics=None) -> ProduceVerification:
    """Ask the transaction's coordinator about every partition of a transactional Produce whose
    batches would open the producer's transaction there. `producer`: the (producer id, epoch)
    of the request's transactional batches, one for the whole request (the caller checked).
    Each such partition first takes a guard from its log (ProducerStateManager.start_verification),
    so a marker written while the coordinator answers voids the confirmation. `topics`, when
    given: the only topics to verify (the others are refused before any append, e.g. unauthorized)."""
    verdict = ProduceVerification(bool(broker.config.get("transaction.partition.verification.enable")))
    if not verdict.enabled:
        return verdict
    producer_id, producer_epoch = producer
    for topic in request.topic_data:
        for data in topic.partition_data:
            partition = broker.partitions.get((topic.name, data.index))
            if topic.name in INTERNAL_TOPICS or (topics is not None and topic.name not in topics) \
                    or partition is None or not partition.is_leader \
                    or not _has_transactional_batch(data.records):
                continue   # the append answers INVALID_TOPIC / NOT_LEADER / UNKNOWN, or has nothing to verify
            guard = partition.log.producer_state.start_verification(producer_id, now_ms())
            if guard is not None:
                verdict.guards[(topic.name, data.index)] = guard
    if verdict.guards:
        codes = await verify(broker, request.transactional_id, producer_id, producer_epoch, set(verdict.guards))
        for tp, code in codes.items():
            if code != 0:
                verdict.refused[tp] = _for_produce(code)
                del verdict.guards[tp]
    return verdict


def _has_transactional_batch(records) -> bool:
    try:
        return any(header.is_transactional for _, header in iter_batches(records or b""))
    except CorruptRecordError:
        return False   # the append refuses the partition's data


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
