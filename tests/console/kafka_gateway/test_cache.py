"""The fleet-scale caches against a real engine: cached metadata goes stale only within its
max age and is dropped by the console's own writes; log dir sizes and the groups' lag are collected
in the background and shown with their age. A fake clock moves time; nothing here waits on one."""
import threading

import pytest
from django.urls import reverse
from kafka.admin import KafkaAdminClient, NewTopic

from console.brokers.selectors import broker_detail, broker_list
from console.clusters.gateway import cluster_gateway
from console.groups.selectors import group_detail, group_list
from console.clusters import selectors as cluster_selectors
from console.kafka_gateway import cache, cluster_health, group_lag
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit
from tests.support.groups import produce
from tests.support.snapshots import FakeClock, collection_held


@pytest.fixture
def clock(monkeypatch):
    """Fresh process-wide caches on a clock the test moves."""
    fake = FakeClock()
    monkeypatch.setattr(cache, "METADATA", cache.MetadataCache(clock=fake))
    monkeypatch.setattr(cache, "LOG_DIRS", cache.LogDirSizes(clock=fake))
    monkeypatch.setattr(cache, "GROUP_LAGS", cache.GroupLags(clock=fake))
    return fake


def _names(metadata) -> set[str]:
    return {t.name for t in metadata.topics}


def _create_elsewhere(bootstrap: str, name: str) -> None:
    """Another client (not this console) creates a topic: nothing tells the cache."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, 1, 1)], timeout_ms=30_000)
    finally:
        admin.close()


def test_cached_metadata_is_stale_only_within_its_max_age(cluster, engine_cluster, unique_topic, clock, settings):
    settings.KAFKA_METADATA_MAX_AGE_SECONDS = 5.0
    with cluster_gateway(cluster) as gw:
        first = gw.metadata(cached=True)
    assert cache.METADATA.fetches == 1
    elsewhere = unique_topic()
    _create_elsewhere(engine_cluster.bootstrap, elsewhere)

    clock.now += 4.9                      # young enough: served from the cache, without the new topic
    with cluster_gateway(cluster) as gw:
        assert gw.metadata(cached=True) is first and elsewhere not in _names(first)
        assert elsewhere in _names(gw.metadata())          # an uncached call always asks
    assert cache.METADATA.fetches == 1

    clock.now += 0.2                      # past the max age: the next page asks the cluster again
    with cluster_gateway(cluster) as gw:
        assert elsewhere in _names(gw.metadata(cached=True))
    assert cache.METADATA.fetches == 2


def test_the_consoles_own_writes_drop_the_cached_metadata(cluster, unique_topic, clock, settings):
    settings.KAFKA_METADATA_MAX_AGE_SECONDS = 3600.0
    with cluster_gateway(cluster) as gw:
        gw.metadata(cached=True)
    name = make_topic(cluster, unique_topic(), partitions=2)        # through the gateway
    with cluster_gateway(cluster) as gw:
        assert name in _names(gw.metadata(cached=True))
        gw.create_partitions(name, total_count=3)
        assert len(gw.metadata(cached=True).topic(name).partitions) == 3
        gw.delete_topic(name)
        assert name not in _names(gw.metadata(cached=True))
    assert cache.METADATA.fetches == 4


def test_max_age_zero_always_asks(cluster, clock, settings):
    settings.KAFKA_METADATA_MAX_AGE_SECONDS = 0.0
    with cluster_gateway(cluster) as gw:
        gw.metadata(cached=True)
        gw.metadata(cached=True)
    assert cache.METADATA.fetches == 2


def test_figures_a_page_collects_itself_are_as_old_as_the_page(cluster, clock, settings, viewer_client, monkeypatch):
    """Max age 0: each page collects the log dir sizes and health figures itself; their age is
    0 s, not the time since the clock's origin."""
    settings.LOG_DIR_SIZES_MAX_AGE_SECONDS = settings.CLUSTER_HEALTH_MAX_AGE_SECONDS = 0.0
    health = cluster_health.ClusterHealthSnapshots(clock=clock)
    monkeypatch.setattr(cluster_health, "CLUSTER_HEALTH", health)
    monkeypatch.setattr(cluster_selectors, "CLUSTER_HEALTH", health)
    clock.now += 500
    assert broker_list(cluster=cluster).log_dirs.age_seconds == 0
    assert viewer_client.get(f"/api/clusters/{cluster.pk}/brokers").json()["log_dirs"]["age_seconds"] == 0
    assert viewer_client.get(f"/api/clusters/{cluster.pk}/overview").json()["health_age"]["age_seconds"] == 0


