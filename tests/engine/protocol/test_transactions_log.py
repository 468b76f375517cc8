"""The partition side of transactions over the wire: transactional produce, markers written
with WriteTxnMarkers, the last stable offset, read_committed fetches by kafka-python and
confluent-kafka consumers, DescribeProducers, followers, restart and kill -9."""
import asyncio
import time

import kafka.errors as Errors
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition as AIOTopicPartition
from confluent_kafka import Consumer, TopicPartition as CTopicPartition
from kafka import KafkaConsumer, TopicPartition
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

from engine.storage.records import iter_batches
from tests.engine.cluster.helpers import create_topic, partition_state, start_broker, stop_broker
from tests.engine.protocol.test_bad_input import build_batch
from tests.support.engine_process import EngineProcess
from tests.support.raw_client import RawClient
from tests.engine.protocol.test_produce_fetch import idempotent_batch
from tests.support.txn_wire import (describe_producers, fetch, latest_offset, leader_port, new_producer_id, produce,
                                    txn_batch, write_marker)
from tests.support.waiting import wait_until

# These tests play the transaction coordinator themselves (WriteTxnMarkers by hand), so
# Produce must not ask the real one about their partitions (KIP-890's verification).
NO_COORDINATOR = {"transaction.partition.verification.enable": "false"}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    engine = EngineProcess(tmp_path_factory.mktemp("txn-log") / "data", brokers=3,
                           configs={**NO_COORDINATOR, "log.cleaner.backoff.ms": "200"}).start()
    yield engine
    engine.kill()


@pytest.fixture
def leader(engine, topic_name):
    create_topic(engine.bootstrap, topic_name, 1, 3)
    bootstrap = RawClient(engine.ports[0])
    port = leader_port(bootstrap, topic_name)
    bootstrap.close()
    client = RawClient(port)
    yield client, topic_name
    client.close()


def values_of(data: bytes, *, skip_control: bool = True) -> list[tuple[int, bytes]]:
    out = []
    for position, header in iter_batches(memoryview(data)):
        if skip_control and header.is_control:
            continue
        out += [(r.offset, r.value) for r in DefaultRecordBatch(data[position:position + header.size])]
    return out


def build_two_transactions(client, topic):
    """plain 0-2, A 3-5 (aborted at 9), B 6-7 (committed at 10), A 8; returns (pid_a, pid_b)."""
    assert produce(client, topic, bytes(build_batch([b"plain-0", b"plain-1", b"plain-2"])),
                   transactional_id=None) == (0, 0)
    (pid_a, epoch_a), (pid_b, epoch_b) = new_producer_id(client), new_producer_id(client)
    assert produce(client, topic, txn_batch(pid_a, epoch_a, 0, [b"a-0", b"a-1", b"a-2"])) == (0, 3)
    assert produce(client, topic, txn_batch(pid_b, epoch_b, 0, [b"b-0", b"b-1"])) == (0, 6)
    assert produce(client, topic, txn_batch(pid_a, epoch_a, 3, [b"a-3"])) == (0, 8)
    return pid_a, epoch_a, pid_b, epoch_b


