"""The overview's health figures on a real engine: records in and out measured between two
collections, the disk, lagging groups, and each broker's Kafka API level."""
from django.urls import reverse

from console.clusters.selectors import cluster_overview
from console.kafka_gateway import cluster_health
from tests.console.conftest import make_topic
from tests.support.groups import GroupClient, assignment, produce, subscription


def test_throughput_counts_records_written_and_consumed_by_groups_with_members(cluster, engine_cluster,
                                                                               unique_topic, monkeypatch):
    # The overview names the 5 groups with the most lag; the engine is shared with other tests,
    # whose groups may lag more than these: name them all here.
    monkeypatch.setattr(cluster_health, "LAGGING_SHOWN", 100_000)
    topic = make_topic(cluster, unique_topic(), partitions=2)
    produce(engine_cluster.bootstrap, topic, [b"x"] * 100, partition=0)
    member = GroupClient(engine_cluster, topic + "-readers")
    idle = GroupClient(engine_cluster, topic + "-idle")            # commits, but has no members
    try:
        joined = member.join_as_new_member(protocols=[("range", subscription([topic]))], session_timeout_ms=60000)
        m, generation = joined.member_id, joined.generation_id
        assert member.sync(m, generation, {m: assignment({topic: [0, 1]})}).error_code == 0
        assert member.commit({(topic, 0): 100, (topic, 1): 0}, member_id=m, generation_id=generation) == {
            (topic, 0): 0, (topic, 1): 0}
        assert idle.commit({(topic, 0): 10}) == {(topic, 0): 0}

        before = cluster_overview(cluster=cluster).health           # the baseline collection
        produce(engine_cluster.bootstrap, topic, [b"y"] * 400, partition=1)
        assert member.commit({(topic, 0): 100, (topic, 1): 250}, member_id=m, generation_id=generation) == {
            (topic, 0): 0, (topic, 1): 0}
        assert idle.commit({(topic, 0): 90}) == {(topic, 0): 0}     # a reset, say: nobody read these
        after = cluster_overview(cluster=cluster).health
    finally:
        member.close()
        idle.close()

    measured = after.throughput
    assert round(measured.records_in_per_second * measured.seconds) == 400     # not the commits' own records
    assert round(measured.records_out_per_second * measured.seconds) == 250     # the idle group is left out
    assert before.groups >= 2 and after.groups == before.groups
    lagging = {g.group_id: g.lag for g in after.lagging}
    assert lagging[topic + "-readers"] == 150 and lagging[topic + "-idle"] == 10
    assert after.lagging_count >= 2
    assert after.disk_bytes > 0 and after.disk_growth is not None and after.disk_growth.seconds > 0
    versions = dict(after.broker_versions)
    assert sorted(versions) == [0, 1, 2] and all(v[0].isdigit() for v in versions.values()), versions


def test_the_overview_page_and_json_show_them(cluster, viewer_client):
    url = reverse("clusters:overview", args=[cluster.pk])
    viewer_client.get(url)
    page = viewer_client.get(url).content.decode()
    for figure in ("ov-records-in", "ov-records-out", "ov-disk", "ov-groups", "ov-lagging", "ov-controller"):
        assert f'id="{figure}"' in page, figure
    assert page.split('id="ov-records-in"')[1].split("</dd>")[0].endswith("/s")
    assert page.split('<td class="version">')[1].split("</td>")[0][0].isdigit()
    data = viewer_client.get(f"/api/clusters/{cluster.pk}/overview").json()
    assert {"groups", "lagging", "disk_bytes", "throughput", "broker_versions"} <= set(data["health"])
    assert data["health"]["throughput"]["records_in_per_second"] >= 0