def test_threads_asking_at_once_share_one_fetch(clock):
    """However many requests find the entry stale together, the cluster is asked once."""
    release, calls = threading.Event(), []

    def slow_fetch():
        calls.append(1)
        release.wait(30)
        return object()

    answers = []
    threads = [threading.Thread(target=lambda: answers.append(
        cache.METADATA.get(("k", "", "", ""), max_age=10, fetch=slow_fetch))) for _ in range(5)]
    for t in threads:
        t.start()
    release.set()
    for t in threads:
        t.join(30)
    assert len(calls) == 1 and len(answers) == 5 and len({id(a) for a in answers}) == 1


def test_log_dir_sizes_are_renewed_in_the_background_and_shown_with_their_age(
        private_cluster, unique_topic, clock, settings, viewer_client):
    settings.LOG_DIR_SIZES_MAX_AGE_SECONDS = 30.0
    settings.LOG_DIR_SIZES_WAIT_SECONDS = 60.0     # a generous bound for the first collection
    name = make_topic(private_cluster, unique_topic(), assignments={0: [1]})
    first = broker_list(cluster=private_cluster)   # the process's first collection is waited for
    assert cache.LOG_DIRS.collections == 1
    before = {b.broker_id: b.log_dir_size for b in first.brokers}
    assert before[1] is not None and first.log_dirs.collected_at is not None and first.log_dirs.age_seconds == 0

    produce(private_cluster.bootstrap_servers, name, [b"x" * 500] * 20, partition=0)
    clock.now += 10                               # young: the same totals, 10 s old, nothing collected
    stale = broker_list(cluster=private_cluster)
    assert {b.broker_id: b.log_dir_size for b in stale.brokers} == before
    assert stale.log_dirs.age_seconds == 10 and cache.LOG_DIRS.collections == 1
    page = viewer_client.get(reverse("brokers:list", args=[private_cluster.pk])).content.decode()
    assert "Log dir sizes as of" in page and "renewed when older than 30 s." in page and "data-renewing" not in page
    detail = broker_detail(cluster=private_cluster, broker_id=1)
    assert detail.log_dirs_age.age_seconds == 10 and sum(d.size for d in detail.log_dirs) == before[1]

    clock.now += 25                               # 35 s: too old to show; the page waits for the renewal
    renewed = broker_list(cluster=private_cluster)
    assert cache.LOG_DIRS.collections == 2
    assert renewed.brokers[1].log_dir_size > before[1] + 20 * 500
    assert renewed.log_dirs.age_seconds == 0 and not renewed.log_dirs.renewing
    data = viewer_client.get(f"/api/clusters/{private_cluster.pk}/brokers").json()
    assert data["log_dirs"]["age_seconds"] == 0 and data["log_dirs"]["max_age_seconds"] == 30.0
    assert data["brokers"][1]["log_dir_size"] == renewed.brokers[1].log_dir_size


def test_the_first_page_does_not_wait_past_its_budget(private_cluster, clock, settings, monkeypatch):
    """While the first collection runs past LOG_DIR_SIZES_WAIT_SECONDS the page answers
    without sizes, and says they are being collected."""
    settings.LOG_DIR_SIZES_MAX_AGE_SECONDS = 30.0
    settings.LOG_DIR_SIZES_WAIT_SECONDS = 0.0
    from console.kafka_gateway import log_dirs
    with collection_held(monkeypatch, log_dirs):
        view = broker_list(cluster=private_cluster)
        assert all(b.log_dir_size is None for b in view.brokers) and view.log_dirs.collected_at is None
        assert view.log_dirs.renewing                   # the page's note: "being collected", a loading state
    cache.LOG_DIRS.wait(cache.cache_key(private_cluster.connection_settings()), timeout=60)
    assert all(b.log_dir_size is not None for b in broker_list(cluster=private_cluster).brokers)


