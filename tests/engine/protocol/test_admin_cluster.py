"""DeleteRecords, DescribeCluster and auto topic creation, with real clients."""
import kafka.errors as Errors
import pytest
from confluent_kafka import TopicPartition as CkTopicPartition
from kafka import KafkaProducer, TopicPartition
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from tests.engine.protocol.admin_support import (admin_client, consume_from_beginning, create_topic,
                                                 describe_topic, offsets, produce)
from tests.support.engine_process import EngineProcess
from tests.support.raw_client import RawClient

ALL_BROKERS = {0, 1, 2}


# --- DeleteRecords ------------------------------------------------------------------------

def test_delete_records_advances_the_low_watermark(admin, engine_cluster, topic_name):
    bootstrap = engine_cluster.bootstrap
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["error_code"] == 0
    produce(bootstrap, topic_name, [b"m%d" % i for i in range(10)], partition=0)
    tp = TopicPartition(topic_name, 0)

    result = admin.delete_records({tp: 4})
    assert result[tp]["low_watermark"] == 4
    assert offsets(bootstrap, topic_name) == (4, 10)
    records = consume_from_beginning(bootstrap, topic_name)
    assert [(r.offset, r.value) for r in records] == [(i, b"m%d" % i) for i in range(4, 10)]

    # Only the leader deletes records.
    leader = describe_topic(admin, topic_name)["partitions"][0]["leader_id"]
    with pytest.raises(Errors.NotLeaderForPartitionError):
        admin.delete_records({tp: 6}, partition_leader_id=(leader + 1) % 3)
    # Below the log start offset changes nothing; it is not an error.
    assert admin.delete_records({tp: 2})[tp]["low_watermark"] == 4
    with pytest.raises(Errors.OffsetOutOfRangeError):
        admin.delete_records({tp: 11})
    assert offsets(bootstrap, topic_name) == (4, 10)
    # -1 means the high watermark.
    assert admin.delete_records({tp: -1})[tp]["low_watermark"] == 10
    assert offsets(bootstrap, topic_name) == (10, 10)
    assert produce(bootstrap, topic_name, [b"after"], partition=0) == [10]
    assert [r.value for r in consume_from_beginning(bootstrap, topic_name)] == [b"after"]


@pytest.mark.parametrize("policy, deletable", [("compact", False), ("compact,delete", True)])
def test_delete_records_needs_the_delete_cleanup_policy(admin, engine_cluster, topic_name, policy, deletable):
    """Kafka refuses DeleteRecords on a compact-only topic (POLICY_VIOLATION) and keeps every record."""
    bootstrap = engine_cluster.bootstrap
    created = create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                           configs={"cleanup.policy": policy})
    assert created["error_code"] == 0
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:    # keyed: a compacted topic refuses records without a key
        for i in range(4):
            producer.send(topic_name, key=b"k%d" % i, value=b"m%d" % i, partition=0).get(timeout=15)
    finally:
        producer.close()
    tp = TopicPartition(topic_name, 0)

    if deletable:
        assert admin.delete_records({tp: 2})[tp]["low_watermark"] == 2
        assert offsets(bootstrap, topic_name) == (2, 4)
    else:
        with pytest.raises(Errors.PolicyViolationError):
            admin.delete_records({tp: 2})
        assert offsets(bootstrap, topic_name) == (0, 4)


def test_confluent_delete_records(confluent_admin, admin, engine_cluster, topic_name):
    assert create_topic(admin, topic_name, num_partitions=2, replication_factor=1)["error_code"] == 0
    produce(engine_cluster.bootstrap, topic_name, [b"a", b"b", b"c"], partition=1)
    futures = confluent_admin.delete_records([CkTopicPartition(topic_name, 1, 2)])
    deleted = next(iter(futures.values())).result(15)
    assert deleted.low_watermark == 2
    assert offsets(engine_cluster.bootstrap, topic_name, 1) == (2, 3)
    assert offsets(engine_cluster.bootstrap, topic_name, 0) == (0, 0)


