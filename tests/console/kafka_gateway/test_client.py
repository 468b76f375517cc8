"""The gateway against a real engine: shapes, errors in words, engine-only calls."""
import threading

import pytest

from console.clusters.gateway import cluster_gateway
from console.kafka_gateway import ConnectionSettings, GatewayError, open_gateway
from console.kafka_gateway.records import PartitionInfo
from tests.console.conftest import make_topic
from tests.support.engine_process import refused_port
from tests.support.groups import produce
from tests.support.waiting import wait_until


def test_metadata_lists_brokers_controller_and_topics(cluster, engine_cluster, unique_topic):
    name = make_topic(cluster, unique_topic(), assignments={0: [0, 1], 1: [1, 2], 2: [2, 0]})
    with cluster_gateway(cluster) as gw:
        everything = gw.metadata()
        one = gw.metadata([name, "no-such-topic"])
    assert [b.node_id for b in everything.brokers] == [0, 1, 2]
    assert [(b.host, b.port) for b in everything.brokers] == [("127.0.0.1", p) for p in engine_cluster.ports]
    assert everything.controller_id in (0, 1, 2)
    assert everything.cluster_id
    assert name in [t.name for t in everything.topics]
    assert [t.name for t in one.topics] == [name]          # unknown topics are left out
    topic = one.topic(name)
    assert topic.is_internal is False and topic.topic_id
    assert topic.partitions == (
        PartitionInfo(name, 0, leader=0, replicas=(0, 1), isr=(0, 1), leader_epoch=topic.partitions[0].leader_epoch),
        PartitionInfo(name, 1, leader=1, replicas=(1, 2), isr=(1, 2), leader_epoch=topic.partitions[1].leader_epoch),
        PartitionInfo(name, 2, leader=2, replicas=(2, 0), isr=(2, 0), leader_epoch=topic.partitions[2].leader_epoch),
    )


def test_offsets_and_log_dirs_follow_what_was_produced(cluster, engine_cluster, unique_topic):
    name = make_topic(cluster, unique_topic(), assignments={0: [0, 1], 1: [1, 2]})
    produce(engine_cluster.bootstrap, name, [b"a" * 100] * 5, partition=0)
    with cluster_gateway(cluster) as gw:
        topic = gw.metadata([name]).topic(name)
        offsets = gw.partition_offsets(topic.partitions)
        high_watermarks = gw.high_watermarks(topic.partitions)
        replicas = gw.replica_log_dirs({name: [0, 1]}, brokers=[0, 1, 2])
    assert {k: (v.log_start_offset, v.high_watermark) for k, v in offsets.items()} == {(name, 0): (0, 5),
                                                                                     (name, 1): (0, 0)}
    assert high_watermarks == {(name, 0): 5, (name, 1): 0}
    by_replica = {(r.broker_id, r.partition): r.size for r in replicas}
    assert set(by_replica) == {(0, 0), (1, 0), (1, 1), (2, 1)}
    assert by_replica[(1, 1)] == by_replica[(2, 1)] == 0
    assert by_replica[(0, 0)] > 500                         # five 100-byte records and batch headers


def test_topic_configs_mark_kafka_defaults(cluster, unique_topic):
    name = make_topic(cluster, unique_topic(), configs={"retention.ms": "3600000"})
    with cluster_gateway(cluster) as gw:
        configs = {c.name: c for c in gw.topic_configs(name)}
        gw.alter_topic_configs(name, set_configs={"cleanup.policy": "compact"}, delete=["retention.ms"])
        after = {c.name: c for c in gw.topic_configs(name)}
    assert configs["retention.ms"].value == "3600000"
    assert configs["retention.ms"].source == "DYNAMIC_TOPIC_CONFIG" and not configs["retention.ms"].is_default
    assert configs["segment.bytes"].is_default and configs["segment.bytes"].source == "DEFAULT_CONFIG"
    assert after["retention.ms"].is_default and after["retention.ms"].value == "604800000"
    assert after["cleanup.policy"].value == "compact" and not after["cleanup.policy"].is_default


def test_kafka_errors_come_back_in_words(cluster, unique_topic):
    name = make_topic(cluster, unique_topic())
    with cluster_gateway(cluster) as gw:
        with pytest.raises(GatewayError, match=r"^The cluster refused creating topic .* with TOPIC_ALREADY_EXISTS \(36\)"):
            gw.create_topic(name=name, num_partitions=1, replication_factor=1)
        with pytest.raises(GatewayError, match=r"INVALID_REPLICATION_FACTOR \(38\)"):
            gw.create_topic(name=name + "-rf", num_partitions=1, replication_factor=4)
        with pytest.raises(GatewayError, match="(?i)partitions"):
            gw.create_partitions(name, total_count=1)
        with pytest.raises(GatewayError, match="(?i)unknown|invalid"):
            gw.alter_topic_configs(name, set_configs={"no.such.config": "1"})
        with pytest.raises(GatewayError, match="does not exist|not present|UNKNOWN_TOPIC"):
            gw.delete_topic(name + "-missing")


def test_an_unreachable_cluster_is_an_error_in_words_and_leaks_no_thread():
    before = set(threading.enumerate())
    with refused_port() as port:
        for _ in range(3):
            with pytest.raises(GatewayError, match=f"Cannot connect to 127.0.0.1:{port}"):
                with open_gateway(ConnectionSettings(bootstrap_servers=f"127.0.0.1:{port}"),
                                  bootstrap_timeout_ms=200):
                    pass
    # Only threads this test started count: other tests' threads may come and go meanwhile.
    wait_until(lambda: not set(threading.enumerate()) - before, timeout=10, message="the I/O threads to end")


def test_clients_are_closed_after_use(cluster):
    before = set(threading.enumerate())
    with cluster_gateway(cluster) as gw:
        gw.metadata(topics=[])
        assert len(set(threading.enumerate()) - before) == 1    # the admin client's I/O thread
    wait_until(lambda: not set(threading.enumerate()) - before, timeout=10, message="the I/O thread to end")


def test_engine_admin_endpoint_is_found_through_a_broker_config(cluster, engine_cluster):
    with cluster_gateway(cluster) as gw:
        endpoint = gw.engine_admin_endpoint(via_broker=1)
        brokers = gw.engine_brokers(endpoint)
    assert endpoint == f"http://127.0.0.1:{engine_cluster.port + engine_cluster.brokers}"
    assert [(b.node_id, b.port, b.running) for b in brokers] == [
        (i, port, True) for i, port in enumerate(engine_cluster.ports)]
