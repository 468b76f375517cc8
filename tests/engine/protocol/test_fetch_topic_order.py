"""A Fetch may list one topic's partitions apart (A0, B0, A1): the zero-copy response groups
them by topic, and every partition still gets its own bytes."""
import time

import pytest
from confluent_kafka import Consumer, Producer
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer import FetchRequest, FetchResponse

from tests.engine.protocol.test_bad_input import build_batch, produce
from tests.support.raw_client import RawClient


def create_on_broker_0(client: RawClient, name: str, partitions: int) -> None:
    T = CreateTopicsRequest.CreatableTopic
    assignments = [T.CreatableReplicaAssignment(partition_index=p, broker_ids=[0]) for p in range(partitions)]
    request = CreateTopicsRequest(topics=[T(name=name, num_partitions=-1, replication_factor=-1,
                                            assignments=assignments, configs=[])],
                                  timeout_ms=10000, validate_only=False)
    assert client.request(request, 7, CreateTopicsResponse).topics[0].error_code == 0


def produce_to(client: RawClient, topic: str, partition: int, values: list[bytes]) -> None:
    from kafka.protocol.producer import ProduceRequest, ProduceResponse
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=partition, records=bytes(build_batch(values)))])])
    assert client.request(request, 9, ProduceResponse).responses[0].partition_responses[0].error_code == 0


def fetch_in_order(client: RawClient, order: list[tuple[str, int]], version: int) -> dict:
    F = FetchRequest.FetchTopic
    topics = [F(topic=topic, partitions=[F.FetchPartition(partition=p, current_leader_epoch=-1, fetch_offset=0,
                                                          log_start_offset=-1, partition_max_bytes=1 << 20)])
              for topic, p in order]
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24, isolation_level=0,
                           session_id=0, session_epoch=-1, topics=topics, forgotten_topics_data=[], rack_id="")
    response = client.request(request, version, FetchResponse)
    assert response is not None, "the broker closed the connection"
    return {(t.topic, p.partition_index): bytes(p.records) for t in response.responses for p in t.partitions
            if p.error_code == 0}


@pytest.mark.parametrize("version", [11, 12])
def test_a_fetch_listing_a_topics_partitions_apart_gets_each_partitions_bytes(engine_cluster, topic_name, version):
    a, b = f"{topic_name}-a", f"{topic_name}-b"
    client = RawClient(engine_cluster.ports[0])
    try:
        create_on_broker_0(client, a, 2)
        create_on_broker_0(client, b, 1)
        values = {(a, 0): [b"a0-x", b"a0-y"], (b, 0): [b"b0-x"], (a, 1): [b"a1-x", b"a1-y", b"a1-z"]}
        for (topic, partition), vals in values.items():
            produce_to(client, topic, partition, vals)
        records = fetch_in_order(client, [(a, 0), (b, 0), (a, 1)], version)
        for key, vals in values.items():
            assert all(v in records[key] for v in vals), key
            others = [v for k, vs in values.items() if k != key for v in vs]
            assert not any(v in records[key] for v in others), key
    finally:
        client.close()


def test_a_consumer_of_several_topics_reads_every_message_across_a_rebalance(engine_cluster, topic_name):
    """librdkafka appends newly assigned partitions to its broker's fetch list: after an
    incremental rebalance hands A1 and B1 to a consumer that owns A0 and B0, it fetches
    A0, B0, A1, B1, which lists topic A's partitions apart."""
    topics = [f"{topic_name}-a", f"{topic_name}-b"]
    client = RawClient(engine_cluster.ports[0])
    try:
        for topic in topics:
            create_on_broker_0(client, topic, 2)
    finally:
        client.close()
    sent = set()

    def produce_round(tag: str) -> None:
        producer = Producer({"bootstrap.servers": engine_cluster.bootstrap, "linger.ms": 5})
        for i in range(400):
            topic, partition = topics[i % 2], (i // 2) % 2
            value = f"{tag}-{topic}-{partition}-{i}".encode()
            producer.produce(topic, value, partition=partition)
            sent.add(value)
        assert producer.flush(30) == 0

    def consumer() -> Consumer:
        c = Consumer({"bootstrap.servers": engine_cluster.bootstrap, "group.id": f"g-{topic_name}",
                      "auto.offset.reset": "earliest", "partition.assignment.strategy": "cooperative-sticky",
                      "max.partition.fetch.bytes": 1024})
        c.subscribe(topics)
        return c

    received = set()

    def poll(c: Consumer) -> None:
        for message in c.consume(200, timeout=0.2):
            if message.error() is None:
                received.add(message.value())

    log_start = engine_cluster.log_path.stat().st_size
    produce_round("first")
    first, second = consumer(), consumer()
    deadline = time.monotonic() + 60
    while not (first.assignment() and second.assignment()) and time.monotonic() < deadline:
        poll(first)
        poll(second)
    assert len(first.assignment()) == 2 and len(second.assignment()) == 2
    second.close()
    try:
        while len(first.assignment()) < 4 and time.monotonic() < deadline:
            poll(first)
        assert len(first.assignment()) == 4
        produce_round("second")
        deadline = time.monotonic() + 60
        while not sent <= received and time.monotonic() < deadline:
            poll(first)
    finally:
        first.close()
    assert sent - received == set()
    with open(engine_cluster.log_path, "rb") as log:
        log.seek(log_start)
        assert b"Traceback" not in log.read()     # no connection was dropped on the way
