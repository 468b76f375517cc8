"""A cluster registered with a restricted principal: it may describe a few topics and read one
group, nothing on the cluster (no DESCRIBE, DESCRIBE_CONFIGS or ALTER on it), as a managed
Kafka that refuses DescribeLogDirs and broker DescribeConfigs. Every page still answers -
never a 500 - listing what the principal may see and saying "not authorized" where Kafka
refused."""
import os
import uuid

import pytest
from django.urls import reverse
from kafka import KafkaProducer
from kafka.admin import NewTopic

from console.clusters.services import cluster_create
from tests.support.acls import USERS, grant, kafka_python_login, revoke_all

SECRET_ENV = "CONSOLE_SECRET_TEST_RESTRICTED"
os.environ[SECRET_ENV] = USERS["bob"]
PREFIX = f"visible-{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def restricted_engine(acl_engine, acl_admin):
    """bob may DESCRIBE topics PREFIX-* and READ group PREFIX-group; the topics exist."""
    acl_admin.create_topics([NewTopic(f"{PREFIX}-a", 2, 2), NewTopic(f"{PREFIX}-b", 1, 2),
                             NewTopic(f"hidden-{PREFIX}", 1, 2)])
    producer = KafkaProducer(bootstrap_servers=acl_engine.bootstrap, **kafka_python_login("admin"))
    producer.send(f"{PREFIX}-a", b"a record bob may not read", partition=0).get(timeout=30)
    producer.close()
    grant(acl_admin, "User:bob", "DESCRIBE", "TOPIC", PREFIX, pattern="PREFIXED")
    grant(acl_admin, "User:bob", "READ", "GROUP", f"{PREFIX}-group")
    yield acl_engine
    revoke_all(acl_admin, "User:bob")


@pytest.fixture
def restricted(db, restricted_engine):
    return cluster_create(name="restricted", bootstrap_servers=restricted_engine.bootstrap,
                          security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-256", sasl_username="bob",
                          sasl_password_env=SECRET_ENV)


def pages(cluster_id: int) -> dict[str, str]:
    return {
        "overview": reverse("clusters:overview", args=[cluster_id]),
        "brokers": reverse("brokers:list", args=[cluster_id]),
        "broker": reverse("brokers:detail", args=[cluster_id, 0]),
        "topics": reverse("topics:list", args=[cluster_id]),
        "topic": reverse("topics:detail", args=[cluster_id, f"{PREFIX}-a"]),
        "topic configs": reverse("topics:configs", args=[cluster_id, f"{PREFIX}-a"]),
        "hidden topic": reverse("topics:detail", args=[cluster_id, f"hidden-{PREFIX}"]),
        "messages": reverse("messages:browse", args=[cluster_id, f"{PREFIX}-a"]),
        "groups": reverse("groups:list", args=[cluster_id]),
        "group": reverse("groups:detail", args=[cluster_id, f"{PREFIX}-group"]),
        "transactions": reverse("transactions:list", args=[cluster_id]),
        "quotas": reverse("quotas:list", args=[cluster_id]),
        "reassignments": reverse("reassignments:list", args=[cluster_id]),
        "analytics": reverse("analytics:cluster", args=[cluster_id]),
        "acls": reverse("acls:list", args=[cluster_id]),
        "users": reverse("acls:users", args=[cluster_id]),
        "alerts": reverse("alerts:list", args=[cluster_id]),
        "schemas": reverse("schema_registry:list", args=[cluster_id]),
    }


# page: (status, whether it says "not authorized")
EXPECTED = {
    "overview": (200, False), "brokers": (200, True), "broker": (200, True), "topics": (200, True),
    "topic": (200, True), "topic configs": (403, True), "hidden topic": (404, False), "messages": (403, True),
    "groups": (200, False), "transactions": (200, True), "quotas": (200, True), "reassignments": (200, False),
    "analytics": (200, False), "acls": (200, True), "users": (200, True), "alerts": (200, False),
    "schemas": (200, False),
}


def test_every_page_answers_and_says_not_authorized_where_kafka_refused(restricted, console_admin_client):
    found = {}
    for name, url in pages(restricted.pk).items():
        response = console_admin_client.get(url)
        found[name] = (response.status_code, "not authorized" in response.content.decode().lower())
    assert {name: found[name] for name in EXPECTED} == EXPECTED


def test_pages_list_what_the_principal_may_see(restricted, console_admin_client):
    topics = console_admin_client.get(pages(restricted.pk)["topics"]).content.decode()
    assert f'data-topic="{PREFIX}-a"' in topics and f'data-topic="{PREFIX}-b"' in topics
    assert f"hidden-{PREFIX}" not in topics
    topic = console_admin_client.get(pages(restricted.pk)["topic"]).content.decode()
    assert 'data-partition="0"' in topic and 'data-partition="1"' in topic    # its partitions are listed
    configs = console_admin_client.get(pages(restricted.pk)["topic configs"]).content.decode()
    assert "TOPIC_AUTHORIZATION_FAILED (29)" in configs
    broker = console_admin_client.get(pages(restricted.pk)["broker"]).content.decode()
    assert broker.count("Configs: not authorized") == 1 and "CLUSTER_AUTHORIZATION_FAILED (31)" in broker
    assert 'id="broker-configs-refused"' in broker and "The broker is down" not in broker
    acls = console_admin_client.get(pages(restricted.pk)["acls"]).content.decode()
    assert 'id="acl-error"' in acls and "CLUSTER_AUTHORIZATION_FAILED (31)" in acls


def test_the_json_api_says_403_not_500(restricted, console_admin_client):
    refused = console_admin_client.get(reverse("api:acls", args=[restricted.pk]))
    assert refused.status_code == 400 and "CLUSTER_AUTHORIZATION_FAILED" in refused.json()["error"]
    topic = console_admin_client.get(reverse("api:topic", args=[restricted.pk, f"{PREFIX}-a"]))
    assert topic.status_code == 200
    messages = console_admin_client.get(reverse("api:messages", args=[restricted.pk, f"{PREFIX}-a"]))
    assert messages.status_code == 403 and messages.json()["not_authorized"] is True