def test_lso_and_read_committed_fetch_over_markers(leader):
    client, topic = leader
    pid_a, epoch_a, pid_b, epoch_b = build_two_transactions(client, topic)
    assert latest_offset(client, topic, read_committed=True) == 3
    assert latest_offset(client, topic, read_committed=False) == 9
    open_ = fetch(client, topic, read_committed=True)
    assert open_.last_stable_offset == 3 and open_.high_watermark == 9
    assert [v for _, v in values_of(bytes(open_.records))] == [b"plain-0", b"plain-1", b"plain-2"]
    assert open_.aborted_transactions == []
    # A non-transactional write of a producer with an open transaction is refused.
    assert produce(client, topic, idempotent_batch(pid_a, epoch_a, 4, 1), transactional_id=None) == \
        (Errors.InvalidTxnStateError.errno, -1)
    assert produce(client, topic, bytes(build_batch([b"x"])), transactional_id=None) == (0, 9)
    assert write_marker(client, pid_a, epoch_a, commit=False, partitions={topic: [0]}) == {(topic, 0): 0}
    assert latest_offset(client, topic, read_committed=True) == 6      # B is still open
    assert write_marker(client, pid_b, epoch_b, commit=True, partitions={topic: [0]}, version=0) == {(topic, 0): 0}
    assert latest_offset(client, topic, read_committed=True) == latest_offset(client, topic, read_committed=False) == 12
    done = fetch(client, topic, read_committed=True)
    assert done.last_stable_offset == 12
    assert [(t.producer_id, t.first_offset) for t in done.aborted_transactions] == [(pid_a, 3)]
    assert fetch(client, topic, read_committed=False).aborted_transactions is None
    # Fetching after A's marker: A's transaction is not reported any more.
    assert fetch(client, topic, offset=11, read_committed=True).aborted_transactions == []
    uncommitted = [b"plain-0", b"plain-1", b"plain-2", b"a-0", b"a-1", b"a-2", b"b-0", b"b-1", b"a-3", b"x"]
    assert [v for _, v in values_of(bytes(done.records))] == uncommitted
    markers = [h.base_offset for _, h in iter_batches(memoryview(bytes(done.records))) if h.is_control]
    assert markers == [10, 11]


def test_a_forged_abort_after_the_commit_takes_nothing_back(leader):
    """WriteTxnMarkers needs no ACL without an authorizer (as in Kafka), so any client can send
    one. An ABORT for a producer whose transaction was committed already finds no open
    transaction: it aborts nothing, and the committed records stay readable; a client's own
    control batch is refused (INVALID_RECORD), whatever producer it names."""
    client, topic = leader
    pid, epoch = new_producer_id(client)
    assert produce(client, topic, txn_batch(pid, epoch, 0, [b"c-0", b"c-1"])) == (0, 0)
    assert write_marker(client, pid, epoch, commit=True, partitions={topic: [0]}) == {(topic, 0): 0}      # 2
    for forged in ({"coordinator_epoch": 0}, {"coordinator_epoch": 99}):
        assert write_marker(client, pid, epoch, commit=False, partitions={topic: [0]}, **forged) == {(topic, 0): 0}
    assert write_marker(client, pid, epoch + 1, commit=False, partitions={topic: [0]}, coordinator_epoch=99) == \
        {(topic, 0): 0}
    marker = bytearray(txn_batch(pid, epoch + 1, 0, [b"forged"]))
    marker[21:23] = (int.from_bytes(marker[21:23], "big") | 0x20).to_bytes(2, "big")   # the control bit
    marker[17:21] = calc_crc32c(bytes(marker[21:])).to_bytes(4, "big")
    assert produce(client, topic, bytes(marker)) == (Errors.InvalidRecordError.errno, -1)
    done = fetch(client, topic, read_committed=True)
    assert done.last_stable_offset == done.high_watermark == 6 and done.aborted_transactions == []
    assert [v for _, v in values_of(bytes(done.records))] == [b"c-0", b"c-1"]


def test_kafka_python_and_confluent_read_committed_consumers(engine, leader):
    client, topic = leader
    pid_a, epoch_a, pid_b, epoch_b = build_two_transactions(client, topic)
    write_marker(client, pid_a, epoch_a, commit=False, partitions={topic: [0]})      # 9
    # A third transaction stays open: read_committed consumers stop before it.
    open_pid, open_epoch = new_producer_id(client)
    assert produce(client, topic, txn_batch(open_pid, open_epoch, 0, [b"open-0"])) == (0, 10)
    write_marker(client, pid_b, epoch_b, commit=True, partitions={topic: [0]})       # 11
    assert produce(client, topic, bytes(build_batch([b"after"])), transactional_id=None) == (0, 12)
    assert latest_offset(client, topic, read_committed=True) == 10
    committed = [b"plain-0", b"plain-1", b"plain-2", b"b-0", b"b-1"]
    assert kafka_python_values(engine, topic, "read_committed", 5) == committed
    assert confluent_values(engine, topic, "read_committed", 5) == committed
    assert aiokafka_values(engine, topic, "read_committed", 5) == committed
    everything = [b"plain-0", b"plain-1", b"plain-2", b"a-0", b"a-1", b"a-2", b"b-0", b"b-1", b"a-3", b"open-0",
                  b"after"]
    assert kafka_python_values(engine, topic, "read_uncommitted", 11) == everything
    # The open transaction commits: read_committed consumers get it and what follows.
    write_marker(client, open_pid, open_epoch, commit=True, partitions={topic: [0]})
    assert confluent_values(engine, topic, "read_committed", 7) == committed + [b"open-0", b"after"]


