"""What a Produce request must hold before anything is appended: one batch per partition, and
transactional batches only under the request's transactional id, from one producer, in a
transaction its coordinator knows. A refused request leaves no record and no open
transaction behind (the last stable offset keeps up with the high watermark)."""
from __future__ import annotations

import time

import kafka.errors as Errors
import pytest
from kafka.admin import NewTopic
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.engine.protocol.test_bad_input import build_batch
from tests.engine.protocol.test_produce_fetch import idempotent_batch
from tests.support.raw_client import RawClient
from tests.support.transactions import add_partitions, coordinator_client, init_producer_id
from tests.support.txn_wire import latest_offset, leader_port, new_producer_id, txn_batch

P = ProduceRequest.TopicProduceData


@pytest.fixture
def one_leader(admin, engine_cluster, topic_name):
    """A topic of two partitions led by broker 0; a client connected to that broker."""
    admin.create_topics([NewTopic(topic_name, replica_assignments={0: [0], 1: [0]})])
    bootstrap = RawClient(engine_cluster.ports[0])
    port = leader_port(bootstrap, topic_name)
    bootstrap.close()
    client = RawClient(port)
    yield client, topic_name
    client.close()


def send(client: RawClient, topic: str, records_by_partition: dict[int, bytes], *,
         transactional_id: str | None = None, version: int = 9) -> dict[int, int]:
    request = ProduceRequest(transactional_id=transactional_id, acks=-1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=p, records=r)
                                      for p, r in records_by_partition.items()])])
    response = client.request(request, version, ProduceResponse)
    return {p.index: p.error_code for p in response.responses[0].partition_responses}


def send_retrying(client: RawClient, topic: str, records_by_partition: dict[int, bytes], *,
                  transactional_id: str) -> dict[int, int]:
    """`send`, again while a partition answers NOT_ENOUGH_REPLICAS, as clients do: a transactional
    batch's verification with its coordinator (KIP-890) that fails on a loaded machine answers it."""
    for _ in range(5):
        answer = send(client, topic, records_by_partition, transactional_id=transactional_id)
        if Errors.NotEnoughReplicasError.errno not in answer.values():
            break
        time.sleep(0.1)      # retry.backoff.ms's default
    return answer


def ends(client: RawClient, topic: str, partition: int = 0) -> tuple[int, int]:
    """(high watermark, last stable offset)."""
    return (latest_offset(client, topic, read_committed=False, partition=partition),
            latest_offset(client, topic, read_committed=True, partition=partition))


def test_two_batches_for_one_partition_are_refused_and_nothing_is_appended(one_leader):
    client, topic = one_leader
    producer_id, epoch = new_producer_id(client)
    batch = idempotent_batch(producer_id, epoch, 0, 2)
    # The second batch repeats the first's producer id, epoch and sequence.
    assert send(client, topic, {0: batch + batch}) == {0: Errors.InvalidRecordError.errno}
    assert send(client, topic, {0: bytes(build_batch([b"a"])) + bytes(build_batch([b"b"]))}) == \
        {0: Errors.InvalidRecordError.errno}
    assert ends(client, topic) == (0, 0)
    assert send(client, topic, {0: batch}) == {0: 0}          # the batch alone is appended, once
    assert ends(client, topic) == (2, 2)


def test_empty_partition_data_is_invalid_record(one_leader):
    client, topic = one_leader
    assert send(client, topic, {0: b""}) == {0: Errors.InvalidRecordError.errno}


def test_zstd_needs_produce_v7(one_leader):
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=4, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=None, key=None, value=b"z" * 100, headers=[])
    batch = bytes(builder.build())
    client, topic = one_leader
    assert send(client, topic, {0: batch}, version=6) == {0: Errors.UnsupportedCompressionTypeError.errno}
    assert send(client, topic, {0: batch}, version=7) == {0: 0}


def test_a_transactional_batch_without_a_transactional_id_is_refused_and_pins_nothing(one_leader):
    client, topic = one_leader
    made_up = txn_batch(424242, 0, 0, [b"hang"])
    assert send(client, topic, {0: made_up, 1: bytes(build_batch([b"plain"]))}) == \
        {0: Errors.TransactionalIdAuthorizationFailedError.errno, 1: Errors.TransactionalIdAuthorizationFailedError.errno}
    assert ends(client, topic, 0) == (0, 0) and ends(client, topic, 1) == (0, 0)
    assert send(client, topic, {0: bytes(build_batch([b"after"]))}) == {0: 0}
    assert ends(client, topic) == (1, 1)                      # read_committed consumers are not held back


def test_a_made_up_transaction_under_an_unknown_transactional_id_is_refused(one_leader):
    client, topic = one_leader
    errors = send(client, topic, {0: txn_batch(434343, 0, 0, [b"hang"])}, transactional_id="nobody-knows-me")
    assert errors[0] != 0
    assert send(client, topic, {0: bytes(build_batch([b"after"]))}) == {0: 0}
    assert ends(client, topic) == (1, 1)


def test_one_verified_producer_cannot_carry_another_producers_batches(engine_cluster, one_leader):
    client, topic = one_leader
    tid = f"{topic}-txn"
    coordinator = coordinator_client(engine_cluster, tid)
    try:
        real = init_producer_id(coordinator, tid)
        assert add_partitions(coordinator, tid, real.producer_id, real.producer_epoch, [(topic, 0), (topic, 1)]) == \
            {(topic, 0): 0, (topic, 1): 0}
    finally:
        coordinator.close()
    mixed = {0: txn_batch(real.producer_id, real.producer_epoch, 0, [b"real"]),
             1: txn_batch(real.producer_id + 1000, 0, 0, [b"stowaway"])}
    assert send(client, topic, mixed, transactional_id=tid) == \
        {0: Errors.InvalidProducerIdMappingError.errno, 1: Errors.InvalidProducerIdMappingError.errno}
    assert ends(client, topic, 0) == (0, 0) and ends(client, topic, 1) == (0, 0)
    # The real producer alone is verified and appended; its transaction pins the LSO as it should.
    assert send_retrying(client, topic, {1: mixed[0]}, transactional_id=tid) == {1: 0}
    assert ends(client, topic, 1) == (1, 0)
