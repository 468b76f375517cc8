import pytest
from django.conf import settings
from django.core.exceptions import ValidationError

from console.clusters.models import Cluster
from console.clusters.services import cluster_create, cluster_register_bundled
from console.errors import ConsoleError


def test_migrate_registers_the_bundled_engine(db):
    bundled = Cluster.objects.get(is_bundled=True)
    assert bundled.bootstrap_servers == settings.ENGINE_BOOTSTRAP


def test_register_bundled_follows_engine_bootstrap(db):
    first = cluster_register_bundled(bootstrap_servers="127.0.0.1:19092")
    again = cluster_register_bundled(bootstrap_servers="127.0.0.1:19092,127.0.0.1:19093")
    assert again.pk == first.pk and Cluster.objects.filter(is_bundled=True).count() == 1
    assert Cluster.objects.get(pk=first.pk).bootstrap_servers == "127.0.0.1:19092,127.0.0.1:19093"


def test_an_edited_bundled_bootstrap_survives_migrate_unless_engine_bootstrap_is_set(db):
    from console.clusters.services import LEGACY_BUNDLED_BOOTSTRAP

    Cluster.objects.filter(is_bundled=True).update(bootstrap_servers=LEGACY_BUNDLED_BOOTSTRAP)
    upgraded = cluster_register_bundled(bootstrap_servers="127.0.0.1:9092,127.0.0.1:9093", follow=False)
    assert upgraded.bootstrap_servers == "127.0.0.1:9092,127.0.0.1:9093"      # the old single default moves on
    Cluster.objects.filter(pk=upgraded.pk).update(bootstrap_servers="10.0.0.1:9092")
    kept = cluster_register_bundled(bootstrap_servers="127.0.0.1:9092,127.0.0.1:9093", follow=False)
    assert kept.bootstrap_servers == "10.0.0.1:9092"


def test_cluster_create_checks_bootstrap_servers(db):
    with pytest.raises(ValidationError, match="host:port"):
        cluster_create(name="bad", bootstrap_servers="localhost")
    assert cluster_create(name="ok", bootstrap_servers="kafka-1:9092, kafka-2:9092").pk


def test_sasl_password_comes_from_the_environment(db, monkeypatch):
    cluster = cluster_create(name="sasl", bootstrap_servers="kafka:9093", security_protocol="SASL_SSL",
                             sasl_mechanism="SCRAM-SHA-512", sasl_username="console",
                             sasl_password_env="CONSOLE_SECRET_KAFKA_PASSWORD")
    monkeypatch.delenv("CONSOLE_SECRET_KAFKA_PASSWORD", raising=False)
    with pytest.raises(ConsoleError, match="CONSOLE_SECRET_KAFKA_PASSWORD"):
        cluster.connection_settings()
    monkeypatch.setenv("CONSOLE_SECRET_KAFKA_PASSWORD", "s3cret")
    settings_ = cluster.connection_settings()
    assert (settings_.sasl_mechanism, settings_.sasl_username, settings_.sasl_password) == (
        "SCRAM-SHA-512", "console", "s3cret")
    assert "s3cret" not in str(Cluster.objects.filter(pk=cluster.pk).values().get())


def test_cluster_add_and_remove_are_audited(db, users):
    from console.accounts.models import AuditLogEntry
    from console.clusters.services import cluster_add, cluster_remove
    from console.errors import InvalidInput

    admin = users["admin"]
    added = cluster_add(actor=admin, name="staging", bootstrap_servers="kafka-1:9092,kafka-2:9092")
    with pytest.raises(InvalidInput, match="host:port"):
        cluster_add(actor=admin, name="broken", bootstrap_servers="kafka-1")
    with pytest.raises(InvalidInput, match="Type the cluster's name, staging"):
        cluster_remove(actor=admin, cluster=added, confirmation="stage")
    with pytest.raises(InvalidInput, match="bundled engine cannot be removed"):
        cluster_remove(actor=admin, cluster=Cluster.objects.get(is_bundled=True), confirmation="local engine")
    cluster_remove(actor=admin, cluster=added, confirmation="staging")

    assert not Cluster.objects.filter(name__in=["staging", "broken"]).exists()
    assert list(AuditLogEntry.objects.order_by("id").values_list("action", "target", "result", "cluster_name")) == [
        ("cluster.add", "staging", "ok", ""),
        ("cluster.add", "broken", "failed", ""),
        ("cluster.remove", "staging", "failed", "staging"),
        ("cluster.remove", "local engine", "failed", "local engine"),
        ("cluster.remove", "staging", "ok", "staging"),
    ]


def test_brokers_seen_are_remembered_and_their_address_kept_current(db):
    from console.clusters.models import KnownBroker
    from console.clusters.services import cluster_brokers_seen
    from console.kafka_gateway import BrokerNode, EngineBroker

    cluster = cluster_create(name="seen", bootstrap_servers="127.0.0.1:1")
    cluster_brokers_seen(cluster=cluster, brokers=[BrokerNode(0, "h0", 1), EngineBroker(1, "h1", 2, running=False)])
    cluster_brokers_seen(cluster=cluster, brokers=[BrokerNode(0, "h0-new", 3)])
    rows = {kb.broker_id: (kb.host, kb.port) for kb in KnownBroker.objects.filter(cluster=cluster)}
    assert rows == {0: ("h0-new", 3), 1: ("h1", 2)}
