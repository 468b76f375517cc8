import re

import pytest

from django.test import Client
from django.urls import reverse

from console.clusters.models import Cluster


def all_routes(patterns=None, prefix=""):
    """Every URL pattern of the console, as (route, name), found by walking the resolver."""
    from django.urls import URLResolver, get_resolver

    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            yield from all_routes(entry.url_patterns, prefix + str(entry.pattern))
        else:
            yield prefix + str(entry.pattern), entry.name


def test_every_page_needs_a_login(cluster):
    """Walks every route, so a page added later without the login check fails here."""
    anonymous = Client()
    values = {"cluster_id": str(cluster.pk), "broker_id": "0", "name": "some-topic", "group_id": "some/group",
              "partition": "0", "offset": "0", "rule_id": "1", "key": "retention.ms", "topic": "some-topic",
              "job_id": "1", "schedule_id": "1", "which": "proposed", "alert_id": "1", "silence_id": "1",
              "receiver_id": "1", "connect_id": "1", "action": "pause", "subject": "some-subject", "version": "1"}
    # The icon is public (a browser asks for it on the login page too) and points at a static file.
    routes = [(route, name) for route, name in all_routes() if name not in ("login", "logout", "favicon")]
    assert len(routes) > 20
    for route, _ in routes:
        url = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values[m.group(1)], route)
        for method in (anonymous.get, anonymous.post):
            response = method(url)
            if route.startswith("api/"):
                assert response.status_code == 401, url
            elif route == "metrics":     # Prometheus's bearer token, never a session: off (404) in tests
                assert response.status_code in (404, 405), url
            else:
                assert response.status_code == 302 and response["Location"].startswith("/login/"), url
    assert anonymous.get(reverse("login")).status_code == 200
    icon = anonymous.get(reverse("favicon"))
    assert icon.status_code == 301 and icon["Location"].endswith("/favicon.svg")


def test_login_with_a_password(cluster, users):
    client = Client()
    response = client.post(reverse("login"), {"username": "viewer", "password": "viewer-password"})
    assert response.status_code == 302
    assert client.get(reverse("clusters:overview", args=[cluster.pk])).status_code == 200
    assert Client().post(reverse("login"), {"username": "viewer", "password": "wrong"}).status_code == 200


