"""The Connect section's writes against a real Connect worker: registering Connect clusters
(validated, secrets by CONSOLE_SECRET_ name only), creating connectors after Connect's
config/validate, and the connector actions, each audited without secrets."""
from __future__ import annotations

import pytest

from console.accounts.models import AuditLogEntry
from console.connect import selectors, services
from console.connect.client import ConnectClient
from console.connect.services import ConnectorConfigInvalid
from console.errors import ConsoleError, InvalidInput
from tests.console.conftest import make_topic
from tests.support.waiting import wait_until


def _state(connect, name):
    try:
        return selectors.connector_detail(connect=connect, name=name).row
    except ConsoleError:
        return None


def test_connect_clusters_are_validated_and_audited(cluster, users):
    with pytest.raises(InvalidInput, match="http or https"):
        services.connect_cluster_add(actor=users["admin"], cluster=cluster, name="x", url="ftp://host:21")
    with pytest.raises(InvalidInput, match="CONSOLE_SECRET_"):
        services.connect_cluster_add(actor=users["admin"], cluster=cluster, name="x", url="http://h:8083",
                                     username="u", password_env="SECRET_KEY")
    with pytest.raises(InvalidInput, match="not in the address"):
        services.connect_cluster_add(actor=users["admin"], cluster=cluster, name="x", url="http://u:p@h:8083")
    connect = services.connect_cluster_add(actor=users["admin"], cluster=cluster, name="dc1", url="http://h:8083",
                                           username="u", password_env="CONSOLE_SECRET_DC1")
    services.connect_cluster_update(actor=users["admin"], connect=connect, url="http://h2:8083")
    services.connect_cluster_remove(actor=users["admin"], connect=connect)
    entries = list(AuditLogEntry.objects.filter(action__startswith="connect.cluster").order_by("pk"))
    assert [(e.action, e.result) for e in entries] == [
        ("connect.cluster.add", "failed"), ("connect.cluster.add", "failed"), ("connect.cluster.add", "failed"),
        ("connect.cluster.add", "ok"), ("connect.cluster.update", "ok"), ("connect.cluster.remove", "ok")]
    assert entries[4].details["changed"] == {"url": ["http://h:8083", "http://h2:8083"]}


def test_an_invalid_config_is_refused_field_by_field_and_nothing_is_created(connect_row, users):
    with pytest.raises(ConnectorConfigInvalid) as refused:
        services.connector_create(actor=users["operator"], connect=connect_row, name="svc-invalid",
                                  config={"connector.class": "FileStreamSource", "batch.size": "lots"})
    assert refused.value.errors == {
        "topic": ['Missing required configuration "topic" which has no default value.'],
        "batch.size": ["Invalid value lots for configuration batch.size: Not a number of type INT"]}
    assert _state(connect_row, "svc-invalid") is None
    entry = AuditLogEntry.objects.get(action="connect.connector.create", target="test connect/svc-invalid")
    assert entry.result == "failed"
    with pytest.raises(InvalidInput, match="may not hold '/'"):
        services.connector_create(actor=users["operator"], connect=connect_row, name="a/b",
                                  config={"connector.class": "FileStreamSource"})


def test_create_then_pause_resume_stop_reset_and_delete(connect_row, cluster, users, tmp_path, unique_topic):
    topic = make_topic(cluster, unique_topic())
    source = tmp_path / "in.txt"
    source.write_text("one\ntwo\n")
    services.connector_create(actor=users["operator"], connect=connect_row, name="svc-source", config={
        "connector.class": "FileStreamSource", "file": str(source), "topic": topic,
        "producer.override.sasl.jaas.config": "secret-jaas", "connection.password": "hunter2"})
    audit = AuditLogEntry.objects.get(action="connect.connector.create", target="test connect/svc-source")
    assert audit.details["config"]["connection.password"] == "[hidden]"
    assert audit.details["config"]["producer.override.sasl.jaas.config"] == "[hidden]"
    assert "hunter2" not in str(audit.details)
    detail = wait_until(lambda: (row := _state(connect_row, "svc-source")) and row.state == "RUNNING" and row.tasks
                        and row.tasks[0].state == "RUNNING" and selectors.connector_detail(connect=connect_row,
                                                                                           name="svc-source"),
                        60, message="source running")
    assert detail.config["connection.password"] == "[hidden]" and detail.config["topic"] == topic
    wait_until(lambda: selectors.connector_detail(connect=connect_row, name="svc-source").offsets, 30,
               message="offsets committed")

    def act(action):
        return services.connector_action(actor=users["operator"], connect=connect_row, name="svc-source",
                                         action=action)
    assert act("pause") == "svc-source is pausing."
    wait_until(lambda: _state(connect_row, "svc-source").state == "PAUSED", 30, message="paused")
    with pytest.raises(ConsoleError, match="stop the connector first") as early:
        act("reset-offsets")
    assert early.value.kafka_code == "HTTP 400"
    act("resume")
    wait_until(lambda: _state(connect_row, "svc-source").state == "RUNNING", 30, message="resumed")
    act("stop")
    wait_until(lambda: _state(connect_row, "svc-source").state == "STOPPED", 30, message="stopped")
    assert act("reset-offsets") == "The offsets for this connector have been reset successfully"
    assert selectors.connector_detail(connect=connect_row, name="svc-source").offsets == ()
    assert act("delete") == "svc-source deleted."
    assert _state(connect_row, "svc-source") is None
    actions = list(AuditLogEntry.objects.filter(target="test connect/svc-source").order_by("pk")
                   .values_list("action", "result"))
    assert actions == [("connect.connector.create", "ok"), ("connect.connector.pause", "ok"),
                       ("connect.connector.reset-offsets", "failed"), ("connect.connector.resume", "ok"),
                       ("connect.connector.stop", "ok"), ("connect.connector.reset-offsets", "ok"),
                       ("connect.connector.delete", "ok")]


def test_an_unreachable_connect_cluster_is_a_sentence(cluster, users):
    from tests.support.engine_process import refused_port
    with refused_port() as port:
        connect = services.connect_cluster_add(actor=users["admin"], cluster=cluster, name="gone",
                                               url=f"http://127.0.0.1:{port}")
        view = selectors.connect_overview(cluster=cluster, connect=connect)
    assert not view.reachable
    assert view.error.startswith(f"Connect cluster 'gone' at http://127.0.0.1:{port} cannot be reached")
    assert "u:p" not in repr(ConnectClient(name="x", url="http://h", username="u", password="p"))