# --- DescribeCluster ----------------------------------------------------------------------

def test_describe_cluster(admin, confluent_admin, engine_cluster):
    cluster = admin.describe_cluster()
    brokers = sorted((b["broker_id"], b["host"], b["port"]) for b in cluster["brokers"])
    assert brokers == [(i, "127.0.0.1", port) for i, port in enumerate(engine_cluster.ports)]
    assert cluster["controller_id"] in ALL_BROKERS
    assert cluster["cluster_id"]

    described = confluent_admin.describe_cluster(request_timeout=15).result(15)
    assert described.cluster_id == cluster["cluster_id"]
    assert described.controller.id == cluster["controller_id"]
    assert sorted((n.id, n.host, n.port) for n in described.nodes) == brokers

    # Metadata agrees.
    client = RawClient(engine_cluster.ports[1])
    try:
        metadata = client.request(MetadataRequest(topics=[], allow_auto_topic_creation=False), 12, MetadataResponse)
    finally:
        client.close()
    assert (metadata.cluster_id, metadata.controller_id) == (cluster["cluster_id"], cluster["controller_id"])


# --- auto.create.topics.enable ------------------------------------------------------------

@pytest.fixture(scope="module")
def tuned_engine(tmp_path_factory):
    """A private cluster whose defaults differ from Kafka's, to see them used."""
    engine = EngineProcess(tmp_path_factory.mktemp("tuned") / "data", brokers=3,
                           configs={"num.partitions": "4", "default.replication.factor": "2"}).start()
    yield engine
    engine.kill()


def test_default_partitions_and_replication_factor_come_from_the_broker(tuned_engine, topic_name):
    admin = admin_client(tuned_engine.bootstrap)
    try:
        admin.create_topics([topic_name])  # names only: -1 / -1
        partitions = describe_topic(admin, topic_name)["partitions"]
    finally:
        admin.close()
    assert len(partitions) == 4
    assert all(len(set(p["replica_nodes"])) == 2 for p in partitions)


def test_producing_to_an_unknown_topic_creates_it(tuned_engine, topic_name):
    producer = KafkaProducer(bootstrap_servers=tuned_engine.bootstrap)
    try:
        metadata = producer.send(topic_name, b"hello").get(timeout=15)
    finally:
        producer.close()
    assert metadata.offset == 0
    admin = admin_client(tuned_engine.bootstrap)
    try:
        partitions = describe_topic(admin, topic_name)["partitions"]
    finally:
        admin.close()
    assert len(partitions) == 4 and all(len(p["replica_nodes"]) == 2 for p in partitions)


def test_auto_create_disabled(engine_factory, topic_name):
    engine = engine_factory(brokers=1, configs={"auto.create.topics.enable": "false"})
    producer = KafkaProducer(bootstrap_servers=engine.bootstrap, max_block_ms=1000)
    try:
        with pytest.raises(Errors.KafkaTimeoutError):  # the topic never appears in its metadata
            producer.send(topic_name, b"hello").get(timeout=15)
    finally:
        producer.close()
    client = RawClient(engine.ports[0])
    try:
        request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic_name)],
                                  allow_auto_topic_creation=True)
        response = client.request(request, 12, MetadataResponse)
    finally:
        client.close()
    assert response.topics[0].error_code == Errors.UnknownTopicOrPartitionError.errno
    admin = admin_client(engine.bootstrap)
    try:
        assert topic_name not in admin.list_topics()
    finally:
        admin.close()


def test_metadata_without_allow_auto_topic_creation_creates_nothing(engine_cluster, admin, topic_name):
    client = RawClient(engine_cluster.ports[0])
    try:
        request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic_name)],
                                  allow_auto_topic_creation=False)
        response = client.request(request, 12, MetadataResponse)
    finally:
        client.close()
    assert response.topics[0].error_code == Errors.UnknownTopicOrPartitionError.errno
    assert topic_name not in admin.list_topics()