def test_sizes_older_than_they_are_kept_show_as_being_renewed_never_as_current(
        private_cluster, unique_topic, clock, settings, viewer_client, monkeypatch):
    """The renewal of old sizes runs past LOG_DIR_SIZES_WAIT_SECONDS: the page shows the old
    sizes marked as old, with a loading state, until the new ones are in."""
    settings.LOG_DIR_SIZES_MAX_AGE_SECONDS = 30.0
    settings.LOG_DIR_SIZES_WAIT_SECONDS = 60.0
    name = make_topic(private_cluster, unique_topic(), assignments={0: [2]})
    before = broker_list(cluster=private_cluster).brokers[2].log_dir_size
    produce(private_cluster.bootstrap_servers, name, [b"y" * 500] * 20, partition=0)
    clock.now += 1000                             # a quiet quarter of an hour
    settings.LOG_DIR_SIZES_WAIT_SECONDS = 0.0
    from console.kafka_gateway import log_dirs
    with collection_held(monkeypatch, log_dirs):
        old = broker_list(cluster=private_cluster)
        assert old.log_dirs.renewing and old.log_dirs.age_seconds == 1000
        assert old.brokers[2].log_dir_size == before
        page = viewer_client.get(reverse("brokers:list", args=[private_cluster.pk])).content.decode()
        note = page.split('id="log-dirs-age"')[1].split("</p>")[0]
        assert "data-renewing" in note and "Log dir sizes are being renewed: the ones shown, in grey, are 16 min 40 s old" in note
        assert "older than the 30 s they are kept" in note
        assert 'id="brokers-data" data-snapshot-region class="renewing"' in page
    cache.LOG_DIRS.wait(cache.cache_key(private_cluster.connection_settings()), timeout=60)
    page = viewer_client.get(reverse("brokers:list", args=[private_cluster.pk])).content.decode()
    assert "data-renewing" not in page and "Log dir sizes as of" in page
    assert broker_list(cluster=private_cluster).brokers[2].log_dir_size > before + 20 * 500