def kafka_python_values(engine, topic, isolation, count):
    consumer = KafkaConsumer(bootstrap_servers=engine.bootstrap, isolation_level=isolation,
                             enable_auto_commit=False, request_timeout_ms=30_000)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)
    got = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            got += [r.value for r in records]
        if len(got) >= count:
            # One more poll: nothing past what is stable may show up.
            got += [r.value for records in consumer.poll(timeout_ms=500).values() for r in records]
            break
    consumer.close()
    return got


def aiokafka_values(engine, topic, isolation, count):
    async def scenario():
        consumer = AIOKafkaConsumer(bootstrap_servers=engine.bootstrap, isolation_level=isolation,
                                    enable_auto_commit=False)
        await consumer.start()
        try:
            tp = AIOTopicPartition(topic, 0)
            consumer.assign([tp])
            consumer.seek(tp, 0)
            got = []
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and len(got) < count:
                for messages in (await consumer.getmany(timeout_ms=500)).values():
                    got += [m.value for m in messages]
            for messages in (await consumer.getmany(timeout_ms=1000)).values():
                got += [m.value for m in messages]
            return got
        finally:
            await consumer.stop()
    return asyncio.run(scenario())


def confluent_values(engine, topic, isolation, count):
    consumer = Consumer({"bootstrap.servers": engine.bootstrap, "group.id": f"{topic}-{isolation}",
                         "isolation.level": isolation, "enable.auto.commit": False})
    consumer.assign([CTopicPartition(topic, 0, 0)])
    got = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(got) < count:
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            got.append(message.value())
    extra = consumer.poll(1.0)
    if extra is not None and not extra.error():
        got.append(extra.value())
    consumer.close()
    return got


def test_describe_producers_and_marker_errors(leader, engine):
    client, topic = leader
    pid, epoch = new_producer_id(client)
    assert produce(client, topic, txn_batch(pid, epoch, 0, [b"t-0", b"t-1"])) == (0, 0)
    (state,) = [p for p in describe_producers(client, topic).active_producers if p.producer_id == pid]
    assert (state.producer_epoch, state.last_sequence, state.coordinator_epoch, state.current_txn_start_offset) == \
        (epoch, 1, -1, 0)
    assert state.last_timestamp > 0
    assert write_marker(client, pid, epoch, commit=True, partitions={topic: [0]}, coordinator_epoch=7) == \
        {(topic, 0): 0}
    (state,) = [p for p in describe_producers(client, topic).active_producers if p.producer_id == pid]
    assert (state.coordinator_epoch, state.current_txn_start_offset) == (7, -1)
    # An older coordinator epoch is fenced; an older producer epoch is refused; nothing is written.
    assert write_marker(client, pid, epoch, commit=False, partitions={topic: [0]}, coordinator_epoch=6) == \
        {(topic, 0): Errors.TransactionCoordinatorFencedError.errno}
    assert produce(client, topic, txn_batch(pid, epoch + 1, 0, [b"t-2"])) == (0, 3)
    assert write_marker(client, pid, epoch, commit=False, partitions={topic: [0]}, coordinator_epoch=7) == \
        {(topic, 0): Errors.InvalidProducerEpochError.errno}
    assert latest_offset(client, topic, read_committed=False) == 4
    assert write_marker(client, pid, epoch, commit=False, partitions={"no-such-topic": [0], topic: [5]}) == {
        ("no-such-topic", 0): Errors.UnknownTopicOrPartitionError.errno,
        (topic, 5): Errors.UnknownTopicOrPartitionError.errno}
    other = RawClient(next(p for p in engine.ports if p != client.sock.getpeername()[1]))
    try:
        assert write_marker(other, pid, epoch + 1, commit=False, partitions={topic: [0]}) == \
            {(topic, 0): Errors.NotLeaderForPartitionError.errno}
        # A follower answers too, as in Kafka, from the producer state it builds as it appends.
        def producers(c):
            return {(s.producer_id, s.producer_epoch, s.last_sequence, s.current_txn_start_offset)
                    for s in describe_producers(c, topic).active_producers}
        wait_until(lambda: producers(other) == producers(client), message="the follower's producer state")
        assert (pid, epoch + 1, 0, 3) in producers(other)
        # A broker without a replica of the partition: NOT_LEADER_OR_FOLLOWER.
        single = f"{topic}-rf1"
        create_topic(engine.bootstrap, single, 1, 1)
        holder = partition_state(engine.bootstrap, single)[0][0]
        elsewhere = RawClient(next(port for broker, port in enumerate(engine.ports) if broker != holder))
        try:
            assert describe_producers(elsewhere, single).error_code == Errors.NotLeaderForPartitionError.errno
        finally:
            elsewhere.close()
    finally:
        other.close()


