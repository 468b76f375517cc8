"""The console against a cluster that is plain Kafka to it: an engine started with --no-admin
has no admin interface and advertises no `engine.admin.endpoint`, exactly what the console
sees of Apache Kafka. Every page works; the engine-only broker stop/start is simply absent,
and asking for it anyway gets a readable refusal."""
import pytest
from django.urls import reverse

from console.clusters.gateway import cluster_gateway
from console.clusters.services import cluster_create
from tests.console.conftest import make_topic


@pytest.fixture
def plain_cluster(db, engine_factory):
    engine = engine_factory(brokers=3, admin=False)
    return cluster_create(name="plain kafka", bootstrap_servers=engine.bootstrap)


def test_no_engine_admin_endpoint_is_advertised(plain_cluster):
    with cluster_gateway(plain_cluster) as gw:
        assert gw.engine_admin_endpoint(via_broker=0) is None
        assert "engine.admin.endpoint" not in {c.name for c in gw.broker_configs(0)}


def test_every_page_works_without_the_engine_admin_interface(plain_cluster, operator_client, unique_topic):
    name = make_topic(plain_cluster, unique_topic(), partitions=3, replication_factor=3)
    pk = plain_cluster.pk

    overview = operator_client.get(reverse("clusters:overview", args=[pk])).content.decode()
    brokers = operator_client.get(reverse("brokers:list", args=[pk]))
    topic = operator_client.get(reverse("topics:detail", args=[pk, name]))
    listed = operator_client.get(reverse("topics:list", args=[pk]))
    api = operator_client.get(f"/api/clusters/{pk}/brokers").json()

    assert 'id="ov-brokers-up">3<' in overview
    assert brokers.status_code == topic.status_code == listed.status_code == 200
    assert brokers.content.decode().count("<tr data-broker=") == 3
    assert 'data-admin-action="stop-broker"' not in brokers.content.decode()
    assert 'class="warning"' not in brokers.content.decode()       # no admin interface is not an error
    assert api["can_stop_start"] is False and api["warnings"] == []
    assert f'data-topic="{name}"' in listed.content.decode()


def test_stopping_a_broker_is_refused_with_a_reason(plain_cluster, operator_client):
    page = reverse("brokers:list", args=[plain_cluster.pk])
    response = operator_client.post(reverse("brokers:stop", args=[plain_cluster.pk, 1]),
                                    {"next": page, "confirmed": "yes"}, follow=True)
    assert "does not advertise the engine&#x27;s admin interface" in response.content.decode()
