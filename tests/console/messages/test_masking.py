"""Masking for the viewer role on every path that returns record data, in every format: the
browse page and API, the record page and API, the value download, both exports, the search
API, and the websocket's search and tail. A masked field never reaches a viewer, neither as
text nor as the hex or base64 of its bytes, and a value the rules cannot be applied to is
withheld with the reason."""
from __future__ import annotations

import asyncio
import base64
import io
import json

import fastavro
import msgpack
import pytest
from asgiref.sync import async_to_sync
from django.urls import reverse

from console.messages.deserializers import parse_avro_schema
from console.messages.masking import Masker, Rule
from console.messages.models import FORMATS, MaskingRule, TopicMessageSettings
from tests.console.messages.conftest import create_topic, produce_confluent
from tests.console.messages.test_deserializers import descriptor_set
from tests.console.messages.test_live import communicator_for, events_until

SECRET = "4111-1111-1111-1111"
PAYMENT = {"card": {"number": SECRET}, "name": "ann"}
AVRO_SCHEMA = json.dumps({"type": "record", "name": "Payment", "fields": [
    {"name": "card", "type": {"type": "record", "name": "Card", "fields": [{"name": "number", "type": "string"}]}},
    {"name": "name", "type": "string"}]})


def _avro(value) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parse_avro_schema(AVRO_SCHEMA), value)
    return out.getvalue()


def _protobuf() -> bytes:
    from console.messages.deserializers import protobuf_message_class
    return protobuf_message_class(descriptor_set(), "shop.Order")(id=1, item=SECRET).SerializeToString()


def payloads() -> list[dict]:
    """One record per way of writing the secret; offsets 0..5 in this order."""
    as_json = json.dumps(PAYMENT).encode()
    return [{"key": b"json", "value": as_json, "headers": [("card", as_json)]},
            {"key": b"avro", "value": _avro(PAYMENT)},
            {"key": b"binary", "value": b"\x00\xff" + SECRET.encode()},
            {"key": b"text", "value": b"card " + SECRET.encode(), "headers": [("note", b"card " + SECRET.encode())]},
            {"key": b"msgpack", "value": msgpack.packb(PAYMENT)},
            {"key": b"protobuf", "value": _protobuf()}]


