"""Requests that decode but break the rules get INVALID_REQUEST and a closed connection,
logged as one line, counted, with no traceback."""
import kafka.errors as Errors
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from tests.engine.protocol.test_bad_input import api_versions_ok
from tests.support.raw_client import RawClient


def log_since(engine, offset: int) -> str:
    with open(engine.log_path, "rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


def send_and_read(port: int, frame: bytes, response_class, version: int):
    client = RawClient(port)
    try:
        client.send_bytes(frame)
        reply = client.read_frame()
        answer = response_class.decode(reply, version=version, header=True) if reply else None
        return answer, client.is_closed_by_peer()
    finally:
        client.close()


def test_a_null_where_the_schema_allows_none_is_refused(engine_cluster):
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="only-X")],
                              allow_auto_topic_creation=False)
    request.with_header(correlation_id=7, client_id="t")
    frame = request.encode(version=5, header=True, framed=True)
    frame = frame.replace(b"\x00\x06only-X", b"\xff\xff")          # a null topic name, v5 allows none
    frame = len(frame[4:]).to_bytes(4, "big") + frame[4:]
    log_start = engine_cluster.log_path.stat().st_size
    answer, closed = send_and_read(engine_cluster.ports[0], frame, MetadataResponse, 5)
    assert answer is not None and closed
    text = log_since(engine_cluster, log_start)
    assert "INVALID_REQUEST" in text and "topics[0].name is null" in text
    assert "Traceback" not in text
    assert api_versions_ok(engine_cluster.ports[0])


def test_a_negative_max_bytes_is_refused_with_invalid_request(engine_cluster):
    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=-5, isolation_level=0,
                           session_id=0, session_epoch=-1, topics=[F(topic="any", partitions=[
                               F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=0,
                                                log_start_offset=-1, partition_max_bytes=100)])],
                           forgotten_topics_data=[], rack_id="")
    request.with_header(correlation_id=9, client_id="t")
    log_start = engine_cluster.log_path.stat().st_size
    answer, closed = send_and_read(engine_cluster.ports[0], request.encode(version=12, header=True, framed=True),
                                   FetchResponse, 12)
    assert answer.error_code == Errors.InvalidRequestError.errno
    assert closed
    text = log_since(engine_cluster, log_start)
    assert "max_bytes is negative (-5)" in text and "Traceback" not in text
