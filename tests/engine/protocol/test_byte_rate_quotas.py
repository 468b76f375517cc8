"""Byte-rate client quotas (KIP-13, KIP-219) through the wire: `producer_byte_rate` and
`consumer_byte_rate` set with AlterClientQuotas throttle Produce and Fetch answers
(throttle_time_ms), every record is still stored and served, and a throttled connection's
next request is read only once its throttle time has passed on the engine's clock.

One in-process engine of 2 brokers for the module; the tests that need exact figures or the
mute's deadline run the engine on a manual clock (engine/clock.py), so no wall time is
asserted. The rate starts as bytes over 10 s (quota.window.num 11 - 1 windows of 1 s): with
a 1 KB/s quota, 13 KB sent at once are 1.3 KB/s, i.e. a 3 s throttle.
"""
from __future__ import annotations

import select
import time

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from engine import clock
from engine.clock import ManualClock
from tests.engine.protocol.test_client_quotas import alter
from tests.support.in_process_engine import InProcessEngine
from tests.support.partition_io import read_values
from tests.support.raw_client import RawClient

QUOTA = 1000.0          # bytes per second
PRODUCE, FETCH = "producer_byte_rate", "consumer_byte_rate"


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    with InProcessEngine(tmp_path_factory.mktemp("quotas"), brokers=2, admin=False) as engine:
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{engine.engine.ports[0]}")
        try:   # every leader on broker 0, so one connection reaches them all
            admin.create_topics([NewTopic("appended", replica_assignments={0: [0]},
                                          topic_configs={"message.timestamp.type": "LogAppendTime"}),
                                 NewTopic("replicated", replica_assignments={0: [0, 1]}),
                                 NewTopic("clients", replica_assignments={0: [0]}),
                                 NewTopic("capped", replica_assignments={0: [0]}),
                                 NewTopic("paced", replica_assignments={0: [0]}),
                                 NewTopic("rdk-read", replica_assignments={0: [0]}),
                                 NewTopic("kp-sent", replica_assignments={0: [0]}),
                                 NewTopic("rdk-sent", replica_assignments={0: [0]})])
        finally:
            admin.close()
        yield engine


@pytest.fixture
def port(running) -> int:
    return running.engine.ports[0]


@pytest.fixture
def manual():
    with clock.use(ManualClock(int(time.time() * 1000))) as manual_clock:
        yield manual_clock


def set_quota(port: int, client_id: str | None, key: str, value: float | None) -> None:
    setup = RawClient(port)
    try:
        assert alter(setup, [({"client-id": client_id}, {key: value})]) == [(0, None)]
    finally:
        setup.close()


def batch(count: int, size: int = 1000, *, first: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 22)
    for i in range(count):
        builder.append(i, timestamp=int(time.time() * 1000), key=None, value=b"%06d" % (first + i) + b"." * (size - 6),
                       headers=[])
    return bytes(builder.build())


def produce_request(topic: str, records: bytes, acks: int = -1) -> ProduceRequest:
    P = ProduceRequest.TopicProduceData
    return ProduceRequest(transactional_id=None, acks=acks, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=0, records=records)])])


def produce(client: RawClient, topic: str, records: bytes):
    """(throttle_time_ms, the partition's answer) of an acks=all Produce v9."""
    response = client.request(produce_request(topic, records), 9, ProduceResponse)
    return response.throttle_time_ms, response.responses[0].partition_responses[0]


def send(client: RawClient, request, version: int) -> None:
    """Send without waiting for an answer."""
    client.correlation_id += 1
    request.with_header(correlation_id=client.correlation_id, client_id=client.client_id)
    client.send_bytes(request.encode(version=version, header=True, framed=True))


def fetch_request(topic: str, offset: int = 0) -> FetchRequest:
    F = FetchRequest.FetchTopic
    return FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24, isolation_level=0, session_id=0,
                        session_epoch=-1, topics=[F(topic=topic, partitions=[F.FetchPartition(
                            partition=0, current_leader_epoch=-1, fetch_offset=offset, log_start_offset=-1,
                            partition_max_bytes=1 << 24)])], forgotten_topics_data=[], rack_id="")


