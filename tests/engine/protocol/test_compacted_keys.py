"""Kafka's LogValidator: a compacted topic refuses records without a key, naming each one.

The whole batch is refused with INVALID_RECORD; `record_errors` gives each keyless record's index
in the batch and a message; nothing of the batch is stored, and keyed records still go in."""
import kafka.errors as Errors
import pytest
from confluent_kafka import KafkaError, Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.support.groups import create_topic
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

COMPACTED = {"cleanup.policy": "compact"}


@pytest.fixture
def compacted_topic(engine_cluster, topic_name):
    create_topic(engine_cluster.bootstrap, topic_name, 1, configs=COMPACTED)
    return topic_name


def end_offset(bootstrap: str, topic: str) -> int:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tp = TopicPartition(topic, 0)
        return consumer.end_offsets([tp])[tp]
    finally:
        consumer.close()


def leader_known(producer: Producer, topic: str) -> bool:
    partition = producer.list_topics(topic, timeout=5).topics[topic].partitions.get(0)
    return partition is not None and partition.leader >= 0


def raw_produce(port: int, topic: str, keys: list) -> ProduceResponse:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, key in enumerate(keys):
        builder.append(i, timestamp=None, key=key, value=b"v%d" % i, headers=[])
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=0, records=bytes(builder.build()))])])
    client = RawClient(port)
    try:
        return client.request(request, 9, ProduceResponse).responses[0].partition_responses[0]
    finally:
        client.close()


def leader_port(engine, topic: str) -> int:
    consumer = KafkaConsumer(bootstrap_servers=engine.bootstrap)
    try:
        consumer.topics()
        leader = consumer._client.cluster.leader_for_partition(TopicPartition(topic, 0))
        return engine.ports[leader]
    finally:
        consumer.close()


def test_raw_produce_names_every_keyless_record_and_stores_nothing(engine_cluster, compacted_topic):
    answer = raw_produce(leader_port(engine_cluster, compacted_topic), compacted_topic, [b"a", None, b"c", None])
    assert answer.error_code == Errors.InvalidRecordError.errno
    assert [e.batch_index for e in answer.record_errors] == [1, 3]
    for error in answer.record_errors:
        assert error.batch_index_error_message == (
            f"Compacted topic cannot accept message without key in topic partition {compacted_topic}-0.")
    assert "2 record errors" in answer.error_message
    assert end_offset(engine_cluster.bootstrap, compacted_topic) == 0


def test_raw_produce_with_keys_is_accepted(engine_cluster, compacted_topic):
    answer = raw_produce(leader_port(engine_cluster, compacted_topic), compacted_topic, [b"a", b"b"])
    assert (answer.error_code, answer.record_errors) == (0, [])
    assert end_offset(engine_cluster.bootstrap, compacted_topic) == 2


def test_kafka_python_producer_gets_invalid_record(engine_cluster, compacted_topic):
    producer = KafkaProducer(bootstrap_servers=engine_cluster.bootstrap, retries=0)
    try:
        with pytest.raises(Errors.InvalidRecordError):
            producer.send(compacted_topic, value=b"no key").get(timeout=15)
        producer.send(compacted_topic, key=b"k", value=b"keyed").get(timeout=15)
    finally:
        producer.close()
    assert end_offset(engine_cluster.bootstrap, compacted_topic) == 1


def test_confluent_kafka_reports_each_keyless_record_and_fails_the_rest_of_the_batch(engine_cluster,
                                                                                      compacted_topic):
    # A long linger keeps the four records in one batch until flush() sends it. The producer
    # learns the partition's leader first, so that none of them waits apart for the metadata.
    producer = Producer({"bootstrap.servers": engine_cluster.bootstrap, "linger.ms": 10000})
    wait_until(lambda: leader_known(producer, compacted_topic), message="the producer to know the partition's leader")
    reports = {}
    for key, value in [(None, b"a"), (b"k", b"b"), (None, b"c"), (None, b"d")]:
        producer.produce(compacted_topic, key=key, value=value,
                         on_delivery=lambda err, msg: reports.__setitem__(msg.value(), err and err.code()))
    assert producer.flush(30) == 0
    # librdkafka reads record_errors (KIP-467): the named records fail with INVALID_RECORD, the
    # keyed one only because its batch was refused.
    assert reports == {b"a": KafkaError.INVALID_RECORD, b"b": KafkaError._INVALID_DIFFERENT_RECORD,
                       b"c": KafkaError.INVALID_RECORD, b"d": KafkaError.INVALID_RECORD}
    assert end_offset(engine_cluster.bootstrap, compacted_topic) == 0
