import re

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
    values = {"cluster_id": str(cluster.pk), "broker_id": "0", "name": "some-topic", "partition": "0", "offset": "0",
              "rule_id": "1"}
    routes = [(route, name) for route, name in all_routes() if name not in ("login", "logout")]
    assert len(routes) > 20
    for route, _ in routes:
        url = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values[m.group(1)], route)
        for method in (anonymous.get, anonymous.post):
            response = method(url)
            if route.startswith("api/"):
                assert response.status_code == 401, url
            else:
                assert response.status_code == 302 and response["Location"].startswith("/login/"), url
    assert anonymous.get(reverse("login")).status_code == 200


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
                         "warnings"}
    assert set(data["brokers"][0]) == {"broker_id", "host", "port", "rack", "is_up", "is_controller"}
    clusters = viewer_client.get("/api/clusters").json()
    assert {c["name"] for c in clusters} >= {"shared engine", "local engine"}


def test_an_unreachable_cluster_gives_a_readable_page(db, viewer_client, settings):
    from console.clusters.services import cluster_create
    from tests.support.engine_process import free_port_range

    settings.KAFKA_BOOTSTRAP_TIMEOUT_MS = 300
    port = free_port_range(1)
    down = cluster_create(name="nowhere", bootstrap_servers=f"127.0.0.1:{port}")
    response = viewer_client.get(reverse("clusters:overview", args=[down.pk]))
    assert response.status_code == 503 and f"Cannot connect to 127.0.0.1:{port}" in response.content.decode()
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
