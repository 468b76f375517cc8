"""Messages decoded by their framed schema id through the cluster's registry: browse, search
(JSON-path on decoded Avro and Protobuf), export and produce, with records written by
confluent-kafka's own serializers."""
from __future__ import annotations

import io
import json
import struct

import fastavro
import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pool, message_factory

from console.schema_registry.client import RegistryClient
from engine.schema_registry.schemas import protobuf as proto_schemas
from tests.console.conftest import make_topic

ORDER = {"type": "record", "name": "Order", "namespace": "shop",
         "fields": [{"name": "id", "type": "string"}, {"name": "cents", "type": "long"}]}
PAYMENT_PROTO = 'syntax = "proto3";\npackage pay;\nmessage Payment {\n  string id = 1;\n  int64 amount = 2;\n' \
                '  message Refund { string reason = 1; }\n}\n'


def produce(engine, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": engine.bootstrap})
    for value in values:
        producer.produce(topic, value=value, partition=0)
    assert producer.flush(30) == 0


@pytest.fixture
def registry_client(console_registry):
    return SchemaRegistryClient({"url": console_registry.url})


@pytest.fixture
def avro_topic(registry_cluster, engine_cluster, registry_client, unique_topic):
    topic = make_topic(registry_cluster, unique_topic("avro"))
    serializer = AvroSerializer(registry_client, json.dumps(ORDER))
    context = SerializationContext(topic, MessageField.VALUE)
    produce(engine_cluster, topic, [serializer({"id": f"o{i}", "cents": i * 100}, context) for i in range(5)])
    return topic


def test_browse_decodes_avro_by_schema_id_and_names_the_subject(avro_topic, registry_cluster, registry_client,
                                                                 viewer_client):
    answer = viewer_client.get(f"/api/clusters/{registry_cluster.pk}/topics/{avro_topic}/messages?start=oldest").json()
    values = [m["value"] for m in answer["messages"]]
    schema_id = registry_client.get_latest_version(f"{avro_topic}-value").schema_id
    assert [json.loads(v["text"]) for v in values] == [{"id": f"o{i}", "cents": i * 100} for i in range(5)]
    assert {(v["format"], v["schema_id"], v["subject"]) for v in values} == {("avro", schema_id, f"{avro_topic}-value")}
    page = viewer_client.get(f"/clusters/{registry_cluster.pk}/topics/{avro_topic}/messages/?start=oldest")
    assert f"schema {schema_id} · {avro_topic}-value" in page.content.decode()


def test_json_path_search_works_on_decoded_avro(avro_topic, registry_cluster, viewer_client):
    lines = viewer_client.get(f"/api/clusters/{registry_cluster.pk}/topics/{avro_topic}/messages/search",
                              {"json_path": "cents", "json_op": ">", "json_value": "250"})
    matches = [json.loads(line) for line in b"".join(lines.streaming_content).splitlines()]
    found = [json.loads(m["message"]["value"]["text"])["id"] for m in matches if m["type"] == "match"]
    assert sorted(found) == ["o3", "o4"]


def test_export_carries_the_schema_id_and_subject(avro_topic, registry_cluster, viewer_client):
    response = viewer_client.get(f"/clusters/{registry_cluster.pk}/topics/{avro_topic}/messages/export",
                                 {"format": "jsonl", "json_path": "id", "json_value": "o2"})
    rows = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert [(r["value_subject"], json.loads(r["value"])["cents"]) for r in rows] == [(f"{avro_topic}-value", 200)]
    assert rows[0]["value_schema_id"] > 0


def test_protobuf_nested_message_and_json_schema_are_decoded(registry_cluster, engine_cluster, registry_client,
                                                             viewer_client, unique_topic):
    model = proto_schemas.compile_text(PAYMENT_PROTO, {})
    model.file.name = "pay/payment.proto"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(model.file)
    Refund = message_factory.GetMessageClass(pool.FindMessageTypeByName("pay.Payment.Refund"))
    topic = make_topic(registry_cluster, unique_topic("proto"))
    context = SerializationContext(topic, MessageField.VALUE)
    serializer = ProtobufSerializer(Refund, registry_client, {"use.deprecated.format": False})
    produce(engine_cluster, topic, [serializer(Refund(reason="damaged"), context)])
    json_topic = make_topic(registry_cluster, unique_topic("json"))
    json_serializer = JSONSerializer('{"type":"object","properties":{"n":{"type":"integer"}}}', registry_client)
    produce(engine_cluster, json_topic, [json_serializer({"n": 7}, SerializationContext(json_topic, MessageField.VALUE))])
    proto = viewer_client.get(f"/api/clusters/{registry_cluster.pk}/topics/{topic}/messages?start=oldest").json()
    [value] = [m["value"] for m in proto["messages"]]
    assert value["format"] == "protobuf" and json.loads(value["text"]) == {"reason": "damaged"}
    searched = viewer_client.get(f"/api/clusters/{registry_cluster.pk}/topics/{topic}/messages/search",
                                 {"json_path": "reason", "json_value": "damaged"})
    assert b'"type": "match"' in b"".join(searched.streaming_content)
    js = viewer_client.get(f"/api/clusters/{registry_cluster.pk}/topics/{json_topic}/messages?start=oldest").json()
    [value] = [m["value"] for m in js["messages"]]
    assert value["format"] == "json" and json.loads(value["text"]) == {"n": 7} and value["subject"] == \
        f"{json_topic}-value"


def test_an_unknown_schema_id_is_not_taken_for_the_framing_unless_asked(registry_cluster, engine_cluster,
                                                                         viewer_client, unique_topic):
    """auto: an id the registry does not know means the value only looks framed (hex, a muted
    note, no error, no schema chip); chosen explicitly (avro), the registry's reason is its error."""
    topic = make_topic(registry_cluster, unique_topic("unknown"))
    produce(engine_cluster, topic, [b"\x00\x00\x0f\x42\x40payload"])     # schema id 1000000
    url = f"/api/clusters/{registry_cluster.pk}/topics/{topic}/messages?start=oldest"
    [value] = [m["value"] for m in viewer_client.get(url).json()["messages"]]
    assert value["format"] == "hex" and value["error"] is None and "schema_id" not in value
    assert "schema id 1000000" in value["note"] and "has no schema with that id" in value["note"]
    [value] = [m["value"] for m in viewer_client.get(url + "&value_format=avro").json()["messages"]]
    assert value["format"] == "hex" and "schema id 1000000" in value["error"] and "not found" in value["error"]


def test_produce_with_a_subjects_latest_version(registry_cluster, engine_cluster, registry_client, operator_client,
                                                unique_topic):
    topic = make_topic(registry_cluster, unique_topic("produce"))
    registry_client.register_schema(f"{topic}-value", Schema(json.dumps(ORDER), "AVRO"))
    url = f"/clusters/{registry_cluster.pk}/topics/{topic}/messages/produce"
    refused = operator_client.post(url, {"value": '{"id": "x"}', "value_serializer": "registry", "key_null": "on",
                                         "key_serializer": "string", "copies": 1})
    assert refused.status_code == 400 and "does not fit" in refused.content.decode()
    done = operator_client.post(url, {"value": '{"id": "x", "cents": 42}', "value_serializer": "registry",
                                      "key_null": "on", "key_serializer": "string", "copies": 1})
    assert done.status_code == 200 and 'id="produced"' in done.content.decode()
    answer = operator_client.get(f"/api/clusters/{registry_cluster.pk}/topics/{topic}/messages?start=oldest").json()
    [message] = answer["messages"]
    assert json.loads(message["value"]["text"]) == {"id": "x", "cents": 42}
    # confluent-kafka's own deserializer reads what the console wrote.
    raw = operator_client.get(f"/clusters/{registry_cluster.pk}/topics/{topic}/messages/0/{message['offset']}/raw")
    value = b"".join(raw.streaming_content) if raw.streaming else raw.content
    assert AvroDeserializer(registry_client)(value, SerializationContext(topic, MessageField.VALUE)) == \
        {"id": "x", "cents": 42}



def test_produce_with_a_json_schema_matches_its_patterns_on_re2(registry_cluster, registry_client, operator_client,
                                                                unique_topic):
    """`^(a+)+$` over 64 `a`s and a `!` never ends on Python's backtracking `re` (and holds the
    GIL meanwhile); RE2 answers at once, and refuses what it does not run (a backreference)."""
    def produce_value(topic: str, value: dict):
        return operator_client.post(f"/clusters/{registry_cluster.pk}/topics/{topic}/messages/produce", {
            "value": json.dumps(value), "value_serializer": "registry", "key_null": "on", "key_serializer": "string",
            "copies": 1})
    topic = make_topic(registry_cluster, unique_topic("backreference"))
    registry_client.register_schema(f"{topic}-value", Schema(json.dumps(
        {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a)\\1$"}}}), "JSON"))
    refused = produce_value(topic, {"code": "aa"})
    assert refused.status_code == 400 and "not one RE2 runs" in refused.content.decode()
    topic = make_topic(registry_cluster, unique_topic("pattern"))
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}},
              "patternProperties": {"^x(y+)+$": {"type": "integer"}}, "additionalProperties": False}
    registry_client.register_schema(f"{topic}-value", Schema(json.dumps(schema), "JSON"))
    refused = produce_value(topic, {"code": "a" * 64 + "!"}).content.decode()
    assert "does not fit" in refused and "does not match" in refused
    refused = produce_value(topic, {"x" + "y" * 64 + "!": 1}).content.decode()
    assert "does not match any of the regexes" in refused
    done = produce_value(topic, {"code": "a" * 64, "xyy": 7})
    assert done.status_code == 200 and 'id="produced"' in done.content.decode()


def test_a_long_chain_of_references_decodes(registry_cluster, engine_cluster, console_registry, viewer_client,
                                            unique_topic):
    """Each link of the chain names the previous one: the console resolves the references with a
    stack, where recursion (three frames a link) ran out at about 330 links."""
    topic = make_topic(registry_cluster, unique_topic("chain"))
    client = RegistryClient(console_registry.url)
    links = 400
    for n in range(links):
        link = {"type": "record", "name": f"Link{n}", "namespace": "chain", "fields": [
            {"name": "n", "type": "int"},
            *([{"name": "previous", "type": ["null", f"chain.Link{n - 1}"], "default": None}] if n else [])]}
        references = [{"name": f"chain.Link{n - 1}", "subject": f"{topic}-link-{n - 1}", "version": 1}] if n else []
        answer = client.register(f"{topic}-link-{n}", {"schema": json.dumps(link), "references": references})
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema({"type": "record", "name": "Last", "fields": [
        {"name": "n", "type": "int"}, {"name": "previous", "type": ["null", "int"], "default": None}]}),
        {"n": 7, "previous": None})
    produce(engine_cluster, topic, [b"\x00" + struct.pack(">I", answer["id"]) + out.getvalue()])
    url = f"/api/clusters/{registry_cluster.pk}/topics/{topic}/messages?start=oldest"
    [value] = [m["value"] for m in viewer_client.get(url).json()["messages"]]
    assert value["error"] is None and value["schema_id"] == answer["id"], value
    assert json.loads(value["text"]) == {"n": 7, "previous": None}
