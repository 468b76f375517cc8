"""The fleet-scale caches against a real engine: cached metadata goes stale only within its
max age and is dropped by the console's own writes; log dir sizes are collected in the
background and shown with their age. A fake clock moves time; nothing here waits on one."""
import threading

import pytest
from django.urls import reverse
from kafka.admin import KafkaAdminClient, NewTopic

from console.brokers.selectors import broker_detail, broker_list
from console.clusters.gateway import cluster_gateway
from console.kafka_gateway import cache
from tests.console.conftest import make_topic
from tests.support.groups import produce


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    """Fresh process-wide caches on a clock the test moves."""
    fake = FakeClock()
    monkeypatch.setattr(cache, "METADATA", cache.MetadataCache(clock=fake))
    monkeypatch.setattr(cache, "LOG_DIRS", cache.LogDirSizes(clock=fake))
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
    assert "Log dir sizes as of" in page and "(10 s ago;" in page
    detail = broker_detail(cluster=private_cluster, broker_id=1)
    assert detail.log_dirs_age.age_seconds == 10 and sum(d.size for d in detail.log_dirs) == before[1]

    clock.now += 25                               # 35 s: shown as they are, renewed behind the page
    old = broker_list(cluster=private_cluster)
    assert old.brokers[1].log_dir_size == before[1] and old.log_dirs.age_seconds == 35
    assert cache.LOG_DIRS.collections == 2
    cache.LOG_DIRS.wait(cache.cache_key(private_cluster.connection_settings()), timeout=60)
    renewed = broker_list(cluster=private_cluster)
    assert renewed.brokers[1].log_dir_size > before[1] + 20 * 500 and renewed.log_dirs.age_seconds == 0
    data = viewer_client.get(f"/api/clusters/{private_cluster.pk}/brokers").json()
    assert data["log_dirs"]["age_seconds"] == 0 and data["log_dirs"]["max_age_seconds"] == 30.0
    assert data["brokers"][1]["log_dir_size"] == renewed.brokers[1].log_dir_size


def test_the_first_page_does_not_wait_past_its_budget(private_cluster, clock, settings, monkeypatch):
    """While the first collection runs past LOG_DIR_SIZES_WAIT_SECONDS the page answers
    without sizes, and says they are being collected."""
    settings.LOG_DIR_SIZES_MAX_AGE_SECONDS = 30.0
    settings.LOG_DIR_SIZES_WAIT_SECONDS = 0.0
    from console.kafka_gateway import log_dirs
    release = threading.Event()
    real_collect = log_dirs.collect

    def held_collect(gateway, brokers):
        release.wait(60)
        return real_collect(gateway, brokers)

    monkeypatch.setattr(log_dirs, "collect", held_collect)
    try:
        view = broker_list(cluster=private_cluster)
        assert all(b.log_dir_size is None for b in view.brokers) and view.log_dirs.collected_at is None
        assert any("being collected" in w for w in view.warnings)
    finally:
        release.set()
    cache.LOG_DIRS.wait(cache.cache_key(private_cluster.connection_settings()), timeout=60)
    assert all(b.log_dir_size is not None for b in broker_list(cluster=private_cluster).brokers)
