"""Bad input gets Kafka's error code or closes only that connection; nothing stored is lost."""
import random
import struct

import kafka.errors as Errors
import pytest
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

from tests.support.raw_client import RawClient


def build_batch(values: list[bytes]) -> bytearray:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 24)
    for i, value in enumerate(values):
        builder.append(i, timestamp=None, key=None, value=value, headers=[])   # now: retention keeps it
    return builder.build()


def create_topic(client: RawClient, name: str, configs: dict | None = None) -> int:
    T = CreateTopicsRequest.CreatableTopic
    request = CreateTopicsRequest(topics=[T(name=name, num_partitions=1, replication_factor=1, assignments=[],
                                            configs=[T.CreatableTopicConfig(name=k, value=v)
                                                     for k, v in (configs or {}).items()])],
                                  timeout_ms=10000, validate_only=False)
    response = client.request(request, 7, CreateTopicsResponse)
    return response.topics[0].error_code


def produce(client: RawClient, topic: str, records: bytes) -> int:
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=0, records=records)])])
    response = client.request(request, 9, ProduceResponse)
    return response.responses[0].partition_responses[0].error_code


def fetch_all(client: RawClient, topic: str) -> bytes:
    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24, isolation_level=0,
                           session_id=0, session_epoch=-1, topics=[F(topic=topic, partitions=[
                               F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=0,
                                                log_start_offset=-1, partition_max_bytes=1 << 24)])],
                           forgotten_topics_data=[], rack_id="")
    response = client.request(request, 11, FetchResponse)
    data = response.responses[0].partitions[0]
    assert data.error_code == 0
    return bytes(data.records)


def api_versions_ok(port: int) -> bool:
    client = RawClient(port)
    try:
        response = client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3,
                                  ApiVersionsResponse)
        return response is not None and response.error_code == 0
    finally:
        client.close()


@pytest.fixture
def stored(engine_cluster, topic_name):
    """A topic with known data; each test checks that the data survives its abuse."""
    port = engine_cluster.ports[0]
    client = RawClient(port)
    assert create_topic(client, topic_name) == 0
    leader_port = _leader_port(client, topic_name, engine_cluster)
    client.close()
    client = RawClient(leader_port)
    assert produce(client, topic_name, bytes(build_batch([b"keep-me-1", b"keep-me-2"]))) == 0
    before = fetch_all(client, topic_name)
    client.close()
    yield topic_name, leader_port
    client = RawClient(leader_port)
    assert fetch_all(client, topic_name) == before
    client.close()
    assert all(api_versions_ok(p) for p in engine_cluster.ports)


def _leader_port(client, topic, engine_cluster) -> int:
    response = client.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                                              allow_auto_topic_creation=False), 12, MetadataResponse)
    leader = response.topics[0].partitions[0].leader_id
    return {b.node_id: b.port for b in response.brokers}[leader]


def test_random_garbage_frames_close_only_that_connection(stored):
    _, port = stored
    for seed in range(20):
        garbage = random.Random(seed).randbytes(8 + seed * 37)  # seeded: the same frames every run
        client = RawClient(port, timeout=5)
        client.send_bytes(struct.pack(">i", len(garbage)) + garbage)
        assert client.read_frame() is None
        client.close()
        assert api_versions_ok(port)


def test_two_gib_length_prefix_is_refused_before_reading(stored):
    _, port = stored
    client = RawClient(port, timeout=5)
    client.send_bytes(struct.pack(">i", 2**31 - 1) + b"\x00" * 100)
    assert client.is_closed_by_peer()
    client.close()
    negative = RawClient(port, timeout=5)
    negative.send_bytes(struct.pack(">i", -5))
    assert negative.is_closed_by_peer()
    negative.close()


def test_unknown_api_key_closes_the_connection(stored):
    _, port = stored
    client = RawClient(port, timeout=5)
    body = struct.pack(">hhi", 12345, 0, 1) + struct.pack(">h", 4) + b"test"
    client.send_bytes(struct.pack(">i", len(body)) + body)
    assert client.is_closed_by_peer()
    client.close()


def test_unsupported_version(stored):
    _, port = stored
    client = RawClient(port, timeout=5)
    body = struct.pack(">hhi", 3, 99, 1) + struct.pack(">h", 4) + b"test"  # Metadata v99
    client.send_bytes(struct.pack(">i", len(body)) + body)
    assert client.is_closed_by_peer()
    client.close()

    client = RawClient(port, timeout=5)
    body = struct.pack(">hhi", 18, 99, 7) + struct.pack(">h", 4) + b"test"  # ApiVersions v99 (KIP-511)
    client.send_bytes(struct.pack(">i", len(body)) + body)
    frame = client.read_frame()
    response = ApiVersionsResponse.decode(frame, version=0, header=True)
    assert response.error_code == Errors.UnsupportedVersionError.errno
    assert any(k.api_key == 18 and k.max_version >= 3 for k in response.api_keys)
    client.close()


def test_oversized_batch_is_message_too_large(engine_cluster, stored):
    topic, port = stored
    small = topic + "-small"
    client = RawClient(port)
    assert create_topic(client, small, {"max.message.bytes": "1000"}) == 0
    leader_port = _leader_port(client, small, engine_cluster)
    client.close()
    client = RawClient(leader_port)
    assert produce(client, small, bytes(build_batch([b"x" * 5000]))) == Errors.MessageSizeTooLargeError.errno
    assert produce(client, small, bytes(build_batch([b"fits"]))) == 0  # the connection is still usable
    client.close()


def test_bad_crc_is_corrupt_message(stored):
    topic, port = stored
    batch = build_batch([b"will be corrupted"])
    batch[-3] ^= 0xFF  # inside the records, covered by the CRC
    client = RawClient(port)
    assert produce(client, topic, bytes(batch)) == Errors.CorruptRecordError.errno
    truncated = bytes(build_batch([b"short"]))[:-4]
    assert produce(client, topic, truncated) == Errors.CorruptRecordError.errno
    client.close()


def test_a_header_that_lies_about_its_record_count_is_invalid_record(stored):
    """The log end offset would jump by 2^31 and consumers stall (Kafka's LogValidator reads
    the records too)."""
    topic, port = stored
    batch = build_batch([b"one", b"two"])
    struct.pack_into(">i", batch, 57, 2**31 - 1)         # recordsCount
    struct.pack_into(">i", batch, 23, 2**31 - 2)         # lastOffsetDelta, to match it
    struct.pack_into(">I", batch, 17, calc_crc32c(memoryview(batch)[21:]))   # and re-signed
    client = RawClient(port)
    assert produce(client, topic, bytes(batch)) == Errors.InvalidRecordError.errno
    client.close()   # `stored` checks that the log is as it was


@pytest.mark.parametrize("name", ["bad/name", "a" * 250, "..", "spaces are bad", "", "trailing-newline\n"])
def test_illegal_topic_name_is_invalid_topic(stored, name):
    _, port = stored
    client = RawClient(port)
    assert create_topic(client, name) == Errors.InvalidTopicError.errno
    response = client.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=name)],
                                              allow_auto_topic_creation=True), 12, MetadataResponse)
    assert response.topics[0].error_code == Errors.InvalidTopicError.errno
    client.close()
