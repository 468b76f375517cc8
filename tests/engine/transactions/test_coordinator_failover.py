"""The coordinator moves with the leadership of its `__transaction_state` partition: a
transaction opened on one broker is loaded by the next leader when that broker stops
(controlled shutdown, over the engine's admin interface), committed there, and its markers
reach every partition, wherever their leaders are now."""
from __future__ import annotations

import urllib.request

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from tests.engine.transactions.test_coordinator_protocol import _transactional_batch
from tests.support.groups import create_topic
from tests.support.raw_client import RawClient
from tests.support.transactions import add_partitions, coordinator_client, describe, end_txn, init_producer_id
from tests.support.waiting import wait_until

TOPIC, TID = "failover", "failover-id"


def _admin(engine, action: str, node_id: int) -> None:
    request = urllib.request.Request(f"{engine.admin_url}/brokers/{node_id}/{action}", method="POST",
                                     headers={"X-Engine-Admin-Token": engine.admin_token})
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200


def _coordinator_node(engine, port: int) -> int:
    client = RawClient(port)
    found = client.request(FindCoordinatorRequest(key=TID, key_type=1), 3, FindCoordinatorResponse)
    client.close()
    return found.node_id if found.error_code == 0 else -1


def _moved_coordinator(engine, port: int, old: int) -> tuple[int] | None:
    """(node id,) once `port` names a live coordinator other than `old`. Wrapped in a tuple
    because wait_until stops on a truthy value, and broker 0 is a valid new coordinator."""
    node = _coordinator_node(engine, port)
    return (node,) if node not in (-1, old) else None


def _produce_everywhere(engine, pid, epoch: int) -> None:
    from kafka.protocol.producer import ProduceRequest, ProduceResponse
    P = ProduceRequest.TopicProduceData
    for port in engine.ports:   # each partition's leader takes it; the others answer NOT_LEADER
        client = RawClient(port)
        for index in range(3):
            client.request(ProduceRequest(transactional_id=TID, acks=-1, timeout_ms=10000, topic_data=[
                P(name=TOPIC, partition_data=[P.PartitionProduceData(index=index,
                                                                     records=_transactional_batch(pid, epoch))])]),
                9, ProduceResponse)
        client.close()


def test_a_transaction_survives_its_coordinator_stopping(txn_cluster):
    create_topic(txn_cluster.bootstrap, TOPIC, 3, replication=3)
    txn = coordinator_client(txn_cluster, TID)
    pid = init_producer_id(txn, TID)
    partitions = [(TOPIC, i) for i in range(3)]
    assert add_partitions(txn, TID, pid.producer_id, pid.producer_epoch, partitions) == dict.fromkeys(partitions, 0)
    _produce_everywhere(txn_cluster, pid.producer_id, pid.producer_epoch)
    txn.close()

    first = _coordinator_node(txn_cluster, txn_cluster.ports[0])
    _admin(txn_cluster, "stop", first)
    try:
        alive = next(p for i, p in enumerate(txn_cluster.ports) if i != first)
        (second,) = wait_until(lambda: _moved_coordinator(txn_cluster, alive, first),
                               message="a new coordinator")
        txn = RawClient(txn_cluster.ports[second])
        loaded = describe(txn, TID)
        assert (loaded.transaction_state, loaded.producer_epoch) == ("Ongoing", pid.producer_epoch)
        assert end_txn(txn, TID, pid.producer_id, pid.producer_epoch, True) == 0
        wait_until(lambda: describe(txn, TID).transaction_state == "CompleteCommit", message="CompleteCommit")
        txn.close()
    finally:
        _admin(txn_cluster, "start", first)

    consumer = Consumer({"bootstrap.servers": txn_cluster.bootstrap, "group.id": "failover-reader",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, i, OFFSET_BEGINNING) for i in range(3)])
    values: list[bytes] = []
    wait_until(lambda: values.extend(m.value() for m in consumer.consume(10, timeout=0.3) if not m.error())
               or len(values) >= 3, message="the committed records")
    consumer.close()
    assert values == [b"v"] * 3
