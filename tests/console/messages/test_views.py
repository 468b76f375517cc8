"""Message pages through Django's test client: produce from the UI and read it back in every
format, roles, CSRF, audit, escaping of hostile payloads, export."""
from __future__ import annotations

import base64
import csv
import io
import json

import pytest
from django.test import Client
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from console.messages.models import RegisteredSchema, TopicMessageSettings
from tests.console.messages.conftest import create_topic, produce_confluent
from tests.console.messages.test_deserializers import AVRO, ORDER, descriptor_set

XSS = ['<script>alert(1)</script>', '<img src=x onerror=alert(2)>', 'javascript:alert(3)',
       '{"a": "</script><script>alert(4)</script>"}']


def produce(client, cluster, topic, **fields):
    data = {"key": "", "value": "", "headers": "", "copies": 1, "key_serializer": "string",
            "value_serializer": "string", **fields}
    return client.post(reverse("messages:produce", args=[cluster.pk, topic]), data)


def browse(client, cluster, topic, **params):
    response = client.get(reverse("api:messages", args=[cluster.pk, topic]), params)
    assert response.status_code == 200, response.content
    return response.json()


def detail(client, cluster, topic, partition, offset, **params):
    response = client.get(reverse("api:message", args=[cluster.pk, topic, partition, offset]), params)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def topic(engine_cluster, unique_topic):
    return create_topic(engine_cluster.bootstrap, unique_topic())


def test_produce_needs_operator_is_audited_and_reads_back(cluster, topic, operator_client, viewer_client):
    assert produce(viewer_client, cluster, topic, value="x").status_code == 403
    response = produce(operator_client, cluster, topic, key="k1", value='{"n": 1}', value_serializer="json",
                       headers="trace=abc\nempty=", copies=3, partition=0)
    assert response.status_code == 200 and "Produced 3 records" in response.content.decode()
    page = browse(viewer_client, cluster, topic, start="oldest")
    assert [(m["offset"], m["key"]["text"], m["value"]["text"]) for m in page["messages"]] == \
        [(i, "k1", '{"n": 1}') for i in range(3)]
    assert [(h["name"], h["text"]) for h in page["messages"][0]["headers"]] == [("trace", "abc"), ("empty", "")]
    entry = AuditLogEntry.objects.get(action="message.produce")
    assert entry.target == topic and entry.details["copies"] == 3 and '{"n": 1}' not in json.dumps(entry.details)


def test_produce_is_csrf_protected(cluster, topic, users):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["operator"])
    assert produce(client, cluster, topic, value="x").status_code == 403


def test_invalid_json_is_refused_with_a_readable_error(cluster, topic, operator_client):
    response = produce(operator_client, cluster, topic, value="{oops", value_serializer="json")
    assert response.status_code == 400 and "not valid JSON" in response.content.decode()


def test_avro_plain_and_confluent_framed_round_trip_through_the_ui(cluster, topic, operator_client):
    settings_url = reverse("messages:settings", args=[cluster.pk, topic])
    response = operator_client.post(settings_url, {"key_format": "string", "value_format": "avro",
                                                   "header_format": "auto", "avro_schema": AVRO})
    assert response.status_code == 302, response.content.decode()
    RegisteredSchema.objects.create(schema_id=77, subject="orders-value", schema=AVRO)
    assert produce(operator_client, cluster, topic, value=json.dumps(ORDER), value_serializer="avro").status_code == 200
    assert produce(operator_client, cluster, topic, value=json.dumps({**ORDER, "id": 8}), value_serializer="avro",
                   schema_id=77).status_code == 200
    page = browse(operator_client, cluster, topic, start="oldest")
    assert [json.loads(m["value"]["text"]) for m in page["messages"]] == [ORDER, {**ORDER, "id": 8}]
    assert all(m["value"]["format"] == "avro" for m in page["messages"])


def test_avro_keys_have_their_own_schema(cluster, topic, operator_client):
    key_schema = json.dumps({"type": "record", "name": "Key", "fields": [{"name": "customer", "type": "int"}]})
    response = operator_client.post(reverse("messages:settings", args=[cluster.pk, topic]), {
        "key_format": "avro", "value_format": "avro", "header_format": "auto", "avro_schema": AVRO,
        "avro_key_schema": key_schema})
    assert response.status_code == 302, response.content.decode()
    assert produce(operator_client, cluster, topic, key='{"customer": 41}', key_serializer="avro",
                   value=json.dumps(ORDER), value_serializer="avro").status_code == 200
    message = browse(operator_client, cluster, topic)["messages"][0]
    assert json.loads(message["key"]["text"]) == {"customer": 41} and json.loads(message["value"]["text"]) == ORDER


