"""Share groups with the real share consumer: confluent-kafka's ShareConsumer (librdkafka 2.16),
in implicit and explicit acknowledgement mode. Each member polls on its own thread, as separate
processes would. (RENEW is not in confluent-kafka's AcknowledgeType: test_share_protocol.py
covers it with raw requests.)"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

from tests.support.groups import create_topic, set_group_configs
from tests.support.share import SHARE_TEST_CONFIGS, describe_share_offsets
from tests.support.waiting import wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def produce_one_by_one(bootstrap: str, topic: str, count: int, prefix: str = "r") -> None:
    """Each record in a batch of its own, so that acquisition (batch by batch) can split them."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 1})
    for i in range(count):
        producer.produce(topic, value=f"{prefix}{i}".encode())
        producer.poll(0)
    assert producer.flush(30) == 0


def share_consumer(bootstrap: str, group: str, topic: str, **config) -> ShareConsumer:
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "max.poll.records": 10,
                              **config})
    consumer.subscribe([topic])
    return consumer


@pytest.fixture
def queue(share_engine, request):
    topic = f"q-{uuid.uuid4().hex[:8]}"
    group = f"g-{topic}"
    create_topic(share_engine.bootstrap, topic, 1)
    set_group_configs(share_engine.bootstrap, group, {"share.auto.offset.reset": "earliest"})
    return topic, group


class Members:
    """N share consumers polling on their own threads until `total` records were received."""

    def __init__(self, bootstrap: str, group: str, topic: str, count: int, total: int, *, mode: str) -> None:
        self.received: list[tuple[str, int, int]] = []           # (member, offset, delivery count)
        self.lock = threading.Lock()
        self.total, self.mode = total, mode
        self.errors: list[str] = []
        self.threads = [threading.Thread(target=self._run, args=(bootstrap, group, topic, f"m{i}"), daemon=True)
                        for i in range(count)]
        self.done = threading.Event()

    def _run(self, bootstrap, group, topic, name) -> None:
        consumer = share_consumer(bootstrap, group, topic, **{"client.id": name,
                                                              "share.acknowledgement.mode": self.mode})
        try:
            while not self.done.is_set():
                for message in consumer.poll(0.5):
                    if message.error():
                        self.errors.append(str(message.error()))
                        continue
                    time.sleep(0.002)            # the work: long enough for the others to take turns
                    with self.lock:
                        self.received.append((name, message.offset(), message.delivery_count()))
                    if self.mode == "explicit":
                        consumer.acknowledge(message, AcknowledgeType.ACCEPT)
                if self.mode == "explicit":
                    consumer.commit_sync(10)
                with self.lock:
                    if len(self.received) >= self.total:
                        self.done.set()
            # The last poll's records: implicit mode accepts them at the next poll or commit, and
            # librdkafka's close() does not, so a member that stopped would release them.
            consumer.commit_sync(10)
        finally:
            consumer.close()

    def run(self, timeout: float = 60) -> None:
        for thread in self.threads:
            thread.start()
        assert self.done.wait(timeout), f"received {len(self.received)} of {self.total}: {self.errors}"
        for thread in self.threads:
            thread.join(30)


@pytest.mark.parametrize("members,mode", [(2, "implicit"), (4, "explicit")])
def test_share_consumers_split_one_partition_with_no_record_handed_to_two(share_engine, queue, members, mode):
    topic, group = queue
    produce_one_by_one(share_engine.bootstrap, topic, 300)
    crowd = Members(share_engine.bootstrap, group, topic, members, 300, mode=mode)
    crowd.run()
    offsets = Counter(offset for _, offset, _ in crowd.received)
    assert sorted(offsets) == list(range(300)) and set(offsets.values()) == {1}     # each once, none twice
    assert {count for _, _, count in crowd.received} == {1}                          # never redelivered
    per_member = Counter(name for name, _, _ in crowd.received)
    assert len(per_member) == members and min(per_member.values()) > 0, per_member
    wait_until(lambda: _start_offset(share_engine, group) == 300, message="every acknowledgement to be written")


def _start_offset(engine, group: str) -> int:
    described = describe_share_offsets(engine.ports[0], group)
    return described.topics[0].partitions[0].start_offset if described.topics else -1


def test_release_redelivers_reject_archives_and_the_delivery_limit_archives(share_engine, queue):
    topic, group = queue
    set_group_configs(share_engine.bootstrap, group, {"share.delivery.count.limit": "3"})
    produce_one_by_one(share_engine.bootstrap, topic, 6)
    consumer = share_consumer(share_engine.bootstrap, group, topic, **{"share.acknowledgement.mode": "explicit"})
    deliveries: list[tuple[int, int]] = []
    try:
        def poll_round() -> bool:
            for message in consumer.poll(0.5):
                if message.error():
                    continue
                offset = message.offset()
                deliveries.append((offset, message.delivery_count()))
                # 0: released every time (archived at the limit); 1: rejected; 2: released once.
                if offset == 0 or (offset == 2 and message.delivery_count() == 1):
                    kind = AcknowledgeType.RELEASE
                elif offset == 1:
                    kind = AcknowledgeType.REJECT
                else:
                    kind = AcknowledgeType.ACCEPT
                consumer.acknowledge(message, kind)
            consumer.commit_sync(10)
            return _start_offset(share_engine, group) == 6
        wait_until(poll_round, timeout=60, interval=0, message="every record to be done with")
    finally:
        consumer.close()
    seen = Counter(offset for offset, _ in deliveries)
    assert seen == {0: 3, 1: 1, 2: 2, 3: 1, 4: 1, 5: 1}
    assert [count for offset, count in deliveries if offset == 0] == [1, 2, 3]