def values_in(records: bytes) -> list[bytes]:
    out, batches = [], MemoryRecords(records)
    while (b := batches.next_batch()) is not None:
        out += [r.value for r in b]
    return out


def kafka_throttle(produce_bytes: float, quota: float = QUOTA, window_ms: int = 10_000) -> int:
    """Kafka's ClientQuotaManager throttle time for bytes sent at once by a new client."""
    return round((produce_bytes / (window_ms / 1000) - quota) / quota * window_ms)


def test_a_producer_over_its_quota_is_throttled_and_every_record_is_stored(port, manual):
    set_quota(port, "greedy", PRODUCE, QUOTA)
    greedy, free = RawClient(port, client_id="greedy"), RawClient(port, client_id="free")
    try:
        records = batch(13)
        throttle_ms, answer = produce(greedy, "appended", records)
        assert answer.error_code == 0 and throttle_ms == kafka_throttle(len(records)) > 0
        assert produce(free, "appended", batch(13))[0] == 0          # no quota for this client id
        data = free.request(fetch_request("appended", answer.base_offset), 11, FetchResponse)
        assert values_in(data.responses[0].partitions[0].records)[:13] == [b"%06d" % i + b"." * 994
                                                                         for i in range(13)]
    finally:
        greedy.close()
        free.close()
    set_quota(port, "greedy", PRODUCE, None)
    again = RawClient(port, client_id="greedy")
    try:
        assert produce(again, "appended", batch(13))[0] == 0          # the quota is gone
    finally:
        again.close()


def test_a_throttled_connection_is_not_read_until_its_throttle_time_has_passed(port, manual):
    """KIP-219: a client that ignores throttle_time_ms and sends its next request at once is
    answered only after the mute: its records are appended (LogAppendTime, the engine's
    clock) no earlier than the first answer's time plus its throttle time."""
    set_quota(port, "impatient", PRODUCE, QUOTA)
    client = RawClient(port, client_id="impatient", timeout=60)
    try:
        answered_at = manual.now_ms()
        throttle_ms, first = produce(client, "appended", batch(13))      # answered at once: the clock stands still
        assert throttle_ms > 0 and first.error_code == 0
        send(client, produce_request("appended", batch(1, 10)), 9)
        deadline = time.monotonic() + 60
        while not select.select([client.sock], [], [], 0.1)[0]:    # move the engine's clock until answered
            assert time.monotonic() < deadline, "the muted connection was never read again"
            manual.advance(250)
        second = ProduceResponse.decode(client.read_frame(), version=9, header=True)
        appended = second.responses[0].partition_responses[0]
        assert appended.error_code == 0
        assert appended.log_append_time_ms >= answered_at + throttle_ms
    finally:
        client.close()
        set_quota(port, "impatient", PRODUCE, None)


def test_acks_0_gets_no_answer_but_its_connection_is_muted_all_the_same(port, manual):
    set_quota(port, "fire-and-forget", PRODUCE, QUOTA)
    client = RawClient(port, client_id="fire-and-forget", timeout=60)
    try:
        sent_at, records = manual.now_ms(), batch(13)
        send(client, produce_request("appended", records, acks=0), 9)
        send(client, ApiVersionsRequest(), 0)
        deadline = time.monotonic() + 60
        while not select.select([client.sock], [], [], 0.1)[0]:    # move the engine's clock until answered
            assert time.monotonic() < deadline, "the muted connection was never read again"
            manual.advance(250)
        assert ApiVersionsResponse.decode(client.read_frame(), version=0, header=True).error_code == 0
        assert manual.now_ms() >= sent_at + kafka_throttle(len(records))      # read only after the mute
    finally:
        client.close()
        set_quota(port, "fire-and-forget", PRODUCE, None)