def test_protobuf_round_trip_through_the_ui(cluster, topic, operator_client):
    upload = io.BytesIO(descriptor_set())
    upload.name = "shop.desc"
    response = operator_client.post(reverse("messages:settings", args=[cluster.pk, topic]), {
        "key_format": "auto", "value_format": "protobuf", "header_format": "auto", "avro_schema": "",
        "protobuf_descriptor_set": upload, "protobuf_message_type": "shop.Order"})
    assert response.status_code == 302, response.content.decode()
    assert produce(operator_client, cluster, topic, value='{"id": 3, "item": "pen"}',
                   value_serializer="protobuf").status_code == 200
    message = browse(operator_client, cluster, topic)["messages"][0]
    assert json.loads(message["value"]["text"]) == {"id": "3", "item": "pen"}


def test_msgpack_round_trip_and_per_request_format(cluster, topic, operator_client):
    assert produce(operator_client, cluster, topic, value='{"a": [1, "b"]}', value_serializer="msgpack").status_code == 200
    message = browse(operator_client, cluster, topic, value_format="msgpack")["messages"][0]
    assert json.loads(message["value"]["text"]) == {"a": [1, "b"]}
    as_auto = browse(operator_client, cluster, topic)["messages"][0]   # the remembered default: auto
    assert as_auto["value"]["format"] in ("hex", "string")


def test_format_choice_is_remembered_per_topic(cluster, topic, operator_client, viewer_client):
    url = reverse("messages:settings", args=[cluster.pk, topic])
    assert viewer_client.post(url, {"key_format": "hex", "value_format": "hex", "header_format": "hex"}).status_code == 403
    assert operator_client.post(url, {"key_format": "hex", "value_format": "base64",
                                      "header_format": "hex"}).status_code == 302
    row = TopicMessageSettings.objects.get(cluster=cluster, topic=topic)
    assert (row.key_format, row.value_format) == ("hex", "base64")
    produce(operator_client, cluster, topic, key="k", value="v")
    message = browse(viewer_client, cluster, topic)["messages"][0]
    assert message["key"]["text"] == "6b" and base64.b64decode(message["value"]["text"]) == b"v"


def test_hostile_payloads_are_escaped_on_every_page(cluster, engine_cluster, topic, viewer_client):
    produce_confluent(engine_cluster.bootstrap, topic, [
        {"key": p.encode(), "value": p.encode(), "headers": [(p, p.encode())]} for p in XSS])
    pages = [reverse("messages:browse", args=[cluster.pk, topic]) + "?start=oldest"] + [
        reverse("messages:detail", args=[cluster.pk, topic, 0, i]) for i in range(len(XSS))]
    for url in pages:
        html = viewer_client.get(url).content.decode()
        assert "<script>alert" not in html and "<img src=x" not in html and 'href="javascript:' not in html, url
        assert any(marker in html for marker in ("&lt;script&gt;alert(1)", "&lt;img src=x", "javascript:alert(3)",
                                                 "&lt;/script&gt;&lt;script&gt;alert(4)")), url


def test_out_of_range_offset_says_where_it_clamped(cluster, topic, operator_client):
    produce(operator_client, cluster, topic, value="only")
    html = operator_client.get(reverse("messages:browse", args=[cluster.pk, topic]),
                               {"partition": 0, "start": "offset", "offset": 500}).content.decode()
    assert "past the end of partition 0" in html and "high watermark, 1" in html
    bad = operator_client.get(reverse("messages:browse", args=[cluster.pk, topic]), {"start": "offset", "offset": "x"})
    assert bad.status_code == 400 and "whole number" in bad.content.decode()


def test_export_jsonl_and_csv_parse_back_equal_to_what_was_produced(cluster, engine_cluster, topic, viewer_client):
    records = [{"key": b"k%d" % i, "value": bytes([i, 255, 0]) + b'x,"y"\n', "headers": [("h", b"\x00%d" % i)]}
               for i in range(30)]
    produce_confluent(engine_cluster.bootstrap, topic, records)
    url = reverse("messages:export", args=[cluster.pk, topic])
    response = viewer_client.get(url, {"format": "jsonl"})
    assert response.streaming
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert [(base64.b64decode(r["key_base64"]), base64.b64decode(r["value_base64"]),
             [(n, base64.b64decode(v)) for n, v in r["headers_base64"]]) for r in lines] == \
        [(r["key"], r["value"], r["headers"]) for r in records]
    response = viewer_client.get(url, {"format": "csv", "text": "k2", "field": "key"})
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r["key"] for r in rows] == ["k2", "k20", "k21", "k22", "k23", "k24", "k25", "k26", "k27", "k28", "k29"]
    assert base64.b64decode(rows[0]["value_base64"]) == records[2]["value"]


