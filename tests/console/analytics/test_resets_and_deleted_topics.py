"""Real snapshots of a real engine, then the jobs: an offset reset of an empty group is not
consumption, and a topic deleted since the newest snapshot is no longer listed."""
from __future__ import annotations

import datetime as dt

from console.analytics import lake as L
from console.analytics.collector import snapshot_collect
from console.analytics.jobs import rates, retention
from console.analytics.launch import lake_frame
from console.clusters.gateway import cluster_gateway
from tests.console.analytics.test_collector import produce
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit

T1 = dt.datetime(2026, 11, 2, 10, 0, tzinfo=dt.timezone.utc)


def test_a_reset_is_not_consumption_and_a_deleted_topic_leaves_the_lists(spark, cluster, engine_cluster,
                                                                         unique_topic, tmp_path):
    topic, doomed = make_topic(cluster, unique_topic(), partitions=2), make_topic(cluster, unique_topic("doomed"))
    produce(engine_cluster.bootstrap, topic, {0: 3000, 1: 3922})
    produce(engine_cluster.bootstrap, doomed, {0: 10})
    group, lake_url = unique_topic("stopped"), str(tmp_path / "lake")
    commit(cluster, group, {(topic, 0): 0, (topic, 1): 100})         # an empty group: no member ever
    snapshot_collect(cluster=cluster, lake_url=lake_url, taken_at=T1)
    commit(cluster, group, {(topic, 0): 1500, (topic, 1): 2000})     # an offset reset, still 3,422 behind
    with cluster_gateway(cluster) as gw:
        gw.delete_topic(doomed)
    for minute in (1, 2):
        snapshot_collect(cluster=cluster, lake_url=lake_url, taken_at=T1 + dt.timedelta(minutes=minute))

    frame = lambda table: lake_frame(spark, lake_url=lake_url, table=table, cluster_id=cluster.pk)  # noqa: E731
    offsets = frame(L.GROUP_OFFSETS).where(f"{L.GROUP} = '{group}'")
    assert {r[L.MEMBERS] for r in offsets.collect()} == {0}
    [catch_up] = rates.catch_up(offsets, window_seconds=900).collect()
    assert catch_up[L.LAG] == 3422 and catch_up[rates.CONSUME_RATE] == 0.0
    assert catch_up[rates.CATCH_UP_SECONDS] is None                      # nobody consumes: no catch-up time
    [consumed] = rates.consumption_rates(offsets, resolution_seconds=3600).collect()
    assert consumed[rates.RATE] == 0.0                                   # 3,400 offsets moved, none consumed

    partitions = frame(L.PARTITIONS)
    grown = {r[L.TOPIC] for r in retention.topic_growth(partitions).collect()}
    aged = {r[L.TOPIC] for r in retention.effective_retention(partitions, frame(L.TOPIC_CONFIGS)).collect()}
    assert topic in grown and doomed not in grown
    assert doomed not in aged
    assert doomed in {r[L.TOPIC] for r in partitions.collect()}         # its history stays in the lake
