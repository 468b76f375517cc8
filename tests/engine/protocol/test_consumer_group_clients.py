"""The consumer group protocol (KIP-848) with unmodified librdkafka consumers
(`group.protocol: consumer`): joining, splitting partitions, handing them over when members
come and go, committing and resuming, and admin clients listing and describing the group."""
from __future__ import annotations

import threading
import time

from confluent_kafka import Consumer, ConsumerGroupType, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer

from engine.protocol.specs import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from tests.support.groups import GroupClient, create_topic, produce, wait_until

PARTITIONS = 4


class Ownership:
    """Every member's partitions, kept by the members' own rebalance callbacks; an assignment
    of a partition another member still owns is recorded as a conflict."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owned: dict[str, set[int]] = {}
        self.conflicts: list[str] = []
        self.assignments: dict[str, int] = {}   # on_assign calls per member

    def assigned(self, name: str, partitions) -> None:
        with self.lock:
            self.assignments[name] = self.assignments.get(name, 0) + 1
            for tp in partitions:
                holders = [n for n, owned in self.owned.items() if n != name and tp.partition in owned]
                if holders:
                    self.conflicts.append(f"{name} got {tp.partition} while {holders} owned it")
                self.owned.setdefault(name, set()).add(tp.partition)

    def revoked(self, name: str, partitions) -> None:
        with self.lock:
            self.owned.setdefault(name, set()).difference_update(tp.partition for tp in partitions)

    def of(self, name: str) -> set[int]:
        with self.lock:
            return set(self.owned.get(name, ()))


class Member:
    """A librdkafka member polling on its own thread (one thread for several members can hold
    up a rebalance: see test_groups_clients.run_until)."""

    def __init__(self, name: str, bootstrap: str, group_id: str, topic: str, ownership: Ownership, **extra) -> None:
        self.name, self.ownership = name, ownership
        self.records: list[tuple[int, int]] = []
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id, "group.protocol": "consumer",
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest", **extra})
        self.consumer.subscribe([topic], on_assign=lambda c, ps: ownership.assigned(name, ps),
                                on_revoke=lambda c, ps: ownership.revoked(name, ps),
                                on_lost=lambda c, ps: ownership.revoked(name, ps))
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        try:
            while not self._stop.is_set():
                message = self.consumer.poll(0.05)
                if message is not None and message.error() is None:
                    self.records.append((message.partition(), message.offset()))
        except BaseException as exc:  # noqa: BLE001 - surfaced by close()
            self.errors.append(exc)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        self.consumer.close()   # leaves the group (member epoch -1)
        assert not self.errors, self.errors

    def partitions(self) -> set[int]:
        return self.ownership.of(self.name)


def test_members_split_partitions_and_hand_them_over_one_owner_at_a_time(group_cluster, group_id, topic_name):
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, PARTITIONS)
    ownership = Ownership()
    every = set(range(PARTITIONS))
    first = Member("first", bootstrap, group_id, topic_name, ownership)
    second = None
    try:
        wait_until(lambda: first.partitions() == every, timeout=60, message="the first member owning all")
        second = Member("second", bootstrap, group_id, topic_name, ownership)
        wait_until(lambda: len(first.partitions()) == len(second.partitions()) == PARTITIONS // 2
                   and first.partitions() | second.partitions() == every, timeout=60,
                   message="the partitions split between both members")
        admin = AdminClient({"bootstrap.servers": bootstrap})
        listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(timeout=30)
        assert group_id in {g.group_id for g in listed.valid}
        [mine] = [g for g in listed.valid if g.group_id == group_id]
        assert mine.type == ConsumerGroupType.CONSUMER
        described = admin.describe_consumer_groups([group_id])[group_id].result(timeout=30)
        assert described.type == ConsumerGroupType.CONSUMER
        assert str(described.state).endswith("STABLE")
        assert sorted(tp.partition for m in described.members for tp in m.assignment.topic_partitions) == \
            sorted(every)

        second.close()
        second = None
        wait_until(lambda: first.partitions() == every, timeout=60, message="the partitions back with the first")
    finally:
        for member in (second, first):
            if member is not None:
                member.close()
    assert ownership.conflicts == []


def test_a_member_commits_and_the_next_resumes_from_there(group_cluster, group_id, topic_name):
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, 1)
    produce(bootstrap, topic_name, [f"m{i}".encode() for i in range(20)])
    config = {"bootstrap.servers": bootstrap, "group.id": group_id, "group.protocol": "consumer",
              "enable.auto.commit": False, "auto.offset.reset": "earliest"}
    first = Consumer(config)
    first.subscribe([topic_name])
    seen = _consume(first, 10)
    assert seen == [f"m{i}".encode() for i in range(10)]
    _commit(first, TopicPartition(topic_name, 0, 10))
    first.close()

    second = Consumer(config)
    second.subscribe([topic_name])
    try:
        assert _consume(second, 10) == [f"m{i}".encode() for i in range(10, 20)]
        assert second.committed([TopicPartition(topic_name, 0)], timeout=30)[0].offset == 10
    finally:
        second.close()


def _consume(consumer: Consumer, count: int) -> list[bytes]:
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(values) < count and time.monotonic() < deadline:
        for message in consumer.consume(num_messages=count - len(values), timeout=0.2):
            assert message.error() is None, message.error()
            values.append(message.value())
    return values


def _commit(consumer: Consumer, offset: TopicPartition) -> None:
    """A synchronous commit; STALE_MEMBER_EPOCH (an epoch that moved on meanwhile) is retried,
    as the client's next heartbeat brings the current epoch."""
    def committed() -> bool:
        try:
            consumer.commit(offsets=[offset], asynchronous=False)
            return True
        except KafkaException as exc:
            if exc.args[0].code() != 113:
                raise
            consumer.poll(0.2)
            return False
    wait_until(committed, timeout=60, message="the commit")


