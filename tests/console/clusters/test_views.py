from django.test import Client
from django.urls import reverse


def test_every_page_needs_a_login(cluster):
    anonymous = Client()
    for url in ("/", reverse("clusters:list"), reverse("clusters:overview", args=[cluster.pk]),
                reverse("brokers:list", args=[cluster.pk]), reverse("topics:list", args=[cluster.pk]),
                reverse("audit_log")):
        response = anonymous.get(url)
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
