"""The sample from our notes, with kafka-python's defaults (idempotent producer)."""
from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def test_sample_produce_returns_offset_zero_and_consumer_reads_it(engine_cluster):
    producer = KafkaProducer(bootstrap_servers=engine_cluster.bootstrap)
    future = producer.send(topic="topic_1", value=b"Hello", partition=0)
    metadata = future.get(timeout=10)
    producer.close()
    assert metadata.offset == 0

    consumer = KafkaConsumer("topic_1", bootstrap_servers=engine_cluster.bootstrap,
                             auto_offset_reset="earliest", consumer_timeout_ms=5000)
    values = [message.value for message in consumer]
    consumer.close()
    assert values == [b"Hello"]


def test_kafka_python_infers_a_kafka_4_broker_and_uses_idempotence(engine_cluster, topic_name):
    producer = KafkaProducer(bootstrap_servers=engine_cluster.bootstrap)
    assert producer.config["api_version"] >= (4, 0)
    for i in range(50):
        producer.send(topic_name, key=str(i % 3).encode(), value=f"v{i}".encode())
    producer.flush(10)
    assert producer.config["enable_idempotence"] is True
    producer.close()

    consumer = KafkaConsumer(bootstrap_servers=engine_cluster.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000)
    partitions = [TopicPartition(topic_name, p) for p in consumer.partitions_for_topic(topic_name)]
    consumer.assign(partitions)
    values = sorted(int(m.value[1:]) for m in consumer)
    consumer.close()
    assert values == list(range(50))
