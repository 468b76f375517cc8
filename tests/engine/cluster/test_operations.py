"""Cluster operations with real clients: reassignment under load, preferred and unclean
elections, log dirs, min.insync.replicas, controller failover, throttling, the broker CLI."""
import subprocess
import sys
import threading

import kafka.errors as Errors
import pytest
from confluent_kafka import Producer
from kafka import KafkaAdminClient, TopicPartition

from tests.engine.cluster.helpers import (admin_url, create_topic, partition_state, start_broker, stop_broker,
                                          wait_until)
from tests.engine.cluster.test_broker_failure import consume_all

# Auto leader rebalance off: these tests move leaderships themselves and check them.
FAST = {"replica.lag.time.max.ms": "2000", "auto.leader.rebalance.enable": "false"}


@pytest.fixture
def cluster(engine_factory):
    return engine_factory(brokers=3, configs=FAST)


def test_reassignment_under_load_moves_replicas_and_keeps_data(cluster, topic_name):
    create_topic(cluster.bootstrap, topic_name, 3, 1)
    before = partition_state(cluster.bootstrap, topic_name)
    targets = {p: [(r + 1) % 3 for r in replicas] + [(replicas[0] + 2) % 3]
               for p, (_, replicas, _) in before.items()}   # move each replica and grow to RF 2
    acked = []
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 5})
    stop = threading.Event()

    def load():
        i = 0
        while not stop.is_set():
            try:
                producer.produce(topic_name, value=f"r-{i}".encode(), partition=i % 3,
                                 on_delivery=lambda err, m: acked.append((m.partition(), m.offset(), m.value()))
                                 if err is None else None)
                i += 1
            except BufferError:
                pass
            producer.poll(0)
            # A steady load (about 200 records a second), not a flood: on a machine whose cores
            # are all busy a flood outruns the new replicas' fetches, and they never catch up.
            stop.wait(0.005)

    loader = threading.Thread(target=load)
    loader.start()
    wait_until(lambda: len(acked) >= 100, message="the load to be acknowledged")
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    result = admin.alter_partition_reassignments(
        {TopicPartition(topic_name, p): target for p, target in targets.items()})
    assert all(error is None for error in result.values()), result
    wait_until(lambda: not admin.list_partition_reassignments(), timeout=180, message="reassignments to finish")
    moved = len(acked)
    wait_until(lambda: len(acked) >= moved + 100, message="acks from the new replica sets")
    stop.set()
    loader.join()
    assert producer.flush(30) == 0
    admin.close()

    after = partition_state(cluster.bootstrap, topic_name)
    for p, target in targets.items():
        leader, replicas, isr = after[p]
        assert replicas == target and sorted(isr) == sorted(target) and leader in target
    stored = consume_all(cluster.bootstrap, topic_name)
    for partition, offset, value in acked:
        assert stored[partition][offset] == (offset, value)
    for records in stored.values():
        assert [o for o, _ in records] == list(range(len(records)))


def test_cancel_reassignment_restores_the_original_replicas(cluster, topic_name):
    create_topic(cluster.bootstrap, topic_name, 1, 1, {"leader.replication.throttled.replicas": "*",
                                                        "follower.replication.throttled.replicas": "*"})
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    # A crawl of a throttle keeps the new replica from catching up, so the move stays pending.
    # The throttle measures over a 1 s window and an unthrottled first fetch takes up to
    # replica.fetch.max.bytes (1 MiB), so 8 MiB keep the newcomer behind for seconds: with
    # 200 KB, one fetch caught up and a slow test thread saw the move already done.
    admin.alter_configs([_broker_config(b, {"leader.replication.throttled.rate": "1"}) for b in range(3)])
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": 1, "linger.ms": 20})
    for i in range(8192):
        producer.produce(topic_name, value=b"x" * 1024, partition=0)
    assert producer.flush(30) == 0
    _, original, _ = partition_state(cluster.bootstrap, topic_name)[0]
    newcomer = next(b for b in range(3) if b not in original)
    tp = TopicPartition(topic_name, 0)
    admin.alter_partition_reassignments({tp: original + [newcomer]})
    ongoing = admin.list_partition_reassignments()
    assert ongoing[tp]["adding_replicas"] == [newcomer]
    assert admin.alter_partition_reassignments({tp: None}) == {tp: None}
    assert admin.list_partition_reassignments() == {}
    assert partition_state(cluster.bootstrap, topic_name)[0][1] == original
    assert admin.alter_partition_reassignments({tp: None})[tp] is Errors.NoReassignmentInProgressError
    admin.close()


def _broker_config(broker_id: int, values: dict):
    from kafka.admin import ConfigResource, ConfigResourceType
    return ConfigResource(ConfigResourceType.BROKER, str(broker_id), values)


