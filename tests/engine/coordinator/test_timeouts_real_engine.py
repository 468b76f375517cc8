"""The coordinator's timeouts and fencing on a real engine with real clients (the same
behaviours test_membership.py drives directly, fast, against a fake broker): a killed
consumer's session times out, a member that does not rejoin within the rebalance timeout or
does not sync in time is dropped, a second instance with the same group.instance.id fences
the first, and committed offsets expire. Waits are bounded polls; nothing asserts a time."""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys

import kafka.errors as Errors
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as CTopicPartition
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

from tests.support.engine_process import ROOT
from tests.support.groups import GROUP_TEST_CONFIGS, GroupClient, create_topic, subscription, wait_until

PARTITIONS = 4
# Consumers that must stay in the group get a session with room for a loaded machine.
FAST = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 100}

# A consumer in its own process, so the test can SIGKILL it: no LeaveGroup, only silence.
CHILD_CONSUMER = """
import sys
from kafka import KafkaConsumer
consumer = KafkaConsumer(sys.argv[2], bootstrap_servers=sys.argv[1], group_id=sys.argv[3],
                         session_timeout_ms=1000, heartbeat_interval_ms=100)
while True:
    consumer.poll(timeout_ms=100)
    if consumer.assignment():
        print("assigned", flush=True)
"""


def assigned(consumer: KafkaConsumer) -> set[int]:
    consumer.poll(timeout_ms=100)
    return {tp.partition for tp in consumer.assignment()}


def members(bootstrap: str, group_id: str) -> int:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return len(admin.describe_groups([group_id])[group_id]["members"])
    finally:
        admin.close()


def _readable(client: GroupClient) -> bool:
    return bool(select.select([client.client.sock], [], [], 0)[0])


@pytest.fixture
def topic(group_cluster, topic_name):
    create_topic(group_cluster.bootstrap, topic_name, PARTITIONS)
    return topic_name


def test_a_killed_consumer_is_removed_after_its_session_timeout(group_cluster, group_id, topic):
    bootstrap = group_cluster.bootstrap
    child = subprocess.Popen([sys.executable, "-c", CHILD_CONSUMER, bootstrap, topic, group_id], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ})
    survivor = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group_id, **FAST)
    try:
        assert child.stdout.readline() == b"assigned\n"
        wait_until(lambda: 0 < len(assigned(survivor)) < PARTITIONS, message="the partitions shared by two")
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        # Only the coordinator's session timer can notice a process that died without a word.
        wait_until(lambda: assigned(survivor) == set(range(PARTITIONS)), message="the survivor owning everything")
        assert members(bootstrap, group_id) == 1
    finally:
        child.kill()
        survivor.close()


def test_a_member_that_does_not_rejoin_is_dropped_after_the_rebalance_timeout(group_cluster, group_id, topic):
    bootstrap = group_cluster.bootstrap
    silent = GroupClient(group_cluster, group_id)
    protocols = [("range", subscription([topic]))]
    try:
        # A member with a long session but a short rebalance timeout, which never rejoins.
        joined = silent.join_as_new_member(protocols=protocols, session_timeout_ms=30000, rebalance_timeout_ms=1500)
        member = joined.member_id
        assert silent.sync(member, joined.generation_id, {member: b""}).error_code == 0
        # The join phase waits for the group's rebalance timeout, the largest of its members':
        # the newcomer's (max.poll.interval.ms) is short too, the silent member's session long.
        newcomer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group_id, max_poll_interval_ms=2000,
                                 **FAST)
        try:
            wait_until(lambda: assigned(newcomer) == set(range(PARTITIONS)), message="the newcomer owning everything")
            assert silent.heartbeat(member, joined.generation_id) == Errors.UnknownMemberIdError.errno
        finally:
            newcomer.close()
    finally:
        silent.close()


