"""Consumer groups with real clients: kafka-python, confluent-kafka (librdkafka), aiokafka."""
from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter

import pytest
from aiokafka import AIOKafkaConsumer
from confluent_kafka import Consumer, KafkaException
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

from tests.support.groups import create_topic, produce, wait_until

RECORDS_PER_PARTITION = 30


def test_kafka_python_auto_commit_resumes_in_a_second_consumer(group_cluster, group_id, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, 1)
    produce(group_cluster.bootstrap, topic_name, [f"m{i}".encode() for i in range(20)])
    tp = TopicPartition(topic_name, 0)

    first = KafkaConsumer(topic_name, bootstrap_servers=group_cluster.bootstrap, group_id=group_id,
                          enable_auto_commit=True, auto_commit_interval_ms=100, auto_offset_reset="earliest",
                          max_poll_records=10, session_timeout_ms=6000, heartbeat_interval_ms=200)
    seen = []
    deadline = time.monotonic() + 30
    while len(seen) < 10 and time.monotonic() < deadline:
        for records in first.poll(timeout_ms=200, max_records=10 - len(seen)).values():
            seen += [r.value for r in records]
    assert seen == [f"m{i}".encode() for i in range(10)]
    # The auto-commit timer, not close(), commits the position; paused, polls return nothing.
    first.pause(tp)
    wait_until(lambda: first.poll(timeout_ms=50) == {} and first.committed(tp) == 10,
               message="the auto-commit of offset 10")
    first.close(autocommit=False)

    second = KafkaConsumer(topic_name, bootstrap_servers=group_cluster.bootstrap, group_id=group_id,
                           enable_auto_commit=True, auto_offset_reset="earliest", session_timeout_ms=6000,
                           heartbeat_interval_ms=200)
    rest = []
    deadline = time.monotonic() + 30
    while len(rest) < 10 and time.monotonic() < deadline:
        for records in second.poll(timeout_ms=200).values():
            rest += [(r.offset, r.value) for r in records]
    second.close()
    assert rest == [(i, f"m{i}".encode()) for i in range(10, 20)]  # from the committed offset on


class Member:
    """A librdkafka group member that commits every record it handles, synchronously.

    Every handling goes into the shared `journal` as (partition, offset, committed): a
    commit refused because the group is rebalancing leaves the record to be handled again
    by whoever owns the partition next (or covered by this member's next commit).
    """

    def __init__(self, bootstrap: str, group_id: str, topic: str, assignor: str, journal: list | None = None,
                 **extra) -> None:
        self.revocations = 0
        self.journal = journal if journal is not None else []
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group_id, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "partition.assignment.strategy": assignor,
            "session.timeout.ms": 6000, "heartbeat.interval.ms": 100, **extra})
        # What the member owns, kept by its own callbacks (they run inside its polls), so that
        # the test thread never calls into a consumer that another thread is polling.
        self.owned: frozenset[int] = frozenset()
        self.consumer.subscribe([topic], on_assign=self._assigned, on_revoke=self._revoked,
                                on_lost=self._revoked)

    def _assigned(self, consumer, partitions) -> None:
        self.owned = self.owned | {tp.partition for tp in partitions}

    def _revoked(self, consumer, partitions) -> None:
        if partitions:
            self.revocations += 1
        self.owned = self.owned - {tp.partition for tp in partitions}

    def poll(self) -> None:
        for message in self.consumer.consume(num_messages=50, timeout=0.05):
            assert message.error() is None, message.error()
            try:
                self.consumer.commit(message=message, asynchronous=False)
                committed = True
            except KafkaException:
                committed = False
            self.journal.append((message.partition(), message.offset(), committed))

    def partitions(self) -> list[int]:
        return sorted(self.owned)

    def close(self) -> None:
        self.consumer.close()


def assert_none_lost_none_handled_after_commit(journal: list, partitions: int, per_partition: int) -> None:
    assert {(p, o) for p, o, _ in journal} == {(p, o) for p in range(partitions) for o in range(per_partition)}
    committed_up_to = Counter()
    for partition, offset, committed in journal:  # in the order the records were handled
        assert offset >= committed_up_to[partition], f"{partition}/{offset} handled again after its commit"
        if committed:
            committed_up_to[partition] = max(committed_up_to[partition], offset + 1)
    assert all(committed_up_to[p] == per_partition for p in range(partitions))


def run_until(members: list[Member], condition, message: str, timeout: float = 45.0) -> None:
    """Poll every member on its own thread, as separate processes would, until `condition()`.

    One thread for all members can deadlock a cooperative rebalance: member A's synchronous
    commit waits behind A's JoinGroup on the coordinator connection (a broker answers one
    request per connection at a time, as Kafka does), that JoinGroup waits for B to rejoin,
    and B rejoins only after its revocation callback runs, in a poll of the blocked thread.
    """
    stop, failures = threading.Event(), []

    def keep_polling(member: Member) -> None:
        try:
            while not stop.is_set():
                member.poll()
        except BaseException as exc:  # surfaced by the caller's thread
            failures.append(exc)
            stop.set()

    threads = [threading.Thread(target=keep_polling, args=(m,), daemon=True) for m in members]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and not stop.is_set():
            if condition():
                return
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    if failures:
        raise failures[0]
    raise AssertionError(f"timed out waiting for {message}: {[m.partitions() for m in members]}")