def test_preferred_leader_election_after_a_broker_returns(cluster, topic_name):
    create_topic(cluster.bootstrap, topic_name, 3, 3)
    preferred = {p: replicas[0] for p, (_, replicas, _) in partition_state(cluster.bootstrap, topic_name).items()}
    stop_broker(cluster, 0)
    moved = partition_state(cluster.bootstrap, topic_name)
    assert all(leader != 0 for leader, _, _ in moved.values())
    start_broker(cluster, 0)
    wait_until(lambda: all(0 in isr for _, _, isr in partition_state(cluster.bootstrap, topic_name).values()),
               message="broker 0 back in the ISR")
    assert {p: leader for p, (leader, _, _) in partition_state(cluster.bootstrap, topic_name).items()} != preferred
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    admin.elect_leaders(0, {topic_name: [0, 1, 2]}, raise_errors=False)
    admin.close()
    after = partition_state(cluster.bootstrap, topic_name)
    assert {p: leader for p, (leader, _, _) in after.items()} == preferred


def test_min_insync_replicas_refuses_acks_all(cluster, topic_name):
    create_topic(cluster.bootstrap, topic_name, 1, 3, {"min.insync.replicas": "2"})
    leader = partition_state(cluster.bootstrap, topic_name)[0][0]
    for broker in range(3):
        if broker != leader:
            stop_broker(cluster, broker)
    errors = []
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "retries": 0,
                         "message.timeout.ms": 5000})
    producer.produce(topic_name, b"refused", partition=0, on_delivery=lambda err, m: errors.append(err))
    producer.flush(10)
    assert errors and errors[0] is not None and errors[0].name() == "NOT_ENOUGH_REPLICAS"
    ok = []
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": 1})
    producer.produce(topic_name, b"accepted", partition=0, on_delivery=lambda err, m: ok.append(err))
    producer.flush(10)
    assert ok == [None]   # acks=1 does not need the ISR


def test_controller_moves_when_its_broker_stops(cluster):
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    first = admin.describe_cluster()["controller_id"]
    stop_broker(cluster, first)
    admin.close()
    admin = KafkaAdminClient(bootstrap_servers=",".join(f"127.0.0.1:{p}" for i, p in enumerate(cluster.ports)
                                                         if i != first))
    second = admin.describe_cluster()["controller_id"]
    admin.close()
    assert second != first and second >= 0


def test_describe_log_dirs_reports_partition_sizes(cluster, topic_name):
    create_topic(cluster.bootstrap, topic_name, 2, 3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(500):
        producer.produce(topic_name, value=b"y" * 200, partition=i % 2)
    producer.flush(10)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    answers = admin.describe_log_dirs()
    admin.close()
    sizes = {}
    for answer in answers:
        for log_dir in answer["log_dirs"]:
            assert log_dir["log_dir"].endswith(f"broker-{answer['broker']}")
            for topic in log_dir["topics"]:
                if topic["name"] == topic_name:
                    for p in topic["partitions"]:
                        sizes[(answer["broker"], p["partition_index"])] = p["partition_size"]
    assert len(sizes) == 6                       # 2 partitions x 3 replicas
    assert all(size > 500 // 2 * 200 for size in sizes.values())


def test_broker_cli_stops_and_starts_a_broker(cluster):
    run = lambda *args: subprocess.run([sys.executable, "-m", "engine", "broker", *args], capture_output=True,
                                       text=True, timeout=60)
    out = run("stop", "2", "--bootstrap", f"127.0.0.1:{cluster.port}")
    assert out.returncode == 0, out.stderr
    assert "broker 2 stopped" in out.stdout
    listing = run("list", "--admin", admin_url(cluster), "--admin-token-file", str(cluster.data_dir / "admin.token"))
    assert "2\t127.0.0.1:%d\tstopped" % (cluster.port + 2) in listing.stdout
    out = run("start", "2", "--admin", admin_url(cluster))
    assert "broker 2 running" in out.stdout
    assert run("stop", "7", "--admin", admin_url(cluster)).returncode == 1


def test_unclean_election_on_request_revives_a_leaderless_partition(cluster, topic_name):
    create_topic(cluster.bootstrap, topic_name, 1, 2)
    leader, replicas, _ = partition_state(cluster.bootstrap, topic_name)[0]
    follower = next(r for r in replicas if r != leader)
    stop_broker(cluster, follower)      # the ISR shrinks to the leader
    stop_broker(cluster, leader)        # ...which stops too: no leader
    start_broker(cluster, follower)     # out of sync, and unclean election is off: still no leader
    assert partition_state(cluster.bootstrap, topic_name)[0][0] == -1
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    admin.elect_leaders(1, {topic_name: [0]})
    admin.close()
    assert partition_state(cluster.bootstrap, topic_name)[0][0] == follower