def test_overview_page_has_a_replaceable_live_container(cluster, viewer_client):
    response = viewer_client.get(reverse("clusters:overview", args=[cluster.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert '<div id="overview-live"' in html and 'id="ov-brokers-up">3<' in html and 'id="ov-brokers-down"' in html
    assert "preferred replica election" not in html.lower()          # no admin buttons for a viewer


def test_home_goes_to_the_cluster_list_when_there_are_several(cluster, viewer_client):
    assert viewer_client.get("/")["Location"] == reverse("clusters:list")
    page = viewer_client.get(reverse("clusters:list")).content.decode()
    assert "shared engine" in page and "local engine" in page


def test_overview_json(cluster, viewer_client):
    data = viewer_client.get(f"/api/clusters/{cluster.pk}/overview").json()
    assert data["cluster"] == {"id": cluster.pk, "name": "shared engine"}
    assert set(data) == {"cluster", "cluster_id", "controller_id", "brokers", "brokers_up", "brokers_down", "topics",
                         "internal_topics", "partitions", "under_replicated_partitions", "offline_partitions",
                         "warnings", "health", "health_age"}
    assert set(data["brokers"][0]) == {"broker_id", "host", "port", "rack", "is_up", "is_controller", "state"}
    clusters = viewer_client.get("/api/clusters").json()
    assert {c["name"] for c in clusters} >= {"shared engine", "local engine"}


def test_an_unreachable_cluster_gives_a_readable_page(db, viewer_client, settings):
    from console.clusters.services import cluster_create
    from tests.support.engine_process import refused_port

    settings.KAFKA_BOOTSTRAP_TIMEOUT_MS = 300
    with refused_port() as port:   # held for the test: no other process can start listening there
        down = cluster_create(name="nowhere", bootstrap_servers=f"127.0.0.1:{port}")
        response = viewer_client.get(reverse("clusters:overview", args=[down.pk]))
        html = response.content.decode()
        assert response.status_code == 503 and f"Cannot connect to 127.0.0.1:{port}" in html
        assert "No bootstrap server answered in time." in html and "Unable to bootstrap" not in html
        assert "Cluster unreachable since" in html and 'aria-label="Cluster"' in html      # menu kept
        assert f'data-live-fragment="/ws/clusters/{down.pk}/overview/"' in html            # recovers live
        api = viewer_client.get(f"/api/clusters/{down.pk}/topics")
        assert api.status_code == 503 and api.json()["error"].startswith(f"Cannot connect to 127.0.0.1:{port}")
    assert viewer_client.get("/api/clusters/999999/overview").status_code == 404


def test_an_admin_registers_a_cluster_and_sees_its_overview(db, engine_cluster, console_admin_client):
    response = console_admin_client.post(reverse("clusters:add"), {
        "name": "second", "bootstrap_servers": engine_cluster.bootstrap, "security_protocol": "PLAINTEXT",
        "sasl_mechanism": "", "sasl_username": "", "sasl_password_env": ""}, follow=True)
    html = response.content.decode()
    assert "Cluster second registered." in html
    assert 'id="ov-brokers-up">3<' in html


def test_a_bad_cluster_form_gets_a_readable_message(db, console_admin_client):
    response = console_admin_client.post(reverse("clusters:add"), {
        "name": "bad", "bootstrap_servers": "no-port-here", "security_protocol": "PLAINTEXT"})
    assert response.status_code == 400
    assert "Use host:port pairs separated by commas" in response.content.decode()


def test_only_admins_register_or_remove_clusters(cluster, operator_client):
    listed = operator_client.get(reverse("clusters:list")).content.decode()
    assert 'data-admin-action="add-cluster"' not in listed and 'data-admin-action="remove-cluster"' not in listed
    assert operator_client.get(reverse("clusters:add")).status_code == 403
    refused = operator_client.post(reverse("clusters:remove", args=[cluster.pk]), {"confirmation": cluster.name})
    assert refused.status_code == 403
    assert Cluster.objects.filter(pk=cluster.pk).exists()


def test_an_admin_removes_a_cluster_after_typing_its_name(cluster, console_admin_client):
    url = reverse("clusters:remove", args=[cluster.pk])
    wrong = console_admin_client.post(url, {"confirmation": "not it"})
    assert wrong.status_code == 400 and Cluster.objects.filter(pk=cluster.pk).exists()
    done = console_admin_client.post(url, {"confirmation": cluster.name}, follow=True)
    assert f"Cluster {cluster.name} removed from the console." in done.content.decode()
    assert not Cluster.objects.filter(pk=cluster.pk).exists()


def test_secrets_come_only_from_console_secret_variables_and_the_form_says_so(db, console_admin_client):
    form = console_admin_client.get(reverse("clusters:add")).content.decode()
    assert "Only names starting with CONSOLE_SECRET_ are allowed." in form
    for field in ("sasl_password_env", "admin_token_env"):
        response = console_admin_client.post(reverse("clusters:add"), {
            "name": "leaky", "bootstrap_servers": "127.0.0.1:9092", "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN", "sasl_username": "u", field: "SECRET_KEY"})
        html = response.content.decode()
        assert response.status_code == 400 and "environment variables named CONSOLE_SECRET_" in html
        assert html.count("is not allowed") == 1          # each error once, not twice
    assert not Cluster.objects.filter(name="leaky").exists()


def test_a_row_saved_before_the_prefix_rule_cannot_leak_another_variable(db, monkeypatch):
    from console.errors import ConsoleError

    old = Cluster.objects.create(name="old", bootstrap_servers="127.0.0.1:9092", sasl_mechanism="PLAIN",
                                 sasl_password_env="SECRET_KEY")
    monkeypatch.setenv("SECRET_KEY", "the-django-key")
    with pytest.raises(ConsoleError, match="CONSOLE_SECRET_"):
        old.connection_settings()


def test_the_bundled_engine_lists_every_broker_and_an_admin_edits_its_bootstrap(db, console_admin_client):
    from console.accounts.models import AuditLogEntry

    bundled = Cluster.objects.get(is_bundled=True)
    assert bundled.bootstrap_servers == "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"
    listed = console_admin_client.get(reverse("clusters:list")).content.decode()
    row = listed.split(f'href="/clusters/{bundled.pk}/"')[1].split("</tr>")[0]
    assert 'data-admin-action="edit-cluster"' in row and 'data-admin-action="remove-cluster"' not in row
    url = reverse("clusters:edit", args=[bundled.pk])
    assert 'value="127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"' in console_admin_client.get(url).content.decode()
    response = console_admin_client.post(url, {"name": bundled.name, "bootstrap_servers": "127.0.0.1:9093,127.0.0.1:9094",
                                                "security_protocol": "PLAINTEXT"})
    assert response.status_code == 302
    assert Cluster.objects.get(pk=bundled.pk).bootstrap_servers == "127.0.0.1:9093,127.0.0.1:9094"
    entry = AuditLogEntry.objects.get(action="cluster.update")
    assert entry.details == {"changed": {"bootstrap_servers": ["127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094",
                                                               "127.0.0.1:9093,127.0.0.1:9094"]}}
    bad = console_admin_client.post(url, {"name": bundled.name, "bootstrap_servers": "nope",
                                          "security_protocol": "PLAINTEXT"})
    assert bad.status_code == 400 and "value=\"nope\"" in bad.content.decode()   # the input is kept


def test_the_cluster_form_groups_its_fields_and_an_admin_sets_tls_files(db, console_admin_client):
    """Every field in exactly one group (legend: when it applies); the TLS files saved and audited
    by path, and a relative path refused with a sentence."""
    from console.accounts.models import AuditLogEntry
    from console.clusters.forms import ClusterAddForm

    grouped = [name for _, names in ClusterAddForm.FIELDSETS for name in names]
    assert sorted(grouped) == sorted(ClusterAddForm.base_fields) and len(grouped) == len(set(grouped))
    page = console_admin_client.get(reverse("clusters:add")).content.decode()
    for legend in ("The cluster", "SASL login (SASL_PLAINTEXT, SASL_SSL)",
                   "TLS (SSL, SASL_SSL): PEM files or PKCS12 stores", "Our engine only"):
        assert f"<legend>{legend}</legend>" in page

    fields = {"name": "tls", "bootstrap_servers": "kafka-1:9093", "security_protocol": "SSL",
              "ssl_cafile": "/etc/kafka/ca.pem", "ssl_certfile": "/etc/kafka/console.pem",
              "ssl_keyfile": "/etc/kafka/console.pem", "ssl_key_password_env": "CONSOLE_SECRET_TLS_KEY"}
    refused = console_admin_client.post(reverse("clusters:add"), {**fields, "ssl_cafile": "ca.pem"})
    assert refused.status_code == 400 and "is not an absolute path" in refused.content.decode()
    assert console_admin_client.post(reverse("clusters:add"), fields).status_code == 302
    cluster = Cluster.objects.get(name="tls")
    assert (cluster.ssl_cafile, cluster.ssl_certfile, cluster.ssl_keyfile, cluster.ssl_key_password_env) == (
        "/etc/kafka/ca.pem", "/etc/kafka/console.pem", "/etc/kafka/console.pem", "CONSOLE_SECRET_TLS_KEY")
    assert AuditLogEntry.objects.get(action="cluster.add", target="tls", result=AuditLogEntry.OK).details[
        "ssl_certfile"] == "/etc/kafka/console.pem"