def test_a_static_member_restarts_and_gets_its_partitions_back_without_a_rebalance(group_cluster, group_id,
                                                                                   topic_name):
    """group.instance.id: the closing instance leaves with epoch -2, keeping its partitions
    for the next instance with its id; the other member's partitions never move."""
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, PARTITIONS)
    ownership = Ownership()
    other = Member("other", bootstrap, group_id, topic_name, ownership)
    static = None
    try:
        wait_until(lambda: len(other.partitions()) == PARTITIONS, timeout=60, message="the first member owning all")
        static = Member("static-1", bootstrap, group_id, topic_name, ownership, **{"group.instance.id": "static"})
        wait_until(lambda: len(other.partitions()) == len(static.partitions()) == PARTITIONS // 2,
                   timeout=60, message="the partitions split")
        kept, theirs, assigned = static.partitions(), other.partitions(), ownership.assignments["other"]
        static.close()
        static = Member("static-2", bootstrap, group_id, topic_name, ownership, **{"group.instance.id": "static"})
        wait_until(lambda: static.partitions() == kept, timeout=60, message="the restarted instance's partitions")
        time.sleep(1)   # five heartbeat intervals: time for a rebalance, had there been one
        assert (other.partitions(), ownership.assignments["other"]) == (theirs, assigned)
        # Two joins made two group epochs: the restart (leave with -2, rejoin) made none.
        group = described(group_cluster, group_id)
        assert group.group_epoch == 2
        assert sorted((m.instance_id or "", m.member_epoch) for m in group.members) == [("", 2), ("static", 2)]
    finally:
        for member in (static, other):
            if member is not None:
                member.close()
    assert ownership.conflicts == []


def described(engine, group_id: str):
    """The group as ConsumerGroupDescribe v1 tells it."""
    client = GroupClient(engine, group_id)
    try:
        [group] = client.client.request(ConsumerGroupDescribeRequest(
            group_ids=[group_id], include_authorized_operations=False), 1, ConsumerGroupDescribeResponse).groups
    finally:
        client.close()
    return group


def _group_type(admin: AdminClient, group_id: str):
    listed = admin.list_consumer_groups().result(timeout=30)
    return next((g.type for g in listed.valid if g.group_id == group_id), None)


