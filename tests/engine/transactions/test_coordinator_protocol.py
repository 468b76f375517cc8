"""The transaction coordinator over the wire, request by request (raw kafka.protocol
requests against a real 3-broker engine): the state machine, fencing, errors by version,
KIP-890's verification, DescribeTransactions/ListTransactions, and `__transaction_state`
itself."""
from __future__ import annotations

import kafka.errors as Errors
import pytest
from confluent_kafka.admin import AdminClient, ConfigResource
from kafka.protocol.admin import DeleteTopicsRequest, DeleteTopicsResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.support.groups import create_topic
from tests.support.raw_client import RawClient
from tests.support.transactions import (add_partitions, coordinator_client, describe, end_txn, init_producer_id,
                                        list_transactions)
from tests.support.waiting import wait_until

TOPIC = "txn-proto"
FENCED, OLD_FENCED = Errors.ProducerFencedError.errno, Errors.InvalidProducerEpochError.errno


@pytest.fixture(scope="module")
def cluster(txn_cluster):
    create_topic(txn_cluster.bootstrap, TOPIC, 3, replication=3)
    return txn_cluster


@pytest.fixture
def coordinator(cluster, request):
    tid = "tx-" + request.node.name[:100]
    client = coordinator_client(cluster, tid)
    yield tid, client
    client.close()


def test_transaction_state_topic_is_kafkas(cluster, coordinator):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    topic = admin.list_topics(timeout=10).topics["__transaction_state"]
    assert len(topic.partitions) == 50                          # transaction.state.log.num.partitions
    assert all(len(p.replicas) == 3 for p in topic.partitions.values())
    configs = admin.describe_configs([ConfigResource("topic", "__transaction_state")])
    described = list(configs.values())[0].result()
    assert described["cleanup.policy"].value == "compact"
    client = RawClient(cluster.ports[0])
    response = client.request(DeleteTopicsRequest(topic_names=["__transaction_state"], timeout_ms=5000), 4,
                              DeleteTopicsResponse)
    client.close()
    assert response.responses[0].error_code == Errors.InvalidRequestError.errno
    assert "__transaction_state" in admin.list_topics(timeout=10).topics


def test_init_producer_id_bumps_the_epoch_and_fences_the_older_producer(coordinator):
    tid, client = coordinator
    first = init_producer_id(client, tid)
    second = init_producer_id(client, tid)
    assert first.error_code == second.error_code == 0
    assert (second.producer_id, second.producer_epoch) == (first.producer_id, first.producer_epoch + 1)
    stale = add_partitions(client, tid, first.producer_id, first.producer_epoch, [(TOPIC, 0)])
    assert stale == {(TOPIC, 0): FENCED}
    assert add_partitions(client, tid, first.producer_id, first.producer_epoch, [(TOPIC, 0)], version=1) \
        == {(TOPIC, 0): OLD_FENCED}                               # KIP-588: older clients know the old code
    assert end_txn(client, tid, first.producer_id, first.producer_epoch, True) == FENCED
    assert end_txn(client, tid, first.producer_id, first.producer_epoch, True, version=1) == OLD_FENCED
    assert add_partitions(client, tid, second.producer_id + 1000, second.producer_epoch, [(TOPIC, 0)]) \
        == {(TOPIC, 0): Errors.InvalidProducerIdMappingError.errno}


@pytest.mark.parametrize("timeout_ms", [0, 900001])
def test_transaction_timeout_beyond_the_maximum_is_refused(coordinator, timeout_ms):
    tid, client = coordinator
    response = init_producer_id(client, tid, timeout_ms=timeout_ms, retry=False)
    assert response.error_code == Errors.InvalidTransactionTimeoutError.errno


def test_end_txn_without_an_open_transaction_is_an_invalid_state(coordinator):
    tid, client = coordinator
    pid = init_producer_id(client, tid)
    assert end_txn(client, tid, pid.producer_id, pid.producer_epoch, True) == Errors.InvalidTxnStateError.errno


