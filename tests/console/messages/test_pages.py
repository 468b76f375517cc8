"""What the message pages say and link, through Django's test client: the produce form's fields
and help, paging after the table as well as before it, binary values that only look framed
(a registry that does not answer is asked once and said once, quietly), hex in byte pairs, and
a record's page with its neighbours, its schema and its key's size."""
from __future__ import annotations

import json
import re
import socket

import pytest
import requests
from django.urls import reverse

from console.messages.forms import ProduceForm
from console.messages.models import RegisteredSchema
from console.schema_registry import resolver
from console.schema_registry.models import RegistrySettings
from tests.console.messages.conftest import create_topic, produce_confluent
from tests.console.messages.test_deserializers import AVRO, ORDER
from tests.support.txn_clients import committed_transaction


def page(client, name: str, *args, **params) -> str:
    response = client.get(reverse(name, args=args), params)
    assert response.status_code == 200, response.content[:2000]
    return response.content.decode()


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


@pytest.fixture
def topic(engine_cluster, unique_topic):
    return create_topic(engine_cluster.bootstrap, unique_topic())


@pytest.fixture
def dead_registry(cluster):
    """The cluster's registry at a port nothing listens on; each HTTP call the console makes is counted."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    RegistrySettings.objects.create(cluster=cluster, url=f"http://127.0.0.1:{port}")
    resolver.UNREACHABLE.clear()
    yield f"http://127.0.0.1:{port}"
    resolver.UNREACHABLE.clear()


@pytest.fixture
def counted_requests(monkeypatch):
    calls = []
    real = requests.request

    def counting(method, url, **kwargs):
        calls.append(url)
        return real(method, url, **kwargs)
    monkeypatch.setattr(requests, "request", counting)
    return calls


def test_the_produce_form_renders_its_fields_stacked_with_help_as_text(cluster, topic, operator_client):
    html = page(operator_client, "messages:produce", cluster.pk, topic)
    form = re.search(r'<form method="post" id="produce-form".*?</form>', html, re.S).group(0)
    # Key and value editors in fieldsets of their own (side by side on a wide screen, console.css).
    key = re.search(r'<fieldset id="produce-key">.*?</fieldset>', form, re.S).group(0)
    value = re.search(r'<fieldset id="produce-value">.*?</fieldset>', form, re.S).group(0)
    assert 'name="key"' in key and 'name="key_serializer"' in key and 'name="value"' not in key
    assert 'name="value"' in value and 'name="subject"' in value
    assert form.count('<p class="field') == len(ProduceForm.base_fields)      # every field through _field.html
    # "<topic>" is text, not a tag the browser drops.
    assert "(empty: &lt;topic&gt;-value, TopicNameStrategy)" in form and "<topic>" not in form


def test_browse_pages_below_the_table_too_and_counts_in_words(cluster, engine_cluster, topic, viewer_client):
    produce_confluent(engine_cluster.bootstrap, topic, [{"value": b"r%d" % i} for i in range(5)])
    html = page(viewer_client, "messages:browse", cluster.pk, topic, start="oldest", count=2)
    table_end = html.index("</table>")
    below = html[table_end:]
    assert 'id="page-next"' in html[:table_end] and 'id="page-next-bottom"' in below
    bottom = re.search(r'<nav class="paging" id="paging-bottom".*?</nav>', below, re.S).group(0)
    assert "cursor=0%3A2" in bottom and "show newest first" in bottom
    assert "Export every record of its one partition (about 5 records)" in text_of(html)
    single = create_topic(engine_cluster.bootstrap, topic + "-one")
    produce_confluent(engine_cluster.bootstrap, single, [{"value": b"only"}])
    html = page(viewer_client, "messages:browse", cluster.pk, single)
    assert "(about 1 record)" in text_of(html) and 'id="paging-bottom"' not in html     # one page: no paging
    # A count past a page's bound is said, not silently cut.
    assert "A page holds at most 500 records: showing 500, not 100,000." in text_of(
        page(viewer_client, "messages:browse", cluster.pk, topic, count=100000))
    assert "A page holds at most" not in text_of(page(viewer_client, "messages:browse", cluster.pk, topic, count=500))


def test_binary_values_are_not_taken_for_framing_when_the_registry_does_not_answer(
        cluster, engine_cluster, topic, viewer_client, dead_registry, counted_requests):
    # Each value starts with a zero byte and so "carries" a schema id of its own.
    produce_confluent(engine_cluster.bootstrap, topic, [{"key": bytes([1, i]), "value": bytes(range(i, i + 40))}
                                                        for i in range(0, 4)] +
                      [{"value": bytes([0, 9, i, 3, 4]) + bytes(range(40)), "key": b"k"} for i in range(4)])
    html = page(viewer_client, "messages:browse", cluster.pk, topic, start="oldest")
    assert len(counted_requests) == 1                         # once for the page, not once per record
    assert html.count('id="registry-note"') == 1
    note = re.search(r'<p class="note" id="registry-note">(.*?)</p>', html, re.S).group(1)
    assert f"The schema registry at {dead_registry} does not answer (ConnectionError)" in note
    rows = html[html.index('<table class="data messages'):html.index("</table>")]
    assert 'class="bad"' not in rows and "schema-tag" not in rows and "does not answer" not in rows
    assert "00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f\n10 11" in rows        # byte pairs, 16 a line
    # The next page load within UNREACHABLE_SECONDS does not ask again.
    page(viewer_client, "messages:browse", cluster.pk, topic, start="oldest")
    assert len(counted_requests) == 1


def test_a_record_page_links_its_neighbours_and_shows_its_schema_and_key_size(cluster, topic, operator_client):
    RegisteredSchema.objects.create(schema_id=77, subject="orders-value", schema=AVRO)
    url = reverse("messages:produce", args=[cluster.pk, topic])
    for i in range(3):
        assert operator_client.post(url, {"key": f"order-{i}", "value": json.dumps({**ORDER, "id": i}),
                                          "value_serializer": "avro", "schema_id": 77, "key_serializer": "string",
                                          "copies": 1}).status_code == 200
    middle = page(operator_client, "messages:detail", cluster.pk, topic, 0, 1, value_format="auto")
    nav = re.search(r'<nav class="record-nav".*?</nav>', middle, re.S).group(0)
    base = reverse("messages:detail", args=[cluster.pk, topic, 0, 0])[:-2]
    assert f'href="{base}0/?value_format=auto">← offset 0</a>' in nav
    assert f'href="{base}2/?value_format=auto">offset 2 →</a>' in nav
    assert "partition 0 holds offsets 0 to 2" in text_of(nav)
    assert re.search(r'<span class="tag fmt schema-tag" id="value-schema"[^>]*>schema 77 · orders-value</span>',
                     middle)
    assert re.search(r'<dt>Key size</dt><dd id="key-size">7 B</dd>', middle)
    explicit = page(operator_client, "messages:detail", cluster.pk, topic, 0, 1, value_format="avro")
    assert re.search(r'id="value-schema"[^>]*>schema 77 · orders-value</span>', explicit)   # chosen, not auto
    first = page(operator_client, "messages:detail", cluster.pk, topic, 0, 0)
    last = page(operator_client, "messages:detail", cluster.pk, topic, 0, 2)
    assert 'id="record-prev">the partition\'s first record' in first.replace("&#x27;", "'")
    assert 'id="record-next">the partition\'s last record' in last.replace("&#x27;", "'")


def test_the_neighbours_skip_a_transaction_marker(cluster, engine_cluster, topic, viewer_client):
    committed_transaction(engine_cluster.bootstrap, f"{topic}-txn", [(topic, 0, b'{"in": "txn"}')])   # 0, marker 1
    produce_confluent(engine_cluster.bootstrap, topic, [{"value": b"after", "partition": 0}])           # 2
    first = page(viewer_client, "messages:detail", cluster.pk, topic, 0, 0)
    after = page(viewer_client, "messages:detail", cluster.pk, topic, 0, 2)
    assert re.search(r'id="record-next" rel="next" href="[^"]*/0/2/">offset 2 →', first)
    assert re.search(r'id="record-prev" rel="prev" href="[^"]*/0/0/">← offset 0', after)


def test_binary_record_page_shows_hex_in_byte_pairs(cluster, engine_cluster, topic, viewer_client):
    produce_confluent(engine_cluster.bootstrap, topic, [{"key": b"\x00\x01", "value": bytes(range(18))}])
    html = page(viewer_client, "messages:detail", cluster.pk, topic, 0, 0)
    value = re.search(r'<pre class="record raw" id="record-value">(.*?)</pre>', html, re.S).group(1)
    assert value == "00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f\n10 11"
    assert re.search(r'<pre class="record raw" id="record-key">00 01</pre>', html)
    assert '"text": "000102030405060708090a0b0c0d0e0f1011"' in html      # the copy buttons' data: one run


def test_the_search_page_says_its_rate_as_records_scanned_a_second(cluster, topic, viewer_client):
    # A dash until a search has measured one (static/js/messages_search.js: "Scanned 15,876 records/s").
    html = page(viewer_client, "messages:search", cluster.pk, topic)
    assert re.search(r'<dt>Scanned</dt><dd id="stat-rate" title="[^"]*">—</dd>', html)


def test_the_tail_page_waits_for_a_measured_rate(cluster, topic, viewer_client):
    # Not "0/s" before the tail has reported one (static/js/messages_tail.js: "12 records/s").
    html = page(viewer_client, "messages:tail", cluster.pk, topic)
    assert re.search(r'<dt>Rate</dt><dd id="tail-rate" class="muted" title="[^"]*">waiting…</dd>', html)
    assert not re.search(r"(?<![\w/])0(\.0+)?( records)?/s", html)    # a rate of 0, not a link's "10/schemas"


def test_a_record_without_headers_has_no_copy_headers_button(cluster, engine_cluster, topic, viewer_client):
    produce_confluent(engine_cluster.bootstrap, topic, [{"value": b"bare"},
                                                        {"value": b"tagged", "headers": [("trace", b"t-1")]}])
    bare = page(viewer_client, "messages:detail", cluster.pk, topic, 0, 0)
    tagged = page(viewer_client, "messages:detail", cluster.pk, topic, 0, 1)
    assert 'data-copy="headers"' not in bare and "<td colspan=\"3\">No headers.</td>" in bare
    assert 'data-copy="record"' in bare                          # the whole record still copies
    assert '<button type="button" class="copy" data-copy="headers">Copy headers</button>' in tagged
