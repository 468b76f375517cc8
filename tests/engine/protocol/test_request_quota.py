"""Request quotas (KIP-124, engine/protocol/request_quota.py): a client over its
`request_percentage` of the event loop's and the worker threads' time is answered with
throttle_time_ms and its connection muted; a client without the quota, ApiVersions, and the
time a handler spends waiting are not counted."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest
from kafka.protocol.admin import DescribeClusterRequest, DescribeClusterResponse
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

from engine import worker_time
from engine.broker import record_checks
from engine.protocol import dispatch
from engine.protocol.big_requests import off_loop
from engine.protocol.request_quota import Timed
from tests.engine.protocol.test_bad_input import create_topic
from tests.engine.protocol.test_client_quotas import alter
from tests.support.in_process_engine import InProcessEngine
from tests.support.raw_client import RawClient


@pytest.fixture
def engine(engine_factory):
    return engine_factory(brokers=1, admin=False)


def metadata(client: RawClient):
    return client.request(MetadataRequest(topics=None, allow_auto_topic_creation=False), 12, MetadataResponse)


def fetch(client: RawClient):
    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
                           session_id=0, session_epoch=-1, topics=[F(topic="none-here", partitions=[
                               F.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=0,
                                                last_fetched_epoch=-1, log_start_offset=-1,
                                                partition_max_bytes=1 << 20)])],
                           forgotten_topics_data=[], rack_id="")
    return client.request(request, 12, FetchResponse)


def test_a_client_over_its_request_percentage_is_throttled_and_others_are_not(engine):
    admin = RawClient(engine.ports[0])
    try:
        # A thousandth of a percent of one thread: 0.1 ms of the loop's time over the 10 s window.
        assert alter(admin, [({"client-id": "busy"}, {"request_percentage": 0.001})]) == [(0, None)]
    finally:
        admin.close()
    busy, idle = RawClient(engine.ports[0], client_id="busy"), RawClient(engine.ports[0], client_id="idle")
    try:
        throttles = []
        while len(throttles) < 50 and not any(throttles):   # each throttled answer mutes the connection
            throttles.append(metadata(busy).throttle_time_ms)                # answered from a cached body
        assert 0 < max(throttles) <= 1000      # capped at one quota window (quota.window.size.seconds)
        assert fetch(busy).throttle_time_ms > 0                            # a zero-copy answer
        assert all(metadata(idle).throttle_time_ms == 0 for _ in range(20))
        versions = busy.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3,
                                ApiVersionsResponse)
        assert versions.throttle_time_ms == 0  # never counted: a client must always be able to connect
    finally:
        busy.close()
        idle.close()


def test_only_the_handlers_own_steps_are_timed_not_its_waits():
    async def handler():
        await asyncio.sleep(0.2)               # a wait (replication, a long poll): not the loop's time
        return "answer"

    async def scenario():
        timed = Timed(handler())
        assert await timed == "answer"
        return timed.spent
    assert asyncio.run(scenario()) < 0.05


def burn(seconds: float, fail: bool = False) -> str:
    """Use `seconds` of the calling thread's CPU time, whatever the machine's speed or load."""
    started = time.thread_time()
    while time.thread_time() - started < seconds:
        pass
    if fail:
        raise ValueError("refused")
    return "done"


def test_a_requests_work_on_a_worker_thread_counts_its_cpu_time_even_when_it_fails():
    async def scenario():
        with worker_time.counting(worker_time.WorkerTime()) as threads:
            assert await off_loop(burn, 0.05) == "done"            # a big request's decoding, say
            with pytest.raises(ValueError):
                await off_loop(burn, 0.05, True)                   # a batch its check refuses
            return threads.take()
    assert asyncio.run(scenario()) >= 0.1


# The CPU time a compressed batch's check costs its worker thread below (at least), and a
# request quota allowing half of it: quota.window.num - 1 = 10 windows of 1 s are the shortest
# span a rate is measured over, so request_percentage P allows P / 100 x 10 s of a thread's time.
CHECK_CPU_S = 0.6
HALF_OF_IT = CHECK_CPU_S / 2 * 100 / 10


@pytest.fixture
def in_process(tmp_path):
    with InProcessEngine(tmp_path, brokers=1, admin=False) as running:
        yield running.engine


def costly_checks(monkeypatch) -> list[str]:
    """Every compressed batch's check costs its thread at least CHECK_CPU_S of CPU (a batch
    that inflates to that much work, on any machine); the names of the threads it ran on."""
    real, threads = record_checks.check_for_append, []

    def check(records, config, log_name):
        threads.append(threading.current_thread().name)
        real(records, config, log_name)
        burn(CHECK_CPU_S)
    monkeypatch.setattr(record_checks, "check_for_append", check)
    return threads


def gzip_batch(count: int) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=1, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 24)
    for i in range(count):
        builder.append(i, timestamp=None, key=None, value=b"x" * 100, headers=[])
    return bytes(builder.build())


def produce(client: RawClient, topic: str, batch: bytes) -> ProduceResponse:
    P = ProduceRequest.TopicProduceData
    return client.request(ProduceRequest(transactional_id=None, acks=1, timeout_ms=30000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=0, records=batch)])]), 9, ProduceResponse)


def test_the_worker_threads_time_checking_a_compressed_batch_counts_against_the_clients_quota(in_process,
                                                                                             monkeypatch):
    """The loop's own share of the Produce is far below the quota; the check, on a worker
    thread, is twice over it."""
    checked_on = costly_checks(monkeypatch)
    admin = RawClient(in_process.ports[0], timeout=60)
    try:
        assert create_topic(admin, "zipped") == 0
        assert alter(admin, [({"client-id": "zipper"}, {"request_percentage": HALF_OF_IT})]) == [(0, None)]
    finally:
        admin.close()
    zipper = RawClient(in_process.ports[0], timeout=60, client_id="zipper")
    try:
        answer = produce(zipper, "zipped", gzip_batch(10_000))
    finally:
        zipper.close()
    assert answer.responses[0].partition_responses[0].error_code == 0
    assert [name.startswith("record-check") for name in checked_on] == [True]
    assert answer.throttle_time_ms > 0


def test_the_time_encoding_a_big_answer_on_a_worker_thread_weighs_on_the_clients_next_request(in_process,
                                                                                             monkeypatch):
    """The throttle of an answer is decided before it is encoded: the encoding's time counts
    for the requests that follow, as Kafka counts its network threads' time."""
    real, encoded_on = dispatch.encode_response, []

    def costly_encoding(response, api_version, correlation_id):
        encoded_on.append(threading.current_thread().name)
        if encoded_on[-1].startswith("big-request"):
            burn(CHECK_CPU_S)
        return real(response, api_version, correlation_id)
    monkeypatch.setattr(dispatch, "encode_response", costly_encoding)
    admin = RawClient(in_process.ports[0], timeout=60)
    try:
        assert alter(admin, [({"client-id": "asker"}, {"request_percentage": HALF_OF_IT})]) == [(0, None)]
    finally:
        admin.close()
    asker = RawClient(in_process.ports[0], timeout=60, client_id="asker")
    topics = [MetadataRequest.MetadataRequestTopic(topic_id=None, name=f"absent-{i:06}") for i in range(6000)]
    try:
        big = asker.request(MetadataRequest(topics=topics, allow_auto_topic_creation=False), 12, MetadataResponse)
        after = metadata(asker)
    finally:
        asker.close()
    assert len(big.topics) == 6000
    assert any(name.startswith("big-request") for name in encoded_on)      # the frame is over 64 KiB
    assert after.throttle_time_ms > 0