def test_a_new_leader_keeps_the_lso_and_the_aborted_transactions(engine, leader):
    client, topic = leader
    pid_a, epoch_a, pid_b, epoch_b = build_two_transactions(client, topic)
    write_marker(client, pid_a, epoch_a, commit=False, partitions={topic: [0]})    # 9; B stays open
    before = fetch(client, topic, read_committed=True)
    assert before.last_stable_offset == 6
    old_leader, replicas, _ = partition_state(engine.bootstrap, topic)[0]
    wait_until(lambda: sorted(partition_state(engine.bootstrap, topic)[0][2]) == sorted(replicas), timeout=30)
    stop_broker(engine, old_leader)
    try:
        wait_until(lambda: partition_state(engine.bootstrap, topic)[0][0] not in (old_leader, -1), timeout=30)
        new_port = engine.ports[partition_state(engine.bootstrap, topic)[0][0]]
        follower = RawClient(new_port)
        try:
            # The new leader's high watermark catches up once the last ISR member fetches.
            wait_until(lambda: fetch(follower, topic, read_committed=True).high_watermark == 10, timeout=30)
            after = fetch(follower, topic, read_committed=True)
            assert after.last_stable_offset == 6 and after.high_watermark == 10
            assert [(t.producer_id, t.first_offset) for t in after.aborted_transactions] == [(pid_a, 3)]
            assert [p.current_txn_start_offset for p in describe_producers(follower, topic).active_producers
                    if p.producer_id == pid_b] == [6]
            assert write_marker(follower, pid_b, epoch_b, commit=True, partitions={topic: [0]}) == {(topic, 0): 0}
            assert latest_offset(follower, topic, read_committed=True) == 11
        finally:
            follower.close()
    finally:
        start_broker(engine, old_leader)


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_open_transactions_and_txnindex_survive_restart(engine_factory, topic_name, stop):
    engine = engine_factory(brokers=1, configs=NO_COORDINATOR)
    create_topic(engine.bootstrap, topic_name, 1, 1)
    client = RawClient(engine.ports[0])
    pid_a, epoch_a, pid_b, epoch_b = build_two_transactions(client, topic_name)
    write_marker(client, pid_a, epoch_a, commit=False, partitions={topic_name: [0]})   # 9; B open from 6
    client.close()
    txnindex = engine.data_dir / "broker-0" / f"{topic_name}-0" / "00000000000000000000.txnindex"
    if stop == "sigterm":
        assert engine.terminate() == 0
    else:
        engine.kill()
    assert txnindex.read_bytes()[:10] == (0).to_bytes(2, "big") + pid_a.to_bytes(8, "big")
    engine.start()
    client = RawClient(engine.ports[0])
    try:
        wait_until(lambda: fetch(client, topic_name, read_committed=True).high_watermark == 10, timeout=30)
        after = fetch(client, topic_name, read_committed=True)
        assert after.last_stable_offset == 6
        assert [(t.producer_id, t.first_offset) for t in after.aborted_transactions] == [(pid_a, 3)]
        (b,) = [p for p in describe_producers(client, topic_name).active_producers if p.producer_id == pid_b]
        assert (b.current_txn_start_offset, b.last_sequence) == (6, 1)
        assert write_marker(client, pid_b, epoch_b, commit=True, partitions={topic_name: [0]}) == {(topic_name, 0): 0}
        assert latest_offset(client, topic_name, read_committed=True) == 11
    finally:
        client.close()