def test_a_consumer_over_its_quota_is_answered_empty_and_its_bytes_are_not_counted(running, port, manual):
    """Kafka's throttled Fetch: no partitions, the throttle time of the answer it would have
    been, and its bytes uncounted again, so that the same fetch once the mute is over is
    throttled for its own bytes only.

    The 13 KB batch is bigger than the consumer's 10 KB window, so it is never delivered to
    it: the same as on Kafka."""
    feeder = RawClient(port, client_id="feeder")
    consumer = RawClient(port, client_id="greedy-consumer")
    try:
        base = produce(feeder, "clients", batch(13))[1].base_offset
        send(feeder, fetch_request("clients", base), 11)
        unthrottled = feeder.read_frame()
        assert FetchResponse.decode(unthrottled, version=11, header=True).throttle_time_ms == 0
        set_quota(port, "greedy-consumer", FETCH, QUOTA)
        bytes_out = running.engine.brokers[0].metrics.topics["clients"].bytes_out
        throttles = []
        for _ in range(2):
            send(consumer, fetch_request("clients", base), 11)
            response = FetchResponse.decode(consumer.read_frame(), version=11, header=True)
            assert response.responses == []
            throttles.append(response.throttle_time_ms)
            manual.advance(response.throttle_time_ms)
        # The bytes the answer would have had (after the size prefix) are what the quota counts.
        assert throttles[0] == kafka_throttle(len(unthrottled)) > 0
        assert running.engine.brokers[0].metrics.topics["clients"].bytes_out == bytes_out    # BytesOutPerSec: nothing sent
        # Then the same bytes over 10 s and the first throttle's part of a second (the emptied
        # sample still marks the window's start); had the first answer's bytes stayed counted,
        # twice the bytes: a 16 s throttle.
        window_ms = 10_000 + throttles[0] % 1000
        assert throttles[1] == round((len(unthrottled) / (window_ms / 1000) - QUOTA) / QUOTA * window_ms) < 4000
    finally:
        feeder.close()
        consumer.close()
        set_quota(port, "greedy-consumer", FETCH, None)


def test_a_consumer_within_its_quota_gets_its_data_and_then_waits(port, manual):
    """Fifteen 1 KB batches against 1 KB/s: the first answer is capped to fit the 10 KB window
    with its headers and is not throttled; the next one would pass the quota and is answered
    empty; once the first window's bytes have aged out (11 s), the rest arrives."""
    feeder = RawClient(port, client_id="paced-feeder")
    consumer = RawClient(port, client_id="paced-consumer")
    try:
        base = produce(feeder, "paced", batch(1))[1].base_offset
        for _ in range(14):
            produce(feeder, "paced", batch(1))
        set_quota(port, "paced-consumer", FETCH, QUOTA)
        first = consumer.request(fetch_request("paced", base), 11, FetchResponse)
        assert first.throttle_time_ms == 0
        got = values_in(first.responses[0].partitions[0].records)
        assert 5 <= len(got) < 15
        second = consumer.request(fetch_request("paced", base + len(got)), 11, FetchResponse)
        assert second.throttle_time_ms > 0 and second.responses == []
        manual.advance(11_000)
        rest = consumer.request(fetch_request("paced", base + len(got)), 11, FetchResponse)
        got += values_in(rest.responses[0].partitions[0].records)
        assert [v[:6] for v in got] == [b"000000"] * 15
    finally:
        feeder.close()
        consumer.close()
        set_quota(port, "paced-consumer", FETCH, None)


def test_replica_fetchers_are_not_throttled_by_client_quotas(port, manual):
    """Every client id's consumer quota is 1 byte/s and the clock stands still: a throttled
    follower would stay muted, and acks=all could never complete."""
    set_quota(port, None, FETCH, 1.0)
    client = RawClient(port, client_id="replicated-producer", timeout=30)
    try:
        for _ in range(3):
            throttle_ms, answer = produce(client, "replicated", batch(13))
            assert (answer.error_code, throttle_ms) == (0, 0)
    finally:
        client.close()
        set_quota(port, None, FETCH, None)