def describe_cluster(client: RawClient) -> DescribeClusterResponse:
    return client.request(DescribeClusterRequest(include_cluster_authorized_operations=False), 0,
                          DescribeClusterResponse)


def test_the_loops_time_encoding_a_small_answer_weighs_on_the_clients_next_request(in_process, monkeypatch):
    """A small answer is encoded on the loop, after its throttle was decided: that time counts
    for the requests that follow too."""
    real, costly = dispatch.encode_response, []

    def costly_encoding(response, api_version, correlation_id):
        if isinstance(response, DescribeClusterResponse) and not costly:
            costly.append(threading.current_thread().name)
            burn(CHECK_CPU_S)
        return real(response, api_version, correlation_id)
    admin = RawClient(in_process.ports[0], timeout=60)
    try:
        assert alter(admin, [({"client-id": "asker"}, {"request_percentage": HALF_OF_IT})]) == [(0, None)]
    finally:
        admin.close()
    monkeypatch.setattr(dispatch, "encode_response", costly_encoding)
    asker = RawClient(in_process.ports[0], timeout=60, client_id="asker")
    try:
        first, after = describe_cluster(asker), describe_cluster(asker)
    finally:
        asker.close()
    assert costly and not costly[0].startswith("big-request")
    assert first.throttle_time_ms == 0 and after.throttle_time_ms > 0