def test_a_classic_group_upgrades_and_downgrades_as_members_change_protocol(group_cluster, group_id, topic_name):
    """KIP-848's online migration with librdkafka: two classic members (cooperative-sticky), a
    member of the consumer protocol joining (the group is upgraded and keeps them), and leaving
    (the group is a classic group again); no partition has two owners at any time."""
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, PARTITIONS)
    for partition in range(PARTITIONS):     # records in every partition, whatever the partitioner does
        produce(bootstrap, topic_name, [f"m{partition}-{i}".encode() for i in range(10)], partition=partition)
    every = set(range(PARTITIONS))
    ownership = Ownership()
    classic_config = {"group.protocol": "classic", "partition.assignment.strategy": "cooperative-sticky",
                      "session.timeout.ms": 6000, "heartbeat.interval.ms": 300}
    classic = [Member(f"classic-{i}", bootstrap, group_id, topic_name, ownership, **classic_config) for i in (1, 2)]
    modern = None
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        wait_until(lambda: all(len(m.partitions()) == 2 for m in classic), timeout=60, message="a classic split")
        assert _group_type(admin, group_id) == ConsumerGroupType.CLASSIC

        modern = Member("modern", bootstrap, group_id, topic_name, ownership)
        wait_until(lambda: modern.partitions() and all(m.partitions() for m in classic)
                   and set().union(modern.partitions(), *(m.partitions() for m in classic)) == every,
                   timeout=60, message="the partitions shared by all three members")
        assert _group_type(admin, group_id) == ConsumerGroupType.CONSUMER
        group = described(group_cluster, group_id)
        assert sorted(m.member_type for m in group.members) == [0, 0, 1]   # two classic, one consumer

        modern.close()
        modern = None
        wait_until(lambda: _group_type(admin, group_id) == ConsumerGroupType.CLASSIC, timeout=30,
                   message="the downgrade")
        wait_until(lambda: all(m.partitions() for m in classic)
                   and set().union(*(m.partitions() for m in classic)) == every, timeout=60,
                   message="the classic members owning every partition again")
        wait_until(lambda: {p for m in classic for p, _ in m.records} == every, timeout=60,
                   message="records from every partition")
    finally:
        for member in (modern, *classic):
            if member is not None:
                member.close()
    assert ownership.conflicts == []


def test_an_eager_classic_member_shares_a_consumer_group(group_cluster, group_id, topic_name):
    """kafka-python's eager classic consumer joins a group of the consumer protocol: it gets
    its share from the server-side assignor, and everything when the other member leaves."""
    bootstrap = group_cluster.bootstrap
    create_topic(bootstrap, topic_name, PARTITIONS)
    every = set(range(PARTITIONS))
    ownership = Ownership()
    modern = Member("modern", bootstrap, group_id, topic_name, ownership)
    eager = EagerMember(bootstrap, group_id, topic_name)
    try:
        wait_until(lambda: modern.partitions() == every, timeout=60, message="the modern member owning all")
        eager.start()
        wait_until(lambda: len(eager.partitions) == 2 and modern.partitions() == every - eager.partitions,
                   timeout=60, message="the partitions split with the eager member")
        modern.close()
        modern = None
        wait_until(lambda: eager.partitions == every, timeout=60, message="every partition with the eager member")
    finally:
        if modern is not None:
            modern.close()
        eager.close()
    assert ownership.conflicts == []


class EagerMember:
    """A kafka-python consumer (classic protocol, eager range assignor) polling on its thread."""

    def __init__(self, bootstrap: str, group_id: str, topic: str) -> None:
        self.consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id, enable_auto_commit=False,
                                      heartbeat_interval_ms=300, session_timeout_ms=6000)
        self.consumer.subscribe([topic])
        self.partitions: set[int] = set()
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _poll(self) -> None:
        try:
            while not self._stop.is_set():
                self.consumer.poll(timeout_ms=50)
                self.partitions = {tp.partition for tp in self.consumer.assignment()}
        except BaseException as exc:  # noqa: BLE001 - surfaced by close()
            self.errors.append(exc)

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=60)
        self.consumer.close()
        assert not self.errors, self.errors
