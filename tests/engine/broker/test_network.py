"""The listener, in-process: fetches go out with sendfile, and long polls wait without polling."""
import os
import threading
import time

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


def _parked_fetch(port: int, fetch_offset: int):
    """A fetch of partition 0 of "parked" that waits 1 s for 10 MB it will not get."""
    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=1000, min_bytes=10_000_000, max_bytes=1 << 20,
                           isolation_level=0, session_id=0, session_epoch=-1, topics=[F(topic="parked", partitions=[
                               F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=fetch_offset,
                                                log_start_offset=-1, partition_max_bytes=1 << 20)])],
                           forgotten_topics_data=[], rack_id="")
    client = RawClient(port)
    try:
        return client.request(request, 12, FetchResponse).responses[0].partitions[0]
    finally:
        client.close()


@pytest.fixture
def counted_reads(in_process_engine, monkeypatch):
    """The fetches' reads of their partitions (k01_fetch._read_all calls), after one seed record."""
    producer = KafkaProducer(bootstrap_servers=in_process_engine.bootstrap_servers)
    producer.send("parked", b"seed", partition=0).get(10)
    producer.close()
    reads = []
    real_read_all = k01_fetch._read_all
    monkeypatch.setattr(k01_fetch, "_read_all",
                        lambda ctx, request, context: reads.append(ctx) or real_read_all(ctx, request, context))
    return reads


def test_a_long_poll_that_nothing_wakes_reads_the_log_once(in_process_engine, counted_reads):
    """A fetch parked for want of min_bytes waits on a future that only an append (or a moved
    high watermark, a new leader) resolves: with none, it reads the log when it arrives and is
    answered from that read at max_wait_ms. A broker that polled would read it again and again."""
    answer = _parked_fetch(in_process_engine.ports[0], fetch_offset=1)
    assert answer.error_code == 0 and answer.high_watermark == 1
    assert len(counted_reads) == 1


def test_a_long_poll_reads_again_after_an_append_and_answers_what_arrived(in_process_engine, counted_reads):
    """An append while the fetch waits wakes it: it reads again (still short of min_bytes, it
    waits on), and at its deadline reads once more and answers the record that arrived."""
    def produce_later():
        time.sleep(0.3)
        producer = KafkaProducer(bootstrap_servers=in_process_engine.bootstrap_servers)
        producer.send("parked", b"late", partition=0).get(10)
        producer.close()

    later = threading.Thread(target=produce_later)
    later.start()
    try:
        answer = _parked_fetch(in_process_engine.ports[0], fetch_offset=1)
    finally:
        later.join()
    assert answer.error_code == 0 and answer.high_watermark == 2
    assert b"late" in answer.records
    assert len(counted_reads) == 3
