"""/metrics on the console: a bearer token, kafka_exporter's and kafka-lag-exporter's series
about a real engine, Burrow's status codes, a cluster label on every series, and promtool."""
from __future__ import annotations

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from console.clusters.models import Cluster
from console.metrics.observation import OBSERVATIONS
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit
from tests.support.partition_io import send_values
from tests.support.promtool import check_metrics

TOKEN = "metrics-test-token-0123456789"


@pytest.fixture
def metrics_token(settings, cluster):
    """The token set, and only the test engine's row (the bundled engine's row that migrations
    make points at ports nothing listens on in tests)."""
    Cluster.objects.exclude(pk=cluster.pk).delete()
    settings.METRICS_TOKEN = TOKEN
    OBSERVATIONS.clear()
    yield TOKEN
    OBSERVATIONS.clear()


def scrape(**headers) -> tuple[int, bytes]:
    answer = Client().get("/metrics", headers={"Authorization": f"Bearer {TOKEN}", **headers})
    return answer.status_code, body_of(answer)


def body_of(answer) -> bytes:
    return b"".join(answer.streaming_content) if answer.streaming else answer.content


def samples(exposition: bytes) -> list:
    return [s for family in text_string_to_metric_families(exposition.decode()) for s in family.samples]


def value(exposition: bytes, name: str, **labels) -> float:
    found = [s.value for s in samples(exposition) if s.name == name and labels.items() <= s.labels.items()]
    assert len(found) == 1, f"{name} {labels}: {found}"
    return found[0]


@pytest.mark.django_db
def test_metrics_are_off_without_a_token_and_want_the_bearer_token(cluster, settings):
    settings.METRICS_TOKEN = ""
    assert Client().get("/metrics").status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert Client().get("/metrics").status_code == 401
    assert Client().get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    refused = Client().get("/metrics", headers={"Authorization": f"Basic {TOKEN}"})
    assert refused.status_code == 401 and refused["WWW-Authenticate"].startswith("Bearer")
    assert TOKEN.encode() not in refused.content


@pytest.mark.django_db
def test_partition_and_group_series_with_their_labels(cluster, metrics_token, unique_topic):
    topic = make_topic(cluster, unique_topic(), partitions=2)
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 10, partition=0)
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 4, partition=1)
    group = f"{topic}-readers"
    commit(cluster, group, {(topic, 0): 6, (topic, 1): 4})

    status, body = scrape()
    assert status == 200
    labels = {"cluster": cluster.name, "topic": topic}
    assert value(body, "kafka_brokers", cluster=cluster.name) == 3
    assert value(body, "kafka_topic_partitions", **labels) == 2
    assert value(body, "kafka_topic_partition_current_offset", partition="0", **labels) == 10
    assert value(body, "kafka_topic_partition_oldest_offset", partition="0", **labels) == 0
    assert value(body, "kafka_topic_partition_replicas", partition="1", **labels) == 1
    assert value(body, "kafka_topic_partition_in_sync_replica", partition="1", **labels) == 1
    assert value(body, "kafka_topic_partition_leader_is_preferred", partition="1", **labels) == 1
    assert value(body, "kafka_topic_partition_under_replicated_partition", partition="1", **labels) == 0
    in_group = {"cluster": cluster.name, "consumergroup": group, "topic": topic}
    assert value(body, "kafka_consumergroup_current_offset", partition="0", **in_group) == 6
    assert value(body, "kafka_consumergroup_lag", partition="0", **in_group) == 4
    assert value(body, "kafka_consumergroup_lag", partition="1", **in_group) == 0
    assert value(body, "kafka_consumergroup_lag_sum", **in_group) == 4
    assert value(body, "kafka_consumergroup_current_offset_sum", **in_group) == 10
    assert value(body, "kafka_consumergroup_members", cluster=cluster.name, consumergroup=group) == 0
    # One observation: Burrow's window is too short to judge, so OK (code 1).
    assert value(body, "kafka_burrow_status", cluster=cluster.name, group=group) == 1
    assert all(s.labels.get("cluster") == cluster.name for s in samples(body)), "a series without the cluster label"


@pytest.mark.django_db
def test_time_lag_and_burrow_status_from_successive_observations(cluster, metrics_token, unique_topic):
    topic = make_topic(cluster, unique_topic())
    group = f"{topic}-stopped"
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 10)
    commit(cluster, group, {(topic, 0): 5})
    scrape()                                            # first observation: log end 10
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 10)
    _, body = scrape()                                  # second: log end 20, the group still at 5
    lag_seconds = value(body, "kafka_consumergroup_group_lag_seconds", cluster_name=cluster.name, group=group,
                        topic=topic, partition="0")
    assert lag_seconds > 0
    assert value(body, "kafka_consumergroup_group_max_lag_seconds", group=group) == lag_seconds
    # The offset did not move while the lag grew, and nobody is in the group: STOP, so the group is ERR.
    assert value(body, "kafka_burrow_partition_status", group=group, topic=topic, partition="0") == 4
    assert value(body, "kafka_burrow_status", group=group) == 3
    assert value(body, "kafka_console_consumergroup_catch_up_seconds", consumergroup=group) == float("inf")


@pytest.mark.django_db
def test_promtool_accepts_the_console_metrics(cluster, metrics_token, unique_topic):
    topic = make_topic(cluster, unique_topic())
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 3)
    commit(cluster, f"{topic}-g", {(topic, 0): 1})
    scrape()
    status, body = scrape(**{"Accept-Encoding": "identity"})
    assert status == 200
    result = check_metrics(body)
    assert result.returncode == 0, result.stderr.decode()[-3000:]


@pytest.mark.django_db
def test_gzip_when_the_scraper_asks_is_the_same_exposition(cluster, metrics_token, settings):
    import gzip
    settings.METRICS_MAX_AGE_SECONDS = 3600          # both answers from one observation ...
    settings.METRICS_WAIT_SECONDS = 120              # ... collected in the background, waited for
    plain = Client().get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    answer = Client().get("/metrics", headers={"Authorization": f"Bearer {TOKEN}", "Accept-Encoding": "gzip"})
    assert answer["Content-Encoding"] == "gzip"
    unzipped = gzip.decompress(body_of(answer))         # gzip members one after the other (RFC 1952)
    age = b"kafka_console_observation_age_seconds"
    assert unzipped.split(age)[0] == body_of(plain).split(age)[0] and b"kafka_brokers{" in unzipped
    assert check_metrics(unzipped).returncode == 0
