"""The brokers page's Plotly chart carries each broker's replicas and leaderships, as the table does."""
import json
import re

from django.urls import reverse

from tests.console.conftest import make_topic


def chart_in(html: str, element_id: str) -> dict:
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)
    assert match, f"no {element_id} in the page"
    return json.loads(match.group(1))


def test_the_load_chart_counts_replicas_and_leaders_per_broker(private_cluster, viewer_client, unique_topic):
    # Broker 0 holds every replica and leads everything; broker 1 holds two, broker 2 one.
    make_topic(private_cluster, unique_topic(), assignments={0: [0, 1], 1: [0, 2], 2: [0, 1]})

    html = viewer_client.get(reverse("brokers:list", args=[private_cluster.pk])).content.decode()

    replicas, leaders = chart_in(html, "broker-load-data")["data"]
    assert (replicas["name"], list(replicas["x"]), list(replicas["y"])) == ("Replicas", ["0", "1", "2"], [3, 2, 1])
    assert (leaders["name"], list(leaders["y"])) == ("Leaders", [3, 0, 0])
    assert 'data-chart="broker-load-data"' in html
    assert "/static/vendor/plotly/plotly-basic.min.js" in html
