"""Topic selectors against a real engine: CMAK stats for crafted assignments, filters, detail."""
import pytest
from django.urls import reverse
from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition

from console.clusters.gateway import cluster_gateway
from console.errors import NotFound
from console.topics.selectors import topic_detail, topic_list
from tests.console.conftest import make_topic, wait_for_partitions
from tests.support.groups import produce
from tests.support.waiting import wait_until

# Six partitions on three brokers, two replicas each, every broker first replica twice.
CRAFTED = {0: [0, 1], 1: [1, 2], 2: [2, 0], 3: [0, 1], 4: [1, 2], 5: [2, 0]}


def test_topic_list_shows_cmak_stats_for_a_crafted_assignment(cluster, engine_cluster, unique_topic):
    name = make_topic(cluster, unique_topic(), assignments=CRAFTED)
    produce(engine_cluster.bootstrap, name, [b"x"] * 3, partition=0)
    produce(engine_cluster.bootstrap, name, [b"y"] * 4, partition=5)
    view = topic_list(cluster=cluster, search=name)
    assert [t.name for t in view.topics] == [name]
    stats = view.topics[0].stats
    assert (stats.partitions, stats.replication_factor, stats.summed_offsets, stats.brokers) == (6, 2, 7, 3)
    assert (stats.preferred_replicas_percent, stats.under_replicated_percent) == (100, 0)
    assert (stats.brokers_skewed_percent, stats.brokers_leader_skewed_percent, stats.brokers_spread_percent) == (
        0, 0, 100)


def test_topic_list_stats_after_a_broker_stops_match_the_hand_computed_skew(private_cluster, unique_topic):
    """The crafted assignment, then broker 2 stops (controlled shutdown): it leaves every ISR
    and the partitions it led (2 and 5) move to their other replica, broker 0. By hand, as in
    test_stats.test_skew_after_a_broker_stops: broker 0 leads 4 > ceil(6 / 2) = 3 partitions,
    so 1 of the topic's 2 brokers is leader-skewed (50 %); 4 of 6 leaders are preferred (66 %);
    partitions 1, 2, 4 and 5 lost a replica (66 % under-replicated)."""
    name = make_topic(private_cluster, unique_topic(), assignments=CRAFTED)
    with cluster_gateway(private_cluster) as gw:
        gw.engine_broker_command(gw.engine_admin_endpoint(via_broker=0), 2, "stop")
    wait_for_partitions(private_cluster, name, lambda ps: all(2 not in p.isr for p in ps), "broker 2 out of every ISR")

    stats = topic_list(cluster=private_cluster, search=name).topics[0].stats

    assert stats.brokers == 2
    assert [(b.broker_id, b.leaders, b.is_leader_skewed) for b in stats.partitions_by_broker] == [
        (0, (0, 2, 3, 5), True), (1, (1, 4), False)]
    assert (stats.brokers_leader_skewed_percent, stats.brokers_skewed_percent) == (50, 0)
    assert (stats.preferred_replicas_percent, stats.under_replicated_percent) == (66, 66)
    assert stats.brokers_spread_percent == 100


def test_topic_list_filters_before_paginating(cluster, unique_topic):
    prefix = unique_topic("page")
    names = [make_topic(cluster, f"{prefix}-{i}") for i in range(5)]
    first = topic_list(cluster=cluster, search=prefix.upper(), per_page=2)
    assert (first.matching, first.pages, first.page) == (5, 3, 1)
    assert [t.name for t in first.topics] == names[:2]
    last = topic_list(cluster=cluster, search=prefix, per_page=2, page=3)
    assert [t.name for t in last.topics] == names[4:]
    beyond = topic_list(cluster=cluster, search=prefix, per_page=2, page="junk")
    assert beyond.page == 1
    assert first.total >= 5


