"""Every page, error pages included, keeps the navigation of the layout (templates/base.html)."""
import re
from pathlib import Path

from django.urls import reverse

from console.clusters.services import cluster_create
from tests.support.engine_process import free_port_range


def nav_of(html: str) -> dict:
    return {"cluster_menu": 'aria-label="Cluster"' in html, "log_out": "Log out" in html,
            "theme_switch": 'id="theme-switch"' in html}


def test_a_missing_topic_is_a_404_with_the_clusters_menu(cluster, viewer_client):
    response = viewer_client.get(reverse("topics:detail", args=[cluster.pk, "no-such-topic"]))
    html = response.content.decode()
    assert response.status_code == 404 and "has no topic &#x27;no-such-topic&#x27;" in html
    assert nav_of(html) == {"cluster_menu": True, "log_out": True, "theme_switch": True}
    assert f'href="/clusters/{cluster.pk}/topics/"' in html


def test_an_unknown_address_is_a_404_with_the_account_menu(db, viewer_client):
    response = viewer_client.get("/no/such/page/")
    html = response.content.decode()
    assert response.status_code == 404 and nav_of(html)["log_out"] and "There is nothing here." in html
    assert "tried" not in html        # no URL resolver internals on the page


def test_a_403_and_an_unreachable_cluster_keep_the_navigation(db, viewer_client, settings):
    settings.KAFKA_BOOTSTRAP_TIMEOUT_MS = 1000
    down = cluster_create(name="nowhere", bootstrap_servers=f"127.0.0.1:{free_port_range(1)}")
    refused = viewer_client.get(reverse("topics:create", args=[down.pk]))
    assert refused.status_code == 403 and nav_of(refused.content.decode())["cluster_menu"]
    unreachable = viewer_client.get(reverse("clusters:overview", args=[down.pk]))
    html = unreachable.content.decode()
    assert unreachable.status_code == 503 and nav_of(html) == {"cluster_menu": True, "log_out": True,
                                                               "theme_switch": True}


def test_the_server_error_page_keeps_the_navigation(rf, users):
    from console.web import server_error

    request = rf.get("/")
    request.user = users["viewer"]
    response = server_error(request)
    assert response.status_code == 500 and nav_of(response.content.decode())["log_out"]


def test_no_template_shows_a_forms_own_errors_twice():
    """`form.as_p` already lists the non-field errors: a template adding them again says
    everything twice (templates/_form.html is the shared way to render a form)."""
    root = Path(__file__).resolve().parents[2] / "templates"
    twice = []
    for template in root.rglob("*.html"):
        text = template.read_text()
        for form in set(re.findall(r"\{\{ *(\w+)\.non_field_errors *\}\}", text)):
            if f"{form}.as_p" in text or f"{form}.as_div" in text or f"{form}.as_table" in text:
                twice.append(f"{template.relative_to(root)}: {form}")
    assert twice == []


def test_every_table_is_a_sortable_data_table():
    root = Path(__file__).resolve().parents[2] / "templates"
    templates = [*root.rglob("*.html"), *root.parent.glob("console/*/templates/**/*.html")]
    plain = [f"{t.relative_to(root.parent)}: {tag}" for t in templates
             for tag in re.findall(r"<table\b[^>]*>", t.read_text()) if 'class="data' not in tag]
    assert plain == []