def _base64_cores(secret: bytes) -> list[bytes]:
    """The base64 characters that encode only the secret, for each of the 3 alignments it can have."""
    cores = []
    for k in range(3):
        encoded = base64.b64encode(b"\0" * k + secret)
        cores.append(encoded[(k + 2) // 3 * 4:(k + len(secret)) // 3 * 4])
    return cores


def leaks(body: bytes) -> list[str]:
    secret = SECRET.encode()
    forms = {"text": secret, "hex": secret.hex().encode(), "HEX": secret.hex().upper().encode(),
             **{f"base64/{i}": core for i, core in enumerate(_base64_cores(secret))}}
    return [name for name, form in forms.items() if form in body]


@pytest.fixture(scope="module")
def secret_topic(engine_cluster):
    topic = create_topic(engine_cluster.bootstrap, "msg-masking-every-path")
    produce_confluent(engine_cluster.bootstrap, topic, payloads())
    return topic


@pytest.fixture
def masked_topic(cluster, secret_topic):
    TopicMessageSettings.objects.create(cluster=cluster, topic=secret_topic, avro_schema=AVRO_SCHEMA,
                                        protobuf_descriptor_set=descriptor_set(), protobuf_message_type="shop.Order")
    MaskingRule.objects.create(cluster=cluster, topic=secret_topic, kind="json_field", pattern="card.number")
    MaskingRule.objects.create(cluster=cluster, topic=secret_topic, kind="json_field", pattern="item")
    return secret_topic


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def _params(fmt: str) -> dict:
    return {"key_format": "string", "value_format": fmt, "header_format": fmt}


def test_the_operator_sees_the_secret_so_the_data_is_there(cluster, masked_topic, operator_client):
    body = operator_client.get(reverse("api:messages", args=[cluster.pk, masked_topic]), {"start": "oldest"}).content
    assert "text" in leaks(body)


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_http_path_shows_a_viewer_the_masked_field(cluster, masked_topic, viewer_client, fmt):
    urls = [reverse("api:messages", args=[cluster.pk, masked_topic]),
            reverse("messages:browse", args=[cluster.pk, masked_topic]),
            reverse("api:message_search", args=[cluster.pk, masked_topic]),
            reverse("messages:export", args=[cluster.pk, masked_topic])]
    checked = []
    for url in urls:
        for extra in ({"start": "oldest"}, {"format": "csv"}):
            response = viewer_client.get(url, {**_params(fmt), **extra})
            assert response.status_code == 200, (url, response.content[:300])
            checked.append((url, extra, leaks(_body(response))))
    for offset in range(len(payloads())):
        for name in ("api:message", "messages:detail", "messages:raw"):
            response = viewer_client.get(reverse(name, args=[cluster.pk, masked_topic, 0, offset]), _params(fmt))
            assert response.status_code in (200, 403), (name, offset, response.status_code)
            checked.append((name, offset, leaks(_body(response))))
    assert [c for c in checked if c[2]] == []


def test_a_viewer_searching_for_the_masked_value_finds_nothing(cluster, masked_topic, viewer_client, operator_client):
    url = reverse("api:message_search", args=[cluster.pk, masked_topic])

    def matches(client, **params) -> int:
        lines = [json.loads(line) for line in _body(client.get(url, params)).splitlines()]
        return sum(1 for line in lines if line["type"] == "match")
    for fmt in ("auto", "hex", "avro", "json"):
        assert matches(viewer_client, text="1111-1111", value_format=fmt) == 0
        assert matches(viewer_client, json_path="card.number", json_value=f'"{SECRET}"', value_format=fmt) == 0
        assert matches(viewer_client, text="4111", field="header", header_format=fmt) == 0
    assert matches(operator_client, text="1111-1111") == len(payloads())     # every record holds it as bytes
    assert matches(viewer_client, json_path="card.number", json_value='"***"', value_format="avro") == 1


def test_values_the_rules_cannot_reach_are_withheld_with_the_reason(cluster, masked_topic, viewer_client):
    page = viewer_client.get(reverse("api:messages", args=[cluster.pk, masked_topic]), {"start": "oldest"}).json()
    by_key = {m["key"]["text"]: m for m in page["messages"]}
    assert json.loads(by_key["json"]["value"]["text"]) == {"card": {"number": "***"}, "name": "ann"}
    assert by_key["binary"]["value"]["format"] == "withheld" and "binary" in by_key["binary"]["value"]["error"]
    assert by_key["text"]["value"]["format"] == "withheld" and "no fields" in by_key["text"]["value"]["error"]
    assert by_key["text"]["headers"][0]["format"] == "withheld"
    as_hex = viewer_client.get(reverse("api:message", args=[cluster.pk, masked_topic, 0, 0]), {"value_format": "hex"})
    value = as_hex.json()["value"]
    assert value["format"] == "hex" and "masked" in value["note"]
    assert json.loads(bytes.fromhex(value["text"])) == {"card": {"number": "***"}, "name": "ann"}
    raw = viewer_client.get(reverse("messages:raw", args=[cluster.pk, masked_topic, 0, 2]))
    assert raw.status_code == 403 and "withheld" in raw.content.decode()
    download = viewer_client.get(reverse("messages:raw", args=[cluster.pk, masked_topic, 0, 1]),
                                 {"value_format": "avro"})
    assert json.loads(download.content)["card"]["number"] == "***"
    assert download["Content-Disposition"].endswith('.masked.json"')


def test_a_field_rule_on_text_that_is_not_json_withholds_it():
    from console.messages.deserializers import Decoded
    from console.messages.masking import mask_decoded
    masker = Masker([Rule("json_field", "card.number")])
    assert mask_decoded(Decoded("card 4111", "json"), masker).format == "withheld"
    regex_only = Masker([Rule("regex", r"\d{4}")])
    assert mask_decoded(Decoded("card 4111", "string"), regex_only).text == "card ***"


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("fmt", FORMATS)
def test_websocket_search_and_tail_frames_never_carry_the_masked_field(cluster, users, engine_cluster,
                                                                       unique_topic, fmt):
    topic = create_topic(engine_cluster.bootstrap, unique_topic())
    produce_confluent(engine_cluster.bootstrap, topic, payloads())
    TopicMessageSettings.objects.create(cluster=cluster, topic=topic, avro_schema=AVRO_SCHEMA,
                                        protobuf_descriptor_set=descriptor_set(), protobuf_message_type="shop.Order")
    MaskingRule.objects.create(cluster=cluster, topic=topic, kind="json_field", pattern="card.number")
    MaskingRule.objects.create(cluster=cluster, topic=topic, kind="json_field", pattern="item")
    communicator = communicator_for(cluster, topic, users["viewer"])

    async def scenario():
        assert (await communicator.connect(timeout=60))[0]
        await communicator.send_to(text_data=json.dumps({"action": "search", **_params(fmt)}))
        searched = await events_until(communicator, lambda e: e["type"] in ("done", "error"))
        await communicator.send_to(text_data=json.dumps({"action": "tail", **_params(fmt)}))
        await events_until(communicator, lambda e: e["type"] == "tailing")
        await asyncio.to_thread(produce_confluent, engine_cluster.bootstrap, topic, payloads())
        tailed = []
        while sum(1 for e in tailed if e["type"] == "record") < len(payloads()):
            tailed += await events_until(communicator, lambda e: e["type"] == "record")
        await communicator.disconnect()
        return searched, tailed
    searched, tailed = async_to_sync(scenario)()
    assert searched[-1]["type"] == "done" and searched[-1]["stats"]["matches"] == len(payloads())
    frames = [json.dumps(e).encode() for e in searched + tailed]
    assert [leaks(f) for f in frames if leaks(f)] == []
    assert all(m["masked"] for e in tailed if e["type"] == "record" for m in [e["message"]])