def test_internal_topics_need_the_toggle(cluster, engine_cluster, unique_topic):
    # A committed offset makes the engine create __consumer_offsets.
    name = make_topic(cluster, unique_topic())
    commit_offsets(engine_cluster.bootstrap, unique_topic("g"), {(name, 0): 0})
    hidden = topic_list(cluster=cluster, search="__consumer_offsets")
    shown = topic_list(cluster=cluster, search="__consumer_offsets", include_internal=True)
    assert hidden.topics == []
    assert [(t.name, t.is_internal) for t in shown.topics] == [("__consumer_offsets", True)]


def test_topic_detail_partitions_offsets_sizes_and_configs(cluster, engine_cluster, unique_topic):
    name = make_topic(cluster, unique_topic(), assignments={0: [1, 2], 1: [2, 0]}, configs={"retention.ms": "3600000"})
    produce(engine_cluster.bootstrap, name, [b"z" * 50] * 4, partition=1)
    wait_for_partitions(cluster, name, lambda ps: all(len(p.isr) == 2 for p in ps), "both replicas in sync")
    view = topic_detail(cluster=cluster, name=name)
    assert [(p.partition, p.leader, p.replicas, p.isr, p.is_preferred_leader, p.is_under_replicated)
            for p in view.partitions] == [(0, 1, (1, 2), (1, 2), True, False), (1, 2, (2, 0), (2, 0), True, False)]
    assert [(p.log_start_offset, p.high_watermark) for p in view.partitions] == [(0, 0), (0, 4)]
    assert view.partitions[0].size == 0 and view.partitions[1].size > 200
    assert view.stats.summed_offsets == 4 and view.stats.brokers == 3
    configs = {c.name: c for c in view.configs}
    assert (configs["retention.ms"].value, configs["retention.ms"].source) == ("3600000", "topic")
    assert configs["retention.ms"].is_override and configs["retention.ms"].default_from == "log.retention.hours"
    assert configs["cleanup.policy"].source == "default" and configs["cleanup.policy"].value == "delete"
    assert "compact" in configs["cleanup.policy"].doc            # Kafka's doc line, for the tooltip
    assert view.consumer_groups == []