def keyed_batch(key: bytes, value: bytes) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=int(time.time() * 1000), key=key, value=value, headers=[])
    return bytes(builder.build())


def all_records(client, topic):
    """(offset, key, value) of every data record from offset 0, across segments and gaps."""
    out, offset = [], 0
    end = latest_offset(client, topic, read_committed=False)
    while offset < end:
        data = bytes(fetch(client, topic, offset=offset, read_committed=False).records)
        batches = list(iter_batches(memoryview(data)))
        assert batches, f"nothing at {offset}"
        for position, header in batches:
            if not header.is_control:
                out += [(r.offset, r.key, r.value) for r in DefaultRecordBatch(data[position:position + header.size])
                        if r.offset >= offset]
            offset = header.next_offset
    return out


def test_compaction_drops_aborted_data_and_stays_below_the_lso(engine, topic_name):
    create_topic(engine.bootstrap, topic_name, 1, 1, {"cleanup.policy": "compact", "segment.bytes": "1024",
                                                       "min.cleanable.dirty.ratio": "0.01"})
    bootstrap = RawClient(engine.ports[0])
    client = RawClient(leader_port(bootstrap, topic_name))
    bootstrap.close()
    (pid_a, epoch_a), (pid_c, epoch_c) = new_producer_id(client), new_producer_id(client)

    written_after_c = []

    def filler(count=8, key=b"k3"):
        for _ in range(count):
            error, offset = produce(client, topic_name, keyed_batch(key, b"x" * 300), transactional_id=None)
            assert error == 0
            if key == b"k3":
                written_after_c.append(offset)
    assert produce(client, topic_name, txn_batch(pid_a, epoch_a, 0, [b"aborted"], key=b"k1"))[0] == 0
    write_marker(client, pid_a, epoch_a, commit=False, partitions={topic_name: [0]})
    filler(6, key=b"f")                      # rolls: A's transaction lies in segments of its own
    assert produce(client, topic_name, txn_batch(pid_c, epoch_c, 0, [b"open"], key=b"k3"))[0] == 0
    filler()
    try:
        wait_until(lambda: b"aborted" not in [v for _, _, v in all_records(client, topic_name)] or filler(1),
                   timeout=60, message="the aborted record compacted away")
        # The cleaner runs every 200 ms; for the next ~2 s of writes, nothing at or after the
        # open transaction is compacted (its record, nor the later k3 records that would
        # supersede it): the cleaner never goes past the last stable offset.
        watch_until = time.monotonic() + 2
        while time.monotonic() < watch_until:
            filler(1)
            records = all_records(client, topic_name)
            assert (b"k3", b"open") in [(k, v) for _, k, v in records]
            assert [o for o, k, v in records if k == b"k3" and v != b"open"] == written_after_c
            time.sleep(0.2)
        write_marker(client, pid_c, epoch_c, commit=True, partitions={topic_name: [0]})
        wait_until(lambda: b"open" not in [v for _, _, v in all_records(client, topic_name)] or filler(1),
                   timeout=60, message="the committed record superseded once stable")
    finally:
        client.close()

