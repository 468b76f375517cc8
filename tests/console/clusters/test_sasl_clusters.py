"""The console against an engine that requires SASL/SCRAM: a cluster row with SASL_PLAINTEXT and
SCRAM-SHA-256, its password in the CONSOLE_SECRET_ variable the row names, lists topics; a
wrong password is a readable page error that never shows the password."""
import pytest
from django.urls import reverse

from console.clusters.gateway import cluster_gateway
from console.clusters.services import cluster_create
from tests.support.sasl import SCRAM_PASSWORD, SCRAM_USER, add_scram_user, start_sasl_engine

PASSWORD_ENV = "CONSOLE_SECRET_SASL_TEST_PASSWORD"


@pytest.fixture(scope="module")
def scram_engine(tmp_path_factory):
    engine = start_sasl_engine(tmp_path_factory.mktemp("console-sasl"), brokers=1)
    assert add_scram_user(engine.bootstrap, SCRAM_USER, SCRAM_PASSWORD) == {SCRAM_USER: None}
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


def scram_cluster(engine, name: str):
    return cluster_create(name=name, bootstrap_servers=engine.bootstrap, security_protocol="SASL_PLAINTEXT",
                          sasl_mechanism="SCRAM-SHA-256", sasl_username=SCRAM_USER, sasl_password_env=PASSWORD_ENV)


def test_the_gateway_logs_in_with_scram_and_lists_topics(db, scram_engine, monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, SCRAM_PASSWORD)
    cluster = scram_cluster(scram_engine, "scram cluster")
    with cluster_gateway(cluster) as gw:
        gw.create_topic(name="console-sasl-topic", num_partitions=1, replication_factor=1)
    with cluster_gateway(cluster) as gw:
        assert "console-sasl-topic" in {t.name for t in gw.metadata().topics}


def test_a_wrong_password_is_a_readable_page_error_without_the_password(db, scram_engine, monkeypatch,
                                                                         operator_client):
    monkeypatch.setenv(PASSWORD_ENV, "Wrong-Pa55word")
    cluster = scram_cluster(scram_engine, "scram cluster, wrong password")
    page = operator_client.get(reverse("topics:list", args=[cluster.pk]))
    text = page.content.decode()
    assert "Wrong-Pa55word" not in text
    assert "SASL" in text and "authentication failed" in text.lower(), text[:3000]