def test_masking_rules_are_admin_only_and_apply_to_viewers(cluster, topic, operator_client, console_admin_client,
                                                           viewer_client):
    url = reverse("messages:masking_add", args=[cluster.pk, topic])
    assert operator_client.post(url, {"kind": "json_field", "pattern": "ssn"}).status_code == 403
    assert console_admin_client.post(url, {"kind": "regex", "pattern": "(["}).status_code == 302   # refused, with a message
    assert console_admin_client.post(url, {"kind": "json_field", "pattern": "ssn", "replacement": "***"}).status_code == 302
    produce(operator_client, cluster, topic, value='{"ssn": "123-45", "name": "ann"}', value_serializer="json")
    assert "123-45" not in browse(viewer_client, cluster, topic)["messages"][0]["value"]["text"]
    assert "123-45" in browse(operator_client, cluster, topic)["messages"][0]["value"]["text"]
    export = b"".join(viewer_client.get(reverse("messages:export", args=[cluster.pk, topic])).streaming_content)
    assert b"123-45" not in export and b"MTIzLTQ1" not in export
    assert AuditLogEntry.objects.filter(action="masking_rule.add", result="failed").count() == 1


def test_bad_export_requests_and_unknown_topics_get_readable_errors(cluster, topic, viewer_client):
    url = reverse("messages:export", args=[cluster.pk, topic])
    bad_regex = viewer_client.get(url, {"mode": "regex", "text": "(["})
    assert bad_regex.status_code == 400 and "Bad regular expression" in bad_regex.content.decode()
    bad_path = viewer_client.get(url, {"json_path": "a..b"})
    assert bad_path.status_code == 400 and "Bad JSON path" in bad_path.content.decode()
    assert viewer_client.get(url, {"format": "xml"}).status_code == 400
    missing = viewer_client.get(reverse("messages:browse", args=[cluster.pk, topic + "-nope"]))
    assert missing.status_code == 404


def test_search_api_streams_json_lines_to_a_script_with_basic_auth(cluster, engine_cluster, topic, users):
    produce_confluent(engine_cluster.bootstrap, topic, [{"value": b'{"n": %d}' % i} for i in range(100)])
    url = reverse("api:message_search", args=[cluster.pk, topic])
    auth = {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(b"viewer:viewer-password").decode()}
    response = Client().get(url, {"json_path": "n", "json_op": ">", "json_value": "96"}, **auth)
    assert response.status_code == 200 and response.streaming
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert [line["message"]["offset"] for line in lines if line["type"] == "match"] == [97, 98, 99]
    assert lines[-1]["type"] == "done" and lines[-1]["stats"]["records_scanned"] == 100
    bad = Client().get(url, {"mode": "regex", "text": "(["}, **auth)
    assert bad.status_code == 400 and "Bad regular expression" in bad.json()["error"]
    assert Client().get(url).status_code == 401


def test_a_large_value_is_previewed_on_its_page_and_downloads_whole(cluster, engine_cluster, unique_topic, viewer_client):
    topic = create_topic(engine_cluster.bootstrap, unique_topic(), config={"max.message.bytes": str(4 << 20)})
    big = b'{"blob": "' + b"z" * (3 << 19) + b'"}'
    produce_confluent(engine_cluster.bootstrap, topic, [{"value": big}], **{"message.max.bytes": 4 << 20})
    page = viewer_client.get(reverse("messages:detail", args=[cluster.pk, topic, 0, 0]))
    html = page.content.decode()
    assert page.status_code == 200 and 'id="value-truncated"' in html and len(html) < 200_000
    raw = viewer_client.get(reverse("messages:raw", args=[cluster.pk, topic, 0, 0]))
    assert raw["Content-Type"] == "application/octet-stream" and "attachment" in raw["Content-Disposition"]
    assert raw.content == big
    assert viewer_client.get(reverse("messages:detail", args=[cluster.pk, topic, 0, 1])).status_code == 404
    # A record's address naming a partition the topic does not have is not found either, not an outage.
    missing = viewer_client.get(reverse("messages:detail", args=[cluster.pk, topic, 9, 0]))
    assert missing.status_code == 404 and f"Topic {topic} has no partition 9 (it has 1)." in missing.content.decode()


def test_producing_to_a_partition_that_does_not_exist_is_a_readable_error(cluster, topic, operator_client):
    response = produce(operator_client, cluster, topic, value="x", partition=7)
    assert response.status_code == 400 and "there is no partition 7" in response.content.decode()
