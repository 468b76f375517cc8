"""The listener, in-process: fetches go out with sendfile, and long polls wait without polling."""
import os

import pytest
from kafka import KafkaProducer
from kafka.protocol.consumer import FetchRequest, FetchResponse

import engine.protocol.apis  # noqa: F401 - registers the handlers
from engine.protocol.apis import k01_fetch
from tests.support.in_process_engine import InProcessEngine
from tests.support.partition_io import read_values, send_values
from tests.support.raw_client import RawClient


@pytest.fixture
def in_process_engine(tmp_path):
    """An Engine on a background event loop in this process, so a test can watch its syscalls."""
    with InProcessEngine(tmp_path, brokers=1) as running:
        yield running.engine


def test_fetch_serves_segment_bytes_with_sendfile(in_process_engine, monkeypatch):
    sent = []
    real_sendfile = os.sendfile

    def counting_sendfile(out_fd, in_fd, offset, count, *args, **kwargs):
        written = real_sendfile(out_fd, in_fd, offset, count, *args, **kwargs)
        sent.append(written)
        return written

    monkeypatch.setattr(os, "sendfile", counting_sendfile)
    bootstrap = in_process_engine.bootstrap_servers
    values = [os.urandom(100) for _ in range(5000)]
    send_values(bootstrap, "zero-copy", values, linger_ms=20)
    assert read_values(bootstrap, "zero-copy", len(values)) == values
    assert sum(sent) >= sum(len(v) for v in values)  # every record byte left through sendfile


def test_long_poll_reads_the_log_only_on_arrival_and_at_its_deadline(in_process_engine, monkeypatch):
    """A fetch parked for want of min_bytes waits on a future that only an append resolves:
    with no append it reads the log twice, when it arrives and when max_wait_ms runs out.
    A broker that polled would read it again and again meanwhile."""
    bootstrap = in_process_engine.bootstrap_servers
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send("parked", b"seed", partition=0).get(10)
    producer.close()
    reads = []
    real_read_all = k01_fetch._read_all
    monkeypatch.setattr(k01_fetch, "_read_all",
                        lambda ctx, request, context: reads.append(ctx) or real_read_all(ctx, request, context))

    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=1000, min_bytes=10_000_000, max_bytes=1 << 20,
                           isolation_level=0, session_id=0, session_epoch=-1, topics=[F(topic="parked", partitions=[
                               F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=1,
                                                log_start_offset=-1, partition_max_bytes=1 << 20)])],
                           forgotten_topics_data=[], rack_id="")
    client = RawClient(in_process_engine.ports[0])
    try:
        response = client.request(request, 12, FetchResponse)
    finally:
        client.close()
    assert response.responses[0].partitions[0].error_code == 0
    assert len(reads) == 2