def test_a_member_that_never_syncs_is_dropped(group_cluster, group_id, topic):
    bootstrap = group_cluster.bootstrap
    # The group's rebalance timeout (the largest of its members') bounds the wait for SyncGroup.
    leader = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group_id, max_poll_interval_ms=2000,
                           **FAST)
    lazy = GroupClient(group_cluster, group_id)
    protocols = [("range", subscription([topic]))]
    try:
        wait_until(lambda: assigned(leader) == set(range(PARTITIONS)), message="the first member owning everything")
        member = lazy.join(protocols=protocols).member_id   # MEMBER_ID_REQUIRED
        answer = lazy.begin("join", member, protocols=protocols, session_timeout_ms=30000,
                            rebalance_timeout_ms=2000)
        # The real consumer rejoins on its next polls, which completes the lazy member's join.
        wait_until(lambda: assigned(leader) is not None and _readable(lazy), message="the lazy member's join")
        joined = answer()
        assert joined.error_code == 0 and joined.member_id == member
        # The lazy member never sends SyncGroup: it is removed and the real one gets everything back.
        # (Heartbeats do not hold off the SyncGroup deadline; the leader keeps polling meanwhile,
        # as its short max.poll.interval.ms - the group's rebalance timeout - requires.)
        wait_until(lambda: assigned(leader) is not None and lazy.heartbeat(member, joined.generation_id) ==
                   Errors.UnknownMemberIdError.errno, message="the lazy member removed")
        wait_until(lambda: assigned(leader) == set(range(PARTITIONS)), message="the leader owning everything again")
    finally:
        lazy.close()
        leader.close()


def test_a_second_static_instance_fences_the_first(group_cluster, group_id, topic):
    bootstrap = group_cluster.bootstrap
    config = {"bootstrap.servers": bootstrap, "group.id": group_id, "group.instance.id": "instance-1",
              "session.timeout.ms": 6000, "heartbeat.interval.ms": 100, "auto.offset.reset": "earliest"}
    first = Consumer(config)
    first.subscribe([topic])
    second = None
    try:
        wait_until(lambda: first.poll(0.1) is None and len(first.assignment()) == PARTITIONS,
                   message="the first instance owning everything")
        second = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group_id,
                               group_instance_id="instance-1", session_timeout_ms=6000, heartbeat_interval_ms=100)
        wait_until(lambda: assigned(second) == set(range(PARTITIONS)), message="the second instance taking over")
        # The first instance's next heartbeat answers FENCED_INSTANCE_ID: a fatal error for librdkafka.

        def fenced():
            try:
                message = first.poll(0.1)
            except KafkaException as exc:
                return exc.args[0]
            return message.error() if message is not None and message.error() else None

        error = wait_until(fenced, message="the first instance fenced")
        assert error.code() == KafkaError._FATAL or error.code() == KafkaError.FENCED_INSTANCE_ID, error
        assert "fenced" in error.str().lower()
    finally:
        first.close()
        if second is not None:
            second.close()


def test_committed_offsets_expire(engine_factory, topic_name):
    engine = engine_factory(brokers=1, configs={**GROUP_TEST_CONFIGS, "offsets.retention.check.interval.ms": "200"})
    create_topic(engine.bootstrap, topic_name, 1)
    group_id = "expiring"
    client = GroupClient(engine, group_id)
    try:
        # No client library sends OffsetCommit v2-4's retention_time_ms, so the commit is raw;
        # the expiry is the engine's own periodic task, and real clients observe it.
        assert client.commit({(topic_name, 0): 5}, retention_time_ms=1000, version=2) == {(topic_name, 0): 0}
        assert client.commit({(topic_name, 0): 7}, version=2) == {(topic_name, 0): 0}   # no expiry: kept
    finally:
        client.close()
    other = GroupClient(engine, "kept")
    try:
        # A retention of Long.MAX: kept for good, not an overflow that closes the connection.
        assert other.commit({(topic_name, 0): 3}, retention_time_ms=2**63 - 1, version=2) == {(topic_name, 0): 0}
    finally:
        other.close()
    client = GroupClient(engine, group_id)
    try:
        assert client.commit({(topic_name, 0): 9}, retention_time_ms=1000, version=2) == {(topic_name, 0): 0}
    finally:
        client.close()
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap)
    tp = TopicPartition(topic_name, 0)
    try:
        wait_until(lambda: admin.list_group_offsets(group_id)[group_id] == {}, message="the offset expired")
        assert admin.list_group_offsets("kept")["kept"][tp].offset == 3
    finally:
        admin.close()
    consumer = Consumer({"bootstrap.servers": engine.bootstrap, "group.id": group_id})
    try:
        (committed,) = consumer.committed([CTopicPartition(topic_name, 0)], timeout=15)
        assert committed.offset < 0   # OFFSET_INVALID: nothing committed any more
    finally:
        consumer.close()