def test_init_producer_id_aborts_the_open_transaction_first(coordinator):
    tid, client = coordinator
    pid = init_producer_id(client, tid)
    assert add_partitions(client, tid, pid.producer_id, pid.producer_epoch, [(TOPIC, 0), (TOPIC, 1)]) \
        == {(TOPIC, 0): 0, (TOPIC, 1): 0}
    ongoing = describe(client, tid)
    assert ongoing.transaction_state == "Ongoing" and ongoing.transaction_start_time_ms > 0
    assert sorted((t.topic, p) for t in ongoing.topics for p in t.partitions) == [(TOPIC, 0), (TOPIC, 1)]
    fencing = init_producer_id(client, tid, retry=False)
    assert fencing.error_code == Errors.ConcurrentTransactionsError.errno   # the abort runs first
    again = init_producer_id(client, tid)
    assert (again.producer_id, again.producer_epoch) == (pid.producer_id, pid.producer_epoch + 2)
    assert describe(client, tid).transaction_state == "Empty"


def test_kip360_recovery_needs_the_current_epoch(coordinator):
    tid, client = coordinator
    pid = init_producer_id(client, tid)
    wrong = init_producer_id(client, tid, version=4, producer_id=pid.producer_id,
                             producer_epoch=pid.producer_epoch + 5, retry=False)
    assert wrong.error_code == FENCED
    assert init_producer_id(client, tid, version=3, producer_id=pid.producer_id, producer_epoch=pid.producer_epoch + 5,
                            retry=False).error_code == OLD_FENCED
    recovered = init_producer_id(client, tid, producer_id=pid.producer_id, producer_epoch=pid.producer_epoch)
    assert (recovered.error_code, recovered.producer_epoch) == (0, pid.producer_epoch + 1)


def test_commit_and_abort_complete_and_retries_succeed(coordinator):
    tid, client = coordinator
    pid = init_producer_id(client, tid)
    add_partitions(client, tid, pid.producer_id, pid.producer_epoch, [(TOPIC, 2)])
    assert end_txn(client, tid, pid.producer_id, pid.producer_epoch, True) == 0
    wait_until(lambda: describe(client, tid).transaction_state == "CompleteCommit", message="CompleteCommit")
    assert end_txn(client, tid, pid.producer_id, pid.producer_epoch, True) == 0        # a retry
    assert end_txn(client, tid, pid.producer_id, pid.producer_epoch, False) == Errors.InvalidTxnStateError.errno
    add_partitions(client, tid, pid.producer_id, pid.producer_epoch, [(TOPIC, 2)])
    assert end_txn(client, tid, pid.producer_id, pid.producer_epoch, False) == 0
    wait_until(lambda: describe(client, tid).transaction_state == "CompleteAbort", message="CompleteAbort")
    assert describe(client, tid).topics == []


def test_verify_only_answers_which_partitions_are_in_the_transaction(coordinator):
    tid, client = coordinator
    pid = init_producer_id(client, tid)
    add_partitions(client, tid, pid.producer_id, pid.producer_epoch, [(TOPIC, 0)])
    T = AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction
    request = AddPartitionsToTxnRequest(transactions=[T(
        transactional_id=tid, producer_id=pid.producer_id, producer_epoch=pid.producer_epoch, verify_only=True,
        topics=[T.AddPartitionsToTxnTopic(name=TOPIC, partitions=[0, 1])])])
    response = client.request(request, 4, AddPartitionsToTxnResponse)
    results = {(t.name, p.partition_index): p.partition_error_code
               for txn in response.results_by_transaction for t in txn.topic_results for p in t.results_by_partition}
    assert results == {(TOPIC, 0): 0, (TOPIC, 1): Errors.InvalidTxnStateError.errno}
    assert sorted(p for t in describe(client, tid).topics for p in t.partitions) == [0]   # nothing was added


def test_unknown_partitions_add_nothing(coordinator):
    tid, client = coordinator
    pid = init_producer_id(client, tid)
    assert add_partitions(client, tid, pid.producer_id, pid.producer_epoch, [(TOPIC, 0), (TOPIC, 99)]) == {
        (TOPIC, 0): Errors.OperationNotAttemptedError.errno, (TOPIC, 99): Errors.UnknownTopicOrPartitionError.errno}
    assert describe(client, tid).transaction_state == "Empty"