def test_a_consumers_fetch_is_capped_at_its_quota_window(port, manual):
    """As Kafka's getMaxValueInQuotaWindow: with 1 KB/s, at most 10 KB a response (one whole
    batch at least); without a quota the same fetch returns everything."""
    feeder = RawClient(port, client_id="capped-feeder")
    capped = RawClient(port, client_id="capped-consumer")
    try:
        base = produce(feeder, "capped", batch(6))[1].base_offset
        for _ in range(2):
            produce(feeder, "capped", batch(6))
        everything = feeder.request(fetch_request("capped", base), 11, FetchResponse).responses[0].partitions[0]
        assert len(values_in(everything.records)) == 18
        set_quota(port, "capped-consumer", FETCH, QUOTA)
        records = capped.request(fetch_request("capped", base), 11, FetchResponse).responses[0].partitions[0].records
        assert 6 * 1000 < len(records) <= 10 * QUOTA and len(values_in(records)) == 6     # + a partial batch
    finally:
        feeder.close()
        capped.close()
        set_quota(port, "capped-consumer", FETCH, None)


def test_real_clients_see_the_throttle_and_lose_nothing(port):
    """kafka-python's and librdkafka's producers and librdkafka's consumer, on the wall clock:
    13 KB against 1 KB/s is over the quota however slowly they are sent (the rate spans 11 s
    at most), and the clients report the broker's throttle time."""
    bootstrap = f"127.0.0.1:{port}"
    set_quota(port, "kp-producer", PRODUCE, QUOTA)
    set_quota(port, "rdk-producer", PRODUCE, QUOTA)
    set_quota(port, "rdk-consumer", FETCH, QUOTA)
    try:
        kp = KafkaProducer(bootstrap_servers=bootstrap, client_id="kp-producer", linger_ms=100, batch_size=1 << 20)
        try:
            for i in range(13):
                kp.send("kp-sent", b"kp%04d" % i, partition=0)
                kp.send("kp-sent", b"." * 1000, partition=0)
            kp.flush(60)
            throttled = [value for group in kp.metrics().values() for name, value in group.items()
                         if name == "throttle-time-max"]
            assert throttled and max(throttled) > 0
        finally:
            kp.close(0)
        assert [v for v in read_values(bootstrap, "kp-sent", 26) if v.startswith(b"kp")] == [
            b"kp%04d" % i for i in range(13)]
        throttles = []
        rdk = Producer({"bootstrap.servers": bootstrap, "client.id": "rdk-producer", "linger.ms": 100,
                        "throttle_cb": lambda event: throttles.append(event.throttle_time)})
        for i in range(13):
            rdk.produce("rdk-sent", b"rdk%04d" % i + b"." * 993, partition=0)
        assert rdk.flush(60) == 0
        rdk.poll(0)
        assert throttles and max(throttles) > 0
        feeder = RawClient(port, client_id="rdk-feeder")
        try:     # one batch each: a batch bigger than the consumer's window would never reach it
            for i in range(13):
                produce(feeder, "rdk-read", batch(1, first=i))
        finally:
            feeder.close()
        consumed, fetch_throttles = [], []
        consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": "rdk-consumer", "group.id": "quota-readers",
                             "enable.auto.commit": False,
                             "throttle_cb": lambda event: fetch_throttles.append(event.throttle_time)})
        try:
            consumer.assign([TopicPartition("rdk-read", 0, OFFSET_BEGINNING)])     # no group: nothing to leave
            deadline = time.monotonic() + 90
            while (len(consumed) < 13 or not fetch_throttles) and time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is not None and message.error() is None:
                    consumed.append(message.value())
        finally:
            consumer.close()
        assert [v[:6] for v in consumed] == [b"%06d" % i for i in range(13)]
        assert fetch_throttles and max(fetch_throttles) > 0
    finally:
        for client_id, key in (("kp-producer", PRODUCE), ("rdk-producer", PRODUCE), ("rdk-consumer", FETCH)):
            set_quota(port, client_id, key, None)
