"""A console process's start-up warm-up against a real engine: with the fleet-scale caches on,
it leaves every cluster's metadata, log dir sizes, groups' lag and partitions' open
transactions cached, so the first pages ask the cluster for none of them; a cluster that is
down delays start-up by at most the wait and raises nothing; with the caches off (max age
0) it asks no cluster at all."""
import pytest

from console.brokers.selectors import broker_list
from console.clusters.models import Cluster
from console.groups.selectors import group_list
from console.kafka_gateway import cache
from console.transactions.selectors import transaction_list
from console.warmup import warm_cluster_caches
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit


@pytest.fixture
def fresh_caches(monkeypatch, settings):
    """Empty process-wide caches, turned on as in production."""
    monkeypatch.setattr(cache, "METADATA", cache.MetadataCache())
    monkeypatch.setattr(cache, "LOG_DIRS", cache.LogDirSizes())
    monkeypatch.setattr(cache, "GROUP_LAGS", cache.GroupLags())
    monkeypatch.setattr(cache, "TRANSACTION_PRODUCERS", cache.TransactionProducers())
    settings.KAFKA_METADATA_MAX_AGE_SECONDS = 600.0
    settings.LOG_DIR_SIZES_MAX_AGE_SECONDS = 600.0
    settings.GROUP_LAG_MAX_AGE_SECONDS = 600.0
    settings.TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS = 600.0
    settings.LOG_DIR_SIZES_WAIT_SECONDS = 0.0     # a page that found nothing cached would not wait
    settings.GROUP_LAG_WAIT_SECONDS = 0.0
    settings.TRANSACTIONS_PRODUCERS_WAIT_SECONDS = 0.0


def _key(cluster: Cluster) -> cache.CacheKey:
    return cache.cache_key(cluster.connection_settings())


def test_warm_up_fills_every_cache_before_the_first_page(cluster, unique_topic, fresh_caches):
    topic = make_topic(cluster, unique_topic())
    commit(cluster, "warm-up-group", {(topic, 0): 0})
    Cluster.objects.exclude(pk=cluster.pk).delete()      # only the shared engine: nothing else to wait for

    threads = warm_cluster_caches(wait_seconds=120)

    assert [t.is_alive() for t in threads] == [False]
    assert cache.METADATA.fresh(_key(cluster), max_age=600) is not None
    assert cache.LOG_DIRS.collections == 1 and cache.GROUP_LAGS.collections == 1
    assert cache.TRANSACTION_PRODUCERS.collections == 1
    fetched = cache.METADATA.fetches
    brokers = broker_list(cluster=cluster)
    groups = group_list(cluster=cluster, sort="lag")
    transactions = transaction_list(cluster=cluster)
    assert cache.METADATA.fetches == fetched                # the pages asked the cluster for no metadata
    assert cache.LOG_DIRS.collections == 1 and cache.GROUP_LAGS.collections == 1
    assert cache.TRANSACTION_PRODUCERS.collections == 1
    assert not any("being collected" in w for w in brokers.warnings + groups.warnings + transactions.warnings)
    assert not (brokers.log_dirs.renewing or groups.lag_age.renewing or transactions.producers_age.renewing)
    assert transactions.producers_age.collected_at is not None
    assert all(row.log_dir_size is not None for row in brokers.brokers)
    assert "warm-up-group" in [row.group_id for row in groups.groups]


def test_a_cluster_that_is_down_delays_start_up_at_most_the_wait(db, fresh_caches, settings, caplog):
    caplog.set_level("INFO", logger="console.warmup")
    settings.KAFKA_BOOTSTRAP_TIMEOUT_MS = 10_000           # much longer than the wait below
    Cluster.objects.all().delete()
    down = Cluster.objects.create(name="down", bootstrap_servers="127.0.0.1:1")

    threads = warm_cluster_caches(wait_seconds=0.2)

    assert [t.is_alive() for t in threads] == [True]        # returned at the wait; still trying to connect
    threads[0].join(120)                                    # it gives up at the bootstrap timeout, quietly
    assert not threads[0].is_alive()
    assert cache.METADATA.fresh(_key(down), max_age=600) is None
    assert "warm-up of cluster down skipped: Cannot connect to 127.0.0.1:1" in caplog.text


def test_with_the_caches_off_no_cluster_is_asked(cluster, fresh_caches, settings):
    settings.KAFKA_METADATA_MAX_AGE_SECONDS = 0.0

    assert warm_cluster_caches(wait_seconds=30) == []
    assert cache.METADATA.fetches == 0 and cache.LOG_DIRS.collections == 0
    assert cache.TRANSACTION_PRODUCERS.collections == 0