def produce_round(bootstrap: str, topic: str, partitions: int, round_: int) -> None:
    for partition in range(partitions):
        produce(bootstrap, topic, [f"r{round_}-p{partition}-{i}".encode() for i in range(RECORDS_PER_PARTITION)],
                partition=partition)


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "cooperative-sticky"])
def test_confluent_members_split_partitions_and_hand_them_over(group_cluster, group_id, topic_name, assignor):
    partitions, journal = 6, []
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, partitions)
    members = [Member(bootstrap, group_id, topic_name, assignor, journal) for _ in range(2)]

    def caught_up(round_: int) -> bool:  # every partition's records of the round handled and committed
        committed = Counter()
        for partition, offset, ok in journal:
            if ok:
                committed[partition] = max(committed[partition], offset + 1)
        return all(committed[p] == round_ * RECORDS_PER_PARTITION for p in range(partitions))

    def split(sizes: list[int]) -> bool:
        owned = [m.partitions() for m in members]
        return sorted(map(len, owned)) == sizes and sorted(sum(owned, [])) == list(range(partitions))

    try:
        produce_round(bootstrap, topic_name, partitions, 0)
        run_until(members, lambda: split([3, 3]) and caught_up(1), "two members splitting 6 partitions")
        members.append(Member(bootstrap, group_id, topic_name, assignor, journal))
        produce_round(bootstrap, topic_name, partitions, 1)
        run_until(members, lambda: split([2, 2, 2]) and caught_up(2), "three members splitting 6 partitions")
        leaving = members.pop(0)
        leaving.close()  # LeaveGroup: the others take its partitions over
        produce_round(bootstrap, topic_name, partitions, 2)
        run_until(members, lambda: split([3, 3]) and caught_up(3), "the two remaining members taking over")
    finally:
        for member in members:
            member.close()
    assert_none_lost_none_handled_after_commit(journal, partitions, 3 * RECORDS_PER_PARTITION)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        committed = admin.list_group_offsets(group_id)[group_id]
    finally:
        admin.close()
    assert {tp.partition: o.offset for tp, o in committed.items()} == \
        {p: 3 * RECORDS_PER_PARTITION for p in range(partitions)}


def test_confluent_static_member_restart_keeps_its_partitions_without_a_rebalance(group_cluster, group_id,
                                                                                  topic_name):
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, 4)
    static = {"group.instance.id": f"{group_id}-a"}
    a = Member(bootstrap, group_id, topic_name, "range", **static)
    b = Member(bootstrap, group_id, topic_name, "range", **{"group.instance.id": f"{group_id}-b"})
    restarted = None
    try:
        run_until([a, b], lambda: len(a.partitions()) == 2 and len(b.partitions()) == 2, "a 2/2 split")
        owned_by_a, owned_by_b, b_revocations = a.partitions(), b.partitions(), b.revocations
        a.close()  # a static member sends no LeaveGroup: its partitions wait for it
        restarted = Member(bootstrap, group_id, topic_name, "range", **static)
        run_until([restarted, b], lambda: restarted.partitions() == owned_by_a, "the static member's partitions")
        for _ in range(20):  # b keeps polling: a rebalance would show up as a revocation
            b.poll()
        assert b.partitions() == owned_by_b and b.revocations == b_revocations
    finally:
        for member in (b, restarted):
            if member is not None:
                member.close()


def test_aiokafka_group_members_consume_every_record_once(group_cluster, group_id, topic_name):
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, 4)
    for partition in range(4):
        produce(bootstrap, topic_name, [f"p{partition}-{i}".encode() for i in range(25)], partition=partition)

    async def scenario():
        consumers = [AIOKafkaConsumer(topic_name, bootstrap_servers=bootstrap, group_id=group_id,
                                      auto_offset_reset="earliest", enable_auto_commit=False,
                                      session_timeout_ms=6000, heartbeat_interval_ms=100) for _ in range(2)]
        for consumer in consumers:
            await consumer.start()
        received: list[list] = [[], []]
        try:
            async def until_all():
                while sum(map(len, received)) < 100 or not all(c.assignment() for c in consumers):
                    for i, consumer in enumerate(consumers):
                        batch = await consumer.getmany(timeout_ms=50)
                        for records in batch.values():
                            received[i] += [r.value for r in records]
                        if batch:
                            await consumer.commit()
            await asyncio.wait_for(until_all(), 45)
            assignments = [sorted(tp.partition for tp in c.assignment()) for c in consumers]
        finally:
            for consumer in consumers:
                await consumer.stop()
        return received, assignments

    received, assignments = asyncio.run(scenario())
    assert sorted(sum(assignments, [])) == [0, 1, 2, 3] and all(assignments)
    everything = sum(received, [])
    assert sorted(everything) == sorted(f"p{p}-{i}".encode() for p in range(4) for i in range(25))
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        committed = admin.list_group_offsets(group_id)[group_id]
    finally:
        admin.close()
    assert {tp.partition: o.offset for tp, o in committed.items()} == {p: 25 for p in range(4)}