MEMBER_THAT_DIES = """
import sys, time
from confluent_kafka import ShareConsumer
consumer = ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "max.poll.records": 5,
                          "share.acknowledgement.mode": "explicit"})
consumer.subscribe([sys.argv[3]])
while True:
    got = [m.offset() for m in consumer.poll(1.0) if not m.error()]
    if got:
        print(" ".join(map(str, got)), flush=True)
        time.sleep(3600)          # mid-batch: never acknowledges
"""


# A killed member's connection closes, and its share session with it: its records are
# available again at once, long before their 60 s lock would expire or its 60 s session be
# found idle. A frozen member (SIGSTOP) keeps its connection open: its records come back when
# their 2 s lock expires.
KILLED = {"share.record.lock.duration.ms": "60000", "share.session.timeout.ms": "60000"}
FROZEN = {"share.record.lock.duration.ms": "2000"}


@pytest.mark.parametrize("stop,configs", [(signal.SIGKILL, KILLED), (signal.SIGSTOP, FROZEN)], ids=["killed", "frozen"])
def test_a_member_stopped_mid_batch_loses_its_records_to_another(share_engine, queue, stop, configs):
    topic, group = queue
    set_group_configs(share_engine.bootstrap, group, configs)
    produce_one_by_one(share_engine.bootstrap, topic, 5)
    doomed = subprocess.Popen([sys.executable, "-c", MEMBER_THAT_DIES, share_engine.bootstrap, group, topic],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        held = [int(o) for o in doomed.stdout.readline().split()]
        assert held, "the member acquired nothing"
        doomed.send_signal(stop)
        _members_records_come_back(share_engine, group, topic, held, timeout=45)
    finally:
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(30)


def _members_records_come_back(share_engine, group: str, topic: str, held: list[int], *, timeout: float) -> None:
    survivor = share_consumer(share_engine.bootstrap, group, topic, **{"share.acknowledgement.mode": "explicit"})
    got: dict[int, int] = {}
    try:
        def poll_round():
            for message in survivor.poll(0.5):
                if not message.error():
                    got[message.offset()] = message.delivery_count()
                    survivor.acknowledge(message, AcknowledgeType.ACCEPT)
            survivor.commit_sync(10)
            return set(held) <= set(got)
        wait_until(poll_round, timeout=timeout, interval=0, message="the stopped member's records to come back")
    finally:
        survivor.close()
    assert {got[o] for o in held} == {2}            # delivered once to the stopped member, then to this one


def test_kill_9_of_the_engine_keeps_acknowledged_records_and_redelivers_the_rest(engine_factory):
    engine = engine_factory(brokers=1, configs=SHARE_TEST_CONFIGS)
    topic, group = "jobs", "workers"
    create_topic(engine.bootstrap, topic, 1)
    set_group_configs(engine.bootstrap, group, {"share.auto.offset.reset": "earliest"})
    produce_one_by_one(engine.bootstrap, topic, 40)
    first = share_consumer(engine.bootstrap, group, topic, **{"share.acknowledgement.mode": "explicit",
                                                              "max.poll.records": 40})
    batch = wait_until(lambda: [m for m in first.poll(0.5) if not m.error()], timeout=60,
                       message="the first delivery")
    assert len(batch) == 40                       # all of them, in one poll
    accepted = {m.offset() for m in batch if m.offset() % 2 == 0}
    held = {m.offset() for m in batch} - accepted
    for message in batch:
        if message.offset() in accepted:
            first.acknowledge(message, AcknowledgeType.ACCEPT)
    first.commit_sync(10)                         # the even offsets are acknowledged; the odd ones held
    engine.kill()                                 # SIGKILL, with 20 records acquired and unacknowledged
    engine.start()
    second = share_consumer(engine.bootstrap, group, topic, **{"share.acknowledgement.mode": "explicit"})
    delivered: list[int] = []
    try:
        def poll_after():
            for message in second.poll(0.5):
                if not message.error():
                    delivered.append(message.offset())
                    second.acknowledge(message, AcknowledgeType.ACCEPT)
            second.commit_sync(10)
            return set(delivered) >= held
        wait_until(poll_after, timeout=90, interval=0, message="the unacknowledged records after the restart")
    finally:
        second.close()
        first.close()
    assert not set(delivered) & accepted          # no acknowledged record is delivered again
    assert set(delivered) == held                 # every unacknowledged one is


def test_read_committed_share_consumption_skips_aborted_records(share_engine, queue):
    topic, group = queue
    set_group_configs(share_engine.bootstrap, group, {"share.isolation.level": "read_committed"})
    producer = Producer({"bootstrap.servers": share_engine.bootstrap, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(30)
    for values, commit in ((["c0", "c1"], True), (["a0", "a1", "a2"], False), (["c2"], True)):
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value=value.encode())
        (producer.commit_transaction if commit else producer.abort_transaction)(30)
    consumer = share_consumer(share_engine.bootstrap, group, topic)
    values: list[str] = []
    try:
        wait_until(lambda: values.extend(m.value().decode() for m in consumer.poll(0.5) if not m.error())
                   or len(values) >= 3, timeout=60, interval=0, message="the committed records")
        consumer.poll(1.0)          # implicit acknowledgement of the last batch
    finally:
        consumer.close()
    assert values == ["c0", "c1", "c2"]
    wait_until(lambda: describe_share_offsets(share_engine.ports[0], group).topics[0].partitions[0].lag == 0,
               message="the group to have nothing left to read")