def _commit_elsewhere(cluster, group_id: str, offsets: dict[tuple[str, int], int]) -> None:
    """An offset reset by another tool, librdkafka's admin client (not this console: nothing
    drops its snapshot)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient
    tool = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    asked = ConsumerGroupTopicPartitions(group_id, [TopicPartition(t, p, o) for (t, p), o in offsets.items()])
    for future in tool.alter_consumer_group_offsets([asked]).values():
        future.result(30)


def _by_lag(cluster, prefix: str) -> list[tuple[str, int | None]]:
    view = group_list(cluster=cluster, search=prefix, sort="lag")
    return [(g.group_id[len(prefix):], g.total_lag) for g in view.groups]


def test_the_lag_sort_reuses_its_snapshot_within_its_max_age_and_renews_it_after(
        cluster, unique_topic, clock, settings, viewer_client):
    settings.GROUP_LAG_MAX_AGE_SECONDS = 10.0
    settings.GROUP_LAG_WAIT_SECONDS = 60.0        # a generous bound for the first collection
    topic = make_topic(cluster, unique_topic(), partitions=1)
    produce(cluster.bootstrap_servers, topic, [b"x"] * 12)
    prefix = f"lag-cache-{topic}-"
    for name, offset in (("a", 11), ("b", 2), ("c", 6)):
        commit(cluster, prefix + name, {(topic, 0): offset})
    key = cache.cache_key(cluster.connection_settings())

    first = group_list(cluster=cluster, search=prefix, sort="lag")    # the first collection is waited for
    assert _by_lag(cluster, prefix) == [("b", 10), ("c", 6), ("a", 1)]
    assert first.lag_age.collected_at is not None and first.lag_age.age_seconds == 0
    assert first.lag_age.max_age_seconds == 10.0 and cache.GROUP_LAGS.collections == 1
    assert {g.state for g in first.groups} == {"Empty"}               # the page's groups are described now

    _commit_elsewhere(cluster, prefix + "a", {(topic, 0): 0})          # a now lags 12 (another tool's reset)
    clock.now += 5                                # young: the same ranking, 5 s old, nothing collected
    assert _by_lag(cluster, prefix) == [("b", 10), ("c", 6), ("a", 1)]
    assert cache.GROUP_LAGS.collections == 1
    assert group_detail(cluster=cluster, group_id=prefix + "a").total_lag == 12    # one group: live
    url = reverse("groups:list", args=[cluster.pk])
    page = viewer_client.get(url, {"q": prefix, "sort": "lag"}).content.decode()
    assert "Lags for the sort as of" in page and "renewed when older than 10 s." in page
    data = viewer_client.get(reverse("api:groups", args=[cluster.pk]), {"q": prefix, "sort": "lag"}).json()
    assert data["lag_age"]["age_seconds"] == 5 and data["lag_age"]["max_age_seconds"] == 10.0
    assert [g["total_lag"] for g in data["groups"]] == [10, 6, 1]

    clock.now += 10                               # 15 s: too old to show; the page waits for the renewal
    renewed = group_list(cluster=cluster, search=prefix, sort="lag")
    assert cache.GROUP_LAGS.collections == 2
    assert renewed.lag_age.age_seconds == 0 and not renewed.lag_age.renewing
    cache.GROUP_LAGS.wait(key, timeout=60)
    assert _by_lag(cluster, prefix) == [("a", 12), ("b", 10), ("c", 6)]
    by_id = group_list(cluster=cluster, search=prefix)               # the id sort reads live, as today
    assert by_id.lag_age is None and [g.total_lag for g in by_id.groups] == [12, 10, 6]


def test_the_first_lag_sort_does_not_wait_past_its_budget(cluster, unique_topic, clock, settings, monkeypatch):
    """While the first collection runs past GROUP_LAG_WAIT_SECONDS the list answers sorted by
    group id without lags, and says the lag is being collected."""
    settings.GROUP_LAG_MAX_AGE_SECONDS = 10.0
    settings.GROUP_LAG_WAIT_SECONDS = 0.0
    topic = make_topic(cluster, unique_topic(), partitions=1)
    produce(cluster.bootstrap_servers, topic, [b"x"] * 4)
    prefix = f"lag-first-{topic}-"
    for name, offset in (("a", 3), ("b", 0)):
        commit(cluster, prefix + name, {(topic, 0): offset})
    with collection_held(monkeypatch, group_lag):
        view = group_list(cluster=cluster, search=prefix, sort="lag")
        assert [(g.group_id[len(prefix):], g.total_lag) for g in view.groups] == [("a", None), ("b", None)]
        assert view.lag_age.collected_at is None and any("being collected" in w for w in view.warnings)
    cache.GROUP_LAGS.wait(cache.cache_key(cluster.connection_settings()), timeout=60)
    assert _by_lag(cluster, prefix) == [("b", 4), ("a", 1)]


def test_a_topics_consumers_are_found_in_the_lag_snapshot_and_read_live(cluster, unique_topic, clock, settings,
                                                                       viewer_client):
    """The topic's Consumers tab and the groups list by topic ask live only the groups the snapshot shows committed on the topic
    (and those that may have members), say as of when, and see this console's own commits at
    once (they drop the snapshot); another tool's commit on an empty group shows once the
    snapshot is renewed."""
    from console.topics.selectors import topic_consumers

    settings.GROUP_LAG_MAX_AGE_SECONDS = 10.0
    settings.GROUP_LAG_WAIT_SECONDS = 60.0
    topic, other = make_topic(cluster, unique_topic(), partitions=2), make_topic(cluster, unique_topic("other"))
    produce(cluster.bootstrap_servers, topic, [b"x"] * 10, partition=0)
    prefix = f"consumers-{topic}-"
    commit(cluster, prefix + "reader", {(topic, 0): 4})
    commit(cluster, prefix + "elsewhere", {(other, 0): 0})
    reading = lambda: {g.group_id for g in group_list(cluster=cluster, search=prefix, topic=topic).groups}  # noqa: E731
    assert reading() == {prefix + "reader"}
    view = topic_consumers(cluster=cluster, name=topic)
    [row] = [g for g in view.consumer_groups if g.group_id.startswith(prefix)]
    assert (row.group_id, row.total_lag) == (prefix + "reader", 6)
    assert view.consumers_age.collected_at is not None and view.consumers_age.max_age_seconds == 10.0
    tab = viewer_client.get(reverse("topics:consumers", args=[cluster.pk, topic])).content.decode()
    assert 'id="consumers-age"' in tab and "The groups with commits on this topic as of" in tab
    assert f'data-group="{prefix}reader"' in tab and "renewed when older than 10 s" in tab
    collections = cache.GROUP_LAGS.collections
    with cluster_gateway(cluster) as gw:             # this console's own commit: the snapshot goes
        coordinator = gw.groups.find_coordinators([prefix + "reset"]).found[prefix + "reset"]
        assert gw.groups.commit_offsets(prefix + "reset", coordinator=coordinator, offsets={(topic, 1): (0, "")}) == {}
    assert reading() == {prefix + "reader", prefix + "reset"}
    assert cache.GROUP_LAGS.collections == collections + 1

    _commit_elsewhere(cluster, prefix + "tool", {(topic, 0): 1})        # another tool's commit
    assert reading() == {prefix + "reader", prefix + "reset"}             # young snapshot: not seen yet
    clock.now += 11                                                      # past its age: renewed first
    assert reading() == {prefix + "reader", prefix + "reset", prefix + "tool"}
