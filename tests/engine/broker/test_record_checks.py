"""Compressed batches are checked off the event loop: while a big gzip batch is
inflated and its records walked, other connections are answered, and appends to one
partition keep the order their requests arrived in."""
import struct
import threading
import time

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

from engine.protocol import registry
from engine.storage import log_validator
from tests.engine.protocol.test_bad_input import build_batch, create_topic
from tests.support.in_process_engine import InProcessEngine
from tests.support.raw_client import RawClient
from tests.support.record_batches import CODECS, HEADER_SIZE, record, records, seal
from tests.support.waiting import wait_until

RECORDS = 200_000     # ~0.25 s of record walking on an idle core: many GIL switch intervals


@pytest.fixture(scope="module")
def big_gzip_batch() -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=1, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 26)
    for i in range(RECORDS):
        builder.append(i, timestamp=None, key=None, value=b"x", headers=[])
    return bytes(builder.build())


@pytest.fixture
def engine(tmp_path):
    with InProcessEngine(tmp_path, brokers=1, admin=False) as running:
        yield running.engine


WAIT_BOUND_S = 30       # a bound for a loop that never answers, not a speed threshold


class Checks:
    """Engine-side times of the compressed-batch checks (in whatever thread runs them) and of
    ApiVersions answers, on the same monotonic clock (the engine runs in this process).

    With `wait_for_an_answer`, a check first waits (bounded) until the engine has answered
    another connection's ApiVersions after the check began: off the loop that answer comes at
    once, whatever the machine's speed; on the loop it never can, the loop being held."""

    def __init__(self, monkeypatch, *, wait_for_an_answer: bool = False) -> None:
        self.windows: list[tuple[float, float]] = []
        self.started = threading.Event()
        self.served: list[float] = []
        self.answered = threading.Event()
        real = log_validator.check_batch_records

        def timed(records, position, header, config, timestamps=None):
            if not header.compression_type:
                return real(records, position, header, config, timestamps)
            began = time.monotonic()
            self.started.set()
            try:
                if wait_for_an_answer:
                    self.answered.clear()
                    self.answered.wait(WAIT_BOUND_S)
                return real(records, position, header, config, timestamps)
            finally:
                self.windows.append((began, time.monotonic()))
        monkeypatch.setattr(log_validator, "check_batch_records", timed)

    def answer(self) -> None:
        self.served.append(time.monotonic())
        self.answered.set()

    def served_during(self, window: tuple[float, float]) -> int:
        return sum(window[0] < t < window[1] for t in self.served)


def produce(client: RawClient, topic: str, batch: bytes):
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=30000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=0, records=batch)])])
    return client.request(request, 9, ProduceResponse).responses[0].partition_responses[0]


def test_other_connections_are_answered_while_a_big_compressed_batch_is_checked(engine, big_gzip_batch, monkeypatch):
    checks = Checks(monkeypatch, wait_for_an_answer=True)
    port = engine.ports[0]
    setup = RawClient(port, timeout=60)
    assert create_topic(setup, "zipped", {"max.message.bytes": str(4 << 20)}) == 0
    stopping = threading.Event()

    def ping():
        client = RawClient(port, timeout=60)
        try:
            while not stopping.is_set():
                client.request(ApiVersionsRequest(client_software_name="p", client_software_version="1"), 3,
                               ApiVersionsResponse)
                time.sleep(0.001)
        finally:
            client.close()

    async def versions(ctx, request):
        checks.answer()
        return await spec.handler(ctx, request)

    pinger = threading.Thread(target=ping, daemon=True)
    with registry.intercept(18, versions) as spec:
        pinger.start()
        try:
            wait_until(lambda: checks.served, message="the pinger's first answer")
            answer = produce(setup, "zipped", big_gzip_batch)
        finally:
            stopping.set()
            pinger.join(30)
            setup.close()
    assert answer.error_code == 0 and answer.base_offset == 0
    (window,) = checks.windows                  # checked once: the append did not inflate it again
    assert checks.served_during(window) >= 1    # before: the check held the loop, nothing else was answered


def test_appends_to_a_partition_keep_their_arrival_order_across_a_compressed_check(engine, big_gzip_batch,
                                                                                  monkeypatch):
    """An uncompressed batch sent while a compressed one to the same partition is being
    checked is appended after it, though its own check is instant."""
    checks = Checks(monkeypatch)
    first, second = RawClient(engine.ports[0], timeout=60), RawClient(engine.ports[0], timeout=60)
    answers = {}
    try:
        assert create_topic(first, "ordered", {"max.message.bytes": str(4 << 20)}) == 0
        sender = threading.Thread(target=lambda: answers.update(big=produce(first, "ordered", big_gzip_batch)))
        sender.start()
        assert checks.started.wait(60)
        answers["small"] = produce(second, "ordered", bytes(build_batch([b"after"])))
        sender.join(60)
    finally:
        first.close()
        second.close()
    assert answers["big"].error_code == 0 and answers["small"].error_code == 0
    assert answers["big"].base_offset == 0
    assert answers["small"].base_offset == RECORDS


def test_a_lying_compressed_batch_is_still_refused_as_invalid_record(engine):
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=1, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i in range(3):
        builder.append(i, timestamp=None, key=None, value=b"v", headers=[])
    batch = bytearray(builder.build())
    struct.pack_into(">i", batch, 57, 5)           # recordsCount 5: the batch holds 3
    struct.pack_into(">i", batch, 23, 4)           # lastOffsetDelta, to match the lie
    struct.pack_into(">I", batch, 17, calc_crc32c(memoryview(batch)[21:]))   # and re-signed
    client = RawClient(engine.ports[0], timeout=60)
    try:
        assert create_topic(client, "lies") == 0
        answer = produce(client, "lies", bytes(batch))
    finally:
        client.close()
    assert answer.error_code == 87        # INVALID_RECORD, from the worker thread's check


def test_a_compressed_batch_is_refused_for_a_lie_inside_a_record_or_bytes_after_its_stream(engine):
    body = records([b"one", b"two", b"three"])
    lying = record(0, b"k", b"v") + record(1, b"k", b"v", [(b"h", b"x")], header_count=7) + record(2, b"k", b"v")
    gzip_member = seal(body, 3, codec=CODECS["gzip"])[HEADER_SIZE:]
    client = RawClient(engine.ports[0], timeout=60)
    try:
        assert create_topic(client, "inside") == 0
        assert produce(client, "inside", bytes(seal(lying, 3, codec=CODECS["lz4"]))).error_code == 87
        assert produce(client, "inside", bytes(seal(body, 3, codec=CODECS["gzip"],
                                                    compressed=bytes(gzip_member) * 2))).error_code == 2
        appended = produce(client, "inside", bytes(seal(body, 3, codec=CODECS["gzip"])))
    finally:
        client.close()
    assert appended.error_code == 0 and appended.base_offset == 0     # nothing refused was stored