def test_topic_detail_lists_the_groups_that_read_it(cluster, engine_cluster, unique_topic):
    name = make_topic(cluster, unique_topic(), partitions=2)
    other = make_topic(cluster, unique_topic("other"))
    produce(engine_cluster.bootstrap, name, [b"a"] * 3, partition=0)
    produce(engine_cluster.bootstrap, name, [b"b"] * 2, partition=1)
    active, idle = unique_topic("active"), unique_topic("idle")
    commit_offsets(engine_cluster.bootstrap, idle, {(name, 0): 1})      # offsets only, no members
    consumer = KafkaConsumer(name, bootstrap_servers=engine_cluster.bootstrap, group_id=active,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        wait_until(lambda: consumer.poll(100) is not None and len(consumer.assignment()) == 2, message="assignment")
        consumer.commit({TopicPartition(name, 0): OffsetAndMetadata(2, "", -1),
                         TopicPartition(name, 1): OffsetAndMetadata(1, "", -1)})
        view = topic_detail(cluster=cluster, name=name)
        groups = {g.group_id: g for g in view.consumer_groups}
        assert (groups[active].state, groups[active].members) == ("Stable", 1)
        assert [(p.partition, p.committed_offset, p.high_watermark, p.lag) for p in groups[active].partitions] == [
            (0, 2, 3, 1), (1, 1, 2, 1)]
        assert groups[active].total_lag == 2
        assert (groups[idle].state, groups[idle].members, groups[idle].total_lag) == ("Empty", 0, 2)
        # Every partition of the topic, as the group's page has them: partition 1 has no commit.
        assert [(p.partition, p.lag) for p in groups[idle].partitions] == [(0, 2), (1, None)]
        assert groups[idle].no_commit == 1
        assert not {active, idle} & {g.group_id for g in topic_detail(cluster=cluster, name=other).consumer_groups}
    finally:
        consumer.close()


def test_partitions_without_a_commit_are_counted_apart_from_the_total_lag(cluster, engine_cluster, unique_topic):
    name = make_topic(cluster, unique_topic(), partitions=2)
    produce(engine_cluster.bootstrap, name, [b"a"] * 3, partition=0)
    produce(engine_cluster.bootstrap, name, [b"b"] * 5, partition=1)
    group = unique_topic("half")
    consumer = KafkaConsumer(name, bootstrap_servers=engine_cluster.bootstrap, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        wait_until(lambda: consumer.poll(100) is not None and len(consumer.assignment()) == 2, message="assignment")
        consumer.commit({TopicPartition(name, 0): OffsetAndMetadata(1, "", -1)})    # partition 1: no commit
        row = next(g for g in topic_detail(cluster=cluster, name=name).consumer_groups if g.group_id == group)
    finally:
        consumer.close()
    assert [(p.partition, p.committed_offset, p.lag) for p in row.partitions] == [(0, 1, 2), (1, None, None)]
    assert (row.total_lag, row.no_commit, row.lag_unknown) == (2, 1, 0)


def test_stats_stay_honest_with_a_broker_stopped(private_cluster, unique_topic, viewer_client):
    """Partition 2 lives only on broker 2: stopping it takes the partition offline."""
    from console.brokers.selectors import broker_list
    from console.clusters.selectors import cluster_overview

    name = make_topic(private_cluster, unique_topic(), assignments={0: [0], 1: [1], 2: [2]})
    for partition in range(3):
        produce(private_cluster.bootstrap_servers, name, [b"m"] * (partition + 1), partition=partition)
    with cluster_gateway(private_cluster) as gw:
        gw.engine_broker_command(gw.engine_admin_endpoint(via_broker=0), 2, "stop")
    wait_for_partitions(private_cluster, name, lambda ps: ps[2].leader == -1, "partition 2 offline")

    view = topic_detail(cluster=private_cluster, name=name)
    stats = view.stats
    assert (stats.offline_partitions, stats.under_replicated_partitions) == (1, 1)
    # Messages counts the partitions with a leader only, and the page says how many it leaves out.
    assert view.messages == 1 + 2
    page = viewer_client.get(reverse("topics:detail", args=[private_cluster.pk, name])).content.decode()
    assert 'data-offsets-unknown="1">+ 1 offline partition unknown' in page.split('<dd id="topic-messages">')[1]
    assert stats.under_replicated_percent == 33 and stats.brokers_spread_percent <= 100
    assert (stats.summed_offsets, stats.offsets_unknown) == (1 + 2, 1)
    assert [r.is_under_replicated for r in view.partitions] == [False, False, True]
    listed = topic_list(cluster=private_cluster, search=name).topics[0].stats
    assert (listed.offline_partitions, listed.offsets_unknown, listed.brokers_spread_percent) == (1, 1, 100)
    brokers = broker_list(cluster=private_cluster)
    assert brokers.offline_partitions >= 1
    assert {b.broker_id: b.offline_partitions for b in brokers.brokers}[2] >= 1
    assert {b.broker_id: b.state for b in brokers.brokers}[2] == "stopped"
    overview = cluster_overview(cluster=private_cluster)
    assert overview.offline_partitions >= 1 and overview.under_replicated_partitions >= overview.offline_partitions


def commit_offsets(bootstrap: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit offsets for a group without joining it (manual assignment)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(t, p) for t, p in offsets])
        consumer.commit({TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()})
    finally:
        consumer.close()


def test_topic_detail_of_a_missing_topic_is_not_found(cluster):
    with pytest.raises(NotFound, match="no topic 'no-such-topic'"):
        topic_detail(cluster=cluster, name="no-such-topic")


def test_the_topic_list_shows_size_messages_retention_and_cleanup_policy(cluster, engine_cluster, unique_topic,
                                                                         viewer_client):
    name = make_topic(cluster, unique_topic(), partitions=2, replication_factor=2,
                      configs={"retention.ms": "86400000", "cleanup.policy": "compact,delete"})
    # Keyed records: a compacted topic refuses keyless ones (INVALID_RECORD), as Kafka does.
    produce(engine_cluster.bootstrap, name, [(b"k%d" % i, b"v" * 50) for i in range(4)], partition=0)
    produce(engine_cluster.bootstrap, name, [(b"k%d" % i, b"v" * 50) for i in range(3)], partition=1)
    wait_for_partitions(cluster, name, lambda ps: all(len(p.isr) == 2 for p in ps), "both replicas in sync")
    row = topic_list(cluster=cluster, search=name).topics[0]
    assert (row.messages, row.retention_ms, row.cleanup_policy, row.retention_bytes) == (
        7, "86400000", "compact,delete", "-1")
    # Offsets, not records: on a compacted topic the count says it is an upper bound.
    assert row.is_compacted and topic_detail(cluster=cluster, name=name, with_groups=False).is_compacted
    listed = viewer_client.get(reverse("topics:list", args=[cluster.pk]), {"q": name}).content.decode()
    assert "transaction markers" in listed.split(">Messages</th>")[0].rsplit("<th", 1)[1]
    cell = listed.split(f'data-topic="{name}"')[1].split('data-col="messages"')[1].split("</td>")[0]
    assert "data-upper-bound" in cell and ">at most</small> 7" in cell
    page = viewer_client.get(reverse("topics:detail", args=[cluster.pk, name])).content.decode()
    assert ">at most</small> 7</dd>" in page.split('<dd id="topic-messages">')[1]
    # Two replicas of 7 records of 50 bytes, with batch headers: more than 700 bytes on disk.
    wait_until(lambda: topic_list(cluster=cluster, search=name).topics[0].size > 700, message="replicas' sizes")


def test_status_filters_pick_the_topics_in_each_state(private_cluster, viewer_client, unique_topic):
    """Broker 2 stops (controlled shutdown). By hand: `under` loses a replica; `offline` lived
    only on broker 2; `moved` loses its preferred leader to broker 0; `healthy` never touched 2."""
    prefix = unique_topic("status")
    layouts = {"healthy": {0: [0, 1]}, "under": {0: [0, 2]}, "offline": {0: [2]}, "moved": {0: [2, 0]}}
    names = {kind: make_topic(private_cluster, f"{prefix}-{kind}", assignments=layout)
             for kind, layout in layouts.items()}
    with cluster_gateway(private_cluster) as gw:
        gw.engine_broker_command(gw.engine_admin_endpoint(via_broker=0), 2, "stop")
    for kind in ("under", "moved"):
        wait_for_partitions(private_cluster, names[kind], lambda ps: 2 not in ps[0].isr, f"{kind} without broker 2")
    wait_for_partitions(private_cluster, names["offline"], lambda ps: ps[0].leader == -1, "offline partition")
    wait_for_partitions(private_cluster, names["moved"], lambda ps: ps[0].leader == 0, "moved leadership")

    def listed(status: str) -> set[str]:
        return {t.name for t in topic_list(cluster=private_cluster, search=prefix, status=status).topics}

    expected = {"": {"healthy", "under", "offline", "moved"}, "under_replicated": {"under", "offline", "moved"},
                "offline": {"offline"}, "not_preferred": {"offline", "moved"},
                "no-such-status": {"healthy", "under", "offline", "moved"}}   # unknown: no filter
    for status, kinds in expected.items():
        assert listed(status) == {names[k] for k in kinds}, status
    page = viewer_client.get(reverse("topics:list", args=[private_cluster.pk]),
                             {"q": prefix, "status": "not_preferred"}).content.decode()
    assert {names[k] for k in layouts if f'data-topic="{names[k]}"' in page} == {names["offline"], names["moved"]}