def _transactional_batch(pid: int, epoch: int, sequence: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=pid,
                                        producer_epoch=epoch, base_sequence=sequence, batch_size=1 << 20)
    builder.append(0, timestamp=None, key=b"k", value=b"v", headers=[])
    return bytes(builder.build())


def _produce(cluster, tid: str, partition: int, batch: bytes) -> int:
    leader = AdminClient({"bootstrap.servers": cluster.bootstrap}).list_topics(timeout=10).topics[TOPIC] \
        .partitions[partition].leader
    client = RawClient(cluster.ports[leader])
    P = ProduceRequest.TopicProduceData
    response = client.request(ProduceRequest(transactional_id=tid, acks=-1, timeout_ms=10000, topic_data=[
        P(name=TOPIC, partition_data=[P.PartitionProduceData(index=partition, records=batch)])]), 9, ProduceResponse)
    client.close()
    return response.responses[0].partition_responses[0].error_code


def test_kip890_a_produce_to_a_partition_outside_the_transaction_is_refused(cluster, coordinator):
    tid, client = coordinator
    pid = init_producer_id(client, tid)
    batch = _transactional_batch(pid.producer_id, pid.producer_epoch)
    assert _produce(cluster, tid, 1, batch) == Errors.InvalidTxnStateError.errno     # never added
    add_partitions(client, tid, pid.producer_id, pid.producer_epoch, [(TOPIC, 1)])
    assert _produce(cluster, tid, 1, batch) == 0
    assert end_txn(client, tid, pid.producer_id, pid.producer_epoch, False) == 0
    wait_until(lambda: describe(client, tid).transaction_state == "CompleteAbort", message="CompleteAbort")
    # A late retry after the transaction ended would open a hanging transaction: refused.
    assert _produce(cluster, tid, 1, _transactional_batch(pid.producer_id, pid.producer_epoch, 1)) \
        == Errors.InvalidTxnStateError.errno


def test_describe_and_list_transactions(cluster, coordinator):
    tid, client = coordinator
    pid = init_producer_id(client, tid, timeout_ms=45000)
    add_partitions(client, tid, pid.producer_id, pid.producer_epoch, [(TOPIC, 0)])
    described = describe(client, tid)
    assert (described.error_code, described.transaction_state, described.transaction_timeout_ms,
            described.producer_id, described.producer_epoch) == (0, "Ongoing", 45000, pid.producer_id,
                                                                  pid.producer_epoch)
    assert describe(client, "no-such-id-here").error_code in (Errors.TransactionalIdNotFoundError.errno,
                                                               Errors.NotCoordinatorError.errno)

    def listed(**filters) -> set[str]:
        found = set()
        for port in cluster.ports:
            response = list_transactions(port, **filters)
            assert response.error_code == 0
            found |= {t.transactional_id for t in response.transaction_states}
        return found
    assert tid in listed(states=["Ongoing"]) and tid not in listed(states=["Empty"])
    assert listed(producer_ids=[pid.producer_id]) == {tid}
    assert listed(pattern=tid.replace("[", r"\[").replace("]", r"\]")) == {tid}
    assert tid not in listed(duration_ms=3_600_000)
    unknown = list_transactions(cluster.ports[0], states=["Ongoing", "Bogus"])
    assert unknown.unknown_state_filters == ["Bogus"]
    assert list_transactions(cluster.ports[0], pattern="(").error_code == Errors.InvalidRequestError.errno
    # RE2: a backreference is refused, and a pattern that backtracks exponentially in Python's re
    # (minutes against this test's 38-character id) is answered at once.
    assert list_transactions(cluster.ports[0], pattern=r"(a)\1").error_code == Errors.InvalidRequestError.errno
    assert tid not in listed(pattern="([a-z_-]|[a-z_-]{2}|[a-z_-]{3})+Z")
    end_txn(client, tid, pid.producer_id, pid.producer_epoch, False)
