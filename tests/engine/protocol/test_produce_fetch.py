"""Produce and Fetch details: idempotence, long polling, compression as received, zero-copy."""
import threading
import time

import kafka.errors as Errors
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

from engine.storage.records import iter_batches
from tests.engine.protocol.test_bad_input import _leader_port, create_topic, fetch_all
from tests.support.partition_io import read_values, send_values
from tests.support.raw_client import RawClient


def idempotent_batch(producer_id: int, epoch: int, base_sequence: int, count: int) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=producer_id,
                                        producer_epoch=epoch, base_sequence=base_sequence, batch_size=1 << 20)
    for i in range(count):
        builder.append(i, timestamp=int(time.time() * 1000), key=None, value=b"seq-%d" % (base_sequence + i),
                       headers=[])
    return bytes(builder.build())


@pytest.fixture
def leader(engine_cluster, topic_name):
    client = RawClient(engine_cluster.ports[0])
    assert create_topic(client, topic_name) == 0
    port = _leader_port(client, topic_name, engine_cluster)
    client.close()
    client = RawClient(port)
    yield client, topic_name
    client.close()


def produce_offset(client: RawClient, topic: str, records: bytes) -> tuple[int, int]:
    from kafka.protocol.producer import ProduceRequest, ProduceResponse
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=0, records=records)])])
    answer = client.request(request, 9, ProduceResponse).responses[0].partition_responses[0]
    return answer.error_code, answer.base_offset


def test_idempotent_producer_duplicates_gaps_and_fencing(leader):
    client, topic = leader
    init = client.request(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 4,
                          InitProducerIdResponse)
    assert init.error_code == 0 and init.producer_id >= 0
    pid, epoch = init.producer_id, init.producer_epoch

    first = idempotent_batch(pid, epoch, 0, 3)
    assert produce_offset(client, topic, first) == (0, 0)
    assert produce_offset(client, topic, idempotent_batch(pid, epoch, 3, 2)) == (0, 3)
    # A retried batch is acknowledged with its original offset and not appended again.
    assert produce_offset(client, topic, first) == (0, 0)
    # A gap in the sequence numbers.
    assert produce_offset(client, topic, idempotent_batch(pid, epoch, 9, 1))[0] == \
        Errors.OutOfOrderSequenceNumberError.errno
    # The next in-order batch still goes through.
    assert produce_offset(client, topic, idempotent_batch(pid, epoch, 5, 1)) == (0, 5)
    # An older epoch is fenced once a newer one has written.
    assert produce_offset(client, topic, idempotent_batch(pid, epoch + 1, 0, 1)) == (0, 6)
    assert produce_offset(client, topic, idempotent_batch(pid, epoch, 6, 1))[0] == \
        Errors.InvalidProducerEpochError.errno
    values = [r.value for b in _batches(fetch_all(client, topic)) for r in b]
    assert values == [b"seq-0", b"seq-1", b"seq-2", b"seq-3", b"seq-4", b"seq-5", b"seq-0"]


def _batches(data: bytes):
    from kafka.record.default_records import DefaultRecordBatch
    for position, header in iter_batches(memoryview(data)):
        yield list(DefaultRecordBatch(data[position:position + header.size]))


def test_producer_ids_are_unique_across_requests(leader):
    client, _ = leader
    ids = {client.request(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=1000), 4,
                          InitProducerIdResponse).producer_id for _ in range(20)}
    assert len(ids) == 20


def test_long_poll_waits_for_data_and_wakes_on_append(engine_cluster, topic_name):
    producer = KafkaProducer(bootstrap_servers=engine_cluster.bootstrap)
    producer.send(topic_name, b"first", partition=0).get(10)
    consumer = KafkaConsumer(bootstrap_servers=engine_cluster.bootstrap, fetch_min_bytes=200_000,
                             fetch_max_wait_ms=20_000, request_timeout_ms=40_000)
    tp = TopicPartition(topic_name, 0)
    consumer.assign([tp])
    consumer.seek(tp, 1)
    # min_bytes is far above what is there, so the broker holds the fetch. Only the append's
    # wake-up can answer it within the 15 s poll: max_wait_ms (20 s) would come too late.
    threading.Timer(1.0, lambda: producer.send(topic_name, b"x" * 300_000, partition=0)).start()
    records = consumer.poll(timeout_ms=15_000)
    consumer.close()
    producer.close()
    assert [r.value[:1] for r in records.get(tp, [])] == [b"x"]




@pytest.mark.parametrize("codec,attribute", [("gzip", 1), ("snappy", 2), ("lz4", 3), ("zstd", 4)])
def test_compressed_batches_are_stored_and_served_as_received(engine_cluster, topic_name, codec, attribute):
    values = [f"{codec}-{i}".encode() * 20 for i in range(200)]
    send_values(engine_cluster.bootstrap, topic_name, values, compression_type=codec, linger_ms=50)
    assert read_values(engine_cluster.bootstrap, topic_name, len(values)) == values
    # The .log holds the producer's compressed batches untouched (only offsets/epoch are set).
    segment = _segment_file(engine_cluster, topic_name)
    data = segment.read_bytes()
    headers = [h for _, h in iter_batches(memoryview(data))]
    assert headers and all(h.compression_type == attribute for h in headers)
    assert sum(h.records_count for h in headers) == len(values)


def _segment_file(engine_cluster, topic: str):
    for broker_dir in sorted(engine_cluster.data_dir.glob("broker-*")):
        segment = broker_dir / f"{topic}-0" / ("0" * 20 + ".log")
        if segment.exists():
            return segment
    raise AssertionError(f"no segment for {topic}-0")
