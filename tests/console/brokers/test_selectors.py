"""Broker selectors: the CMAK broker table, and who is up or down."""
import pytest

from console.clusters.models import KnownBroker
from console.brokers.selectors import broker_detail, broker_list
from console.errors import NotFound
from tests.console.conftest import make_topic
from tests.support.groups import produce


def test_broker_table_counts_partitions_leaders_and_sizes(private_cluster, unique_topic):
    # Broker 0 is first replica of three partitions, broker 1 of one, broker 2 of none.
    name = make_topic(private_cluster, unique_topic(), assignments={0: [0, 1], 1: [0, 2], 2: [0, 1], 3: [1, 2]})
    produce(private_cluster.bootstrap_servers, name, [b"q" * 100] * 10, partition=3)
    view = broker_list(cluster=private_cluster)
    rows = {b.broker_id: b for b in view.brokers}
    assert sorted(rows) == [0, 1, 2]
    assert all(b.is_up for b in rows.values()) and view.can_stop_start
    assert [(rows[b].partitions, rows[b].leaders) for b in (0, 1, 2)] == [(3, 3), (3, 1), (2, 0)]
    assert rows[0].partition_ids == {name: [0, 1, 2]} and rows[2].partition_ids == {name: [1, 3]}
    # 8 replicas / 3 brokers: mean 2.67, within 10 % (rounded out to whole replicas) 2 to 3: none off.
    # 4 leaders / 3: mean 1.33, allowed 1 to 2: broker 0 leads 3, broker 2 none.
    assert [b for b in (0, 1, 2) if rows[b].is_skewed] == []
    assert [b for b in (0, 1, 2) if rows[b].is_leader_skewed] == [0, 2]
    assert [(rows[b].replicas_vs_mean, rows[b].leaders_vs_mean) for b in (0, 1, 2)] == [
        ("+13 %", "+125 %"), ("+13 %", "-25 %"), ("-25 %", "-100 %")]
    assert rows[0].log_dir_size == 0 and rows[1].log_dir_size > 1000 and rows[2].log_dir_size > 1000
    assert sum(r.is_controller for r in rows.values()) == 1
    assert {b.node_id for b in view.seen_brokers} == {0, 1, 2}
    assert not KnownBroker.objects.filter(cluster=private_cluster).exists()   # selectors only read


def test_broker_detail_has_the_broker_config(cluster, engine_cluster, unique_topic):
    name = make_topic(cluster, unique_topic(), assignments={0: [1]})
    view = broker_detail(cluster=cluster, broker_id=1)
    assert (view.broker.broker_id, view.broker.port, view.broker.is_up) == (1, engine_cluster.ports[1], True)
    assert name in view.broker.partition_ids
    configs = {c.name: c for c in view.configs}
    assert configs["engine.admin.endpoint"].read_only
    assert configs["num.partitions"].value == "1"
    assert len(view.log_dirs) == 1 and view.log_dirs[0].replicas >= 1
    with pytest.raises(NotFound, match="no broker 7"):
        broker_detail(cluster=cluster, broker_id=7)
