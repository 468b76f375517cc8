"""The REST API: Confluent's paths, JSON, content type and error codes; bad input writes nothing."""
from __future__ import annotations

import json

import pytest
from kafka import KafkaConsumer, TopicPartition

from tests.support.registry_process import call

RECORD = {"type": "record", "name": "Thing", "fields": [{"name": "a", "type": "int"}]}


def schema_body(schema: dict | str, **extra) -> dict:
    return {"schema": schema if isinstance(schema, str) else json.dumps(schema), **extra}


def schemas_end_offset(engine) -> int:
    consumer = KafkaConsumer(bootstrap_servers=engine.bootstrap)
    try:
        partition = TopicPartition("_schemas", 0)
        return consumer.end_offsets([partition])[partition]
    finally:
        consumer.close()


@pytest.fixture
def api(registry):
    def request(method: str, path: str, body=None, **kwargs):
        return call(registry.url + path, method, body, **kwargs)
    request.url = registry.url
    return request


def test_content_type_and_schema_types(api):
    status, body, headers = api("GET", "/schemas/types")
    assert status == 200 and sorted(body) == ["AVRO", "JSON", "PROTOBUF"]
    assert headers["Content-Type"].startswith("application/vnd.schemaregistry.v1+json")


def test_register_then_read_every_path(api, subject):
    status, body, _ = api("POST", f"/subjects/{subject}/versions", schema_body(RECORD))
    assert status == 200 and set(body) == {"id"}
    schema_id = body["id"]
    assert subject in api("GET", "/subjects")[1]
    assert api("GET", f"/subjects/{subject}/versions")[1] == [1]
    status, version, _ = api("GET", f"/subjects/{subject}/versions/latest")
    assert version == {"subject": subject, "version": 1, "id": schema_id, "schema": json.dumps(RECORD,
                                                                                               separators=(",", ":"))}
    assert api("GET", f"/subjects/{subject}/versions/1")[1] == version
    assert api("GET", f"/subjects/{subject}/versions/1/schema")[1] == RECORD
    assert api("GET", f"/schemas/ids/{schema_id}")[1] == {"schema": version["schema"]}
    assert api("GET", f"/schemas/ids/{schema_id}/versions")[1] == [{"subject": subject, "version": 1}]
    assert api("GET", f"/subjects/{subject}/versions/1/referencedby")[1] == []
    status, found, _ = api("POST", f"/subjects/{subject}", schema_body(RECORD))
    assert status == 200 and found["version"] == 1 and found["id"] == schema_id


@pytest.mark.parametrize(("method", "path", "body", "status", "code"), [
    ("GET", "/subjects/nobody-has-this/versions", None, 404, 40401),
    ("GET", "/subjects/nobody-has-this/versions/1", None, 404, 40401),
    ("GET", "/schemas/ids/987654", None, 404, 40403),
    ("GET", "/subjects/x/versions/zero", None, 422, 42202),
    ("GET", "/subjects/x/versions/0", None, 422, 42202),
    ("PUT", "/config", {"compatibility": "SIDEWAYS"}, 422, 42203),
    ("PUT", "/mode", {"mode": "WRITEONLY"}, 422, 42204),
    ("GET", "/no/such/path", None, 404, 404),
])
def test_errors_have_confluents_codes(api, method, path, body, status, code):
    got_status, got, _ = api(method, path, body)
    assert (got_status, got["error_code"]) == (status, code)
    assert isinstance(got["message"], str) and got["message"]


@pytest.mark.parametrize(("body", "fragment"), [
    (schema_body("{not json"), "Invalid schema"),
    (schema_body({"type": "record", "name": "X", "fields": [{"name": "a", "type": "NoSuchType"}]}), "NoSuchType"),
    (schema_body({"type": "record", "name": "X", "fields": [{"name": "a", "type": "int", "default": "x"}]}),
     "Default value"),
    (schema_body("syntax = \"proto3\"; message M { strng a = 1; }", schemaType="PROTOBUF"), "strng"),
    (schema_body('{"type": 5}', schemaType="JSON"), "Invalid schema"),
    (schema_body(RECORD, schemaType="XML"), "Invalid schema type"),
    (schema_body(RECORD, references=[{"name": "a.B", "subject": "missing-subject", "version": 1}]), "missing-subject"),
    ({"schema": ""}, "Empty schema"),
    ({"no": "schema"}, "Empty schema"),
])
def test_bad_schemas_are_42201_and_nothing_is_written(api, registry_engine, subject, body, fragment):
    before = schemas_end_offset(registry_engine)
    status, answer, _ = api("POST", f"/subjects/{subject}/versions", body)
    assert (status, answer["error_code"]) == (422, 42201)
    assert fragment in answer["message"]
    assert "Traceback" not in answer["message"]
    assert schemas_end_offset(registry_engine) == before
    assert api("GET", f"/subjects/{subject}/versions")[1]["error_code"] == 40401


def test_a_body_that_is_not_json_is_a_readable_400(api, subject):
    status, answer, _ = api("POST", f"/subjects/{subject}/versions", b"\x00\xffnot json at all")
    assert status == 400 and "not JSON" in answer["message"]


def test_a_body_of_another_media_type_is_415_and_writes_nothing(api, registry_engine, subject):
    before = schemas_end_offset(registry_engine)
    body = schema_body(RECORD)
    for media_type in ("text/plain", "application/x-www-form-urlencoded"):    # curl -d sends the latter
        status, answer, _ = api("POST", f"/subjects/{subject}/versions", body, headers={"Content-Type": media_type})
        assert (status, answer["error_code"]) == (415, 415) and media_type in answer["message"]
    assert schemas_end_offset(registry_engine) == before
    # The types Confluent's registry reads, with parameters, are taken.
    for media_type in ("application/json; charset=utf-8", "application/vnd.schemaregistry+json",
                       "application/octet-stream"):
        status, answer, _ = api("POST", f"/subjects/{subject}/versions", body, headers={"Content-Type": media_type})
        assert status == 200 and answer["id"] > 0, answer


def test_incompatible_version_is_409_with_the_reasons_and_nothing_is_written(api, registry_engine, subject):
    api("POST", f"/subjects/{subject}/versions", schema_body(RECORD))
    before = schemas_end_offset(registry_engine)
    changed = {**RECORD, "fields": [{"name": "a", "type": "string"}]}
    status, answer, _ = api("POST", f"/subjects/{subject}/versions", schema_body(changed))
    assert (status, answer["error_code"]) == (409, 409)
    assert "TYPE_MISMATCH" in answer["message"] and "{compatibility: 'BACKWARD'}" in answer["message"]
    assert schemas_end_offset(registry_engine) == before
    status, verbose, _ = api("POST", f"/compatibility/subjects/{subject}/versions/latest?verbose=true",
                             schema_body(changed))
    assert status == 200 and verbose["is_compatible"] is False
    assert any("TYPE_MISMATCH" in m for m in verbose["messages"])


def test_soft_then_hard_delete(api, subject):
    api("POST", f"/subjects/{subject}/versions", schema_body(RECORD))
    api("POST", f"/subjects/{subject}/versions", schema_body({**RECORD, "fields": []}))
    assert api("DELETE", f"/subjects/{subject}?permanent=true")[1]["error_code"] == 40405   # soft delete first
    assert api("DELETE", f"/subjects/{subject}/versions/2")[1] == 2
    assert api("GET", f"/subjects/{subject}/versions")[1] == [1]
    assert api("GET", f"/subjects/{subject}/versions?deleted=true")[1] == [1, 2]
    assert api("GET", f"/subjects/{subject}/versions/2?deleted=true")[1]["version"] == 2
    assert api("DELETE", f"/subjects/{subject}")[1] == [1]
    assert subject not in api("GET", "/subjects")[1]
    assert subject in api("GET", "/subjects?deleted=true")[1]
    assert api("DELETE", f"/subjects/{subject}")[1]["error_code"] == 40404          # already soft deleted
    assert api("DELETE", f"/subjects/{subject}?permanent=true")[1] == [1, 2]
    assert subject not in api("GET", "/subjects?deleted=true")[1]
    assert api("GET", f"/subjects/{subject}/versions?deleted=true")[1]["error_code"] == 40401


def test_a_referenced_version_cannot_be_deleted(api, subject):
    api("POST", f"/subjects/{subject}-leaf/versions", schema_body({"type": "fixed", "name": "Leaf", "size": 4}))
    api("POST", f"/subjects/{subject}-root/versions", schema_body(
        {"type": "record", "name": "Root", "fields": [{"name": "l", "type": "Leaf"}]},
        references=[{"name": "Leaf", "subject": f"{subject}-leaf", "version": 1}]))
    status, answer, _ = api("DELETE", f"/subjects/{subject}-leaf/versions/1")
    assert (status, answer["error_code"]) == (422, 42206)



def test_a_reference_to_the_latest_version_names_that_version_and_keeps_it_from_deletion(api, subject):
    leaf = {"type": "fixed", "name": "Leaf", "size": 4}
    api("POST", f"/subjects/{subject}-leaf/versions", schema_body(leaf))
    root = schema_body({"type": "record", "name": "Root", "fields": [{"name": "l", "type": "Leaf"}]},
                       references=[{"name": "Leaf", "subject": f"{subject}-leaf", "version": -1}])
    root_id = api("POST", f"/subjects/{subject}-root/versions", root)[1]["id"]
    pinned = [{"name": "Leaf", "subject": f"{subject}-leaf", "version": 1}]
    assert api("GET", f"/schemas/ids/{root_id}")[1]["references"] == pinned
    assert api("GET", f"/subjects/{subject}-leaf/versions/1/referencedby")[1] == [root_id]
    status, answer, _ = api("DELETE", f"/subjects/{subject}-leaf")
    assert (status, answer["error_code"]) == (422, 42206)
    assert api("POST", f"/subjects/{subject}-root", root)[1]["id"] == root_id     # the lookup pins it too
    api("PUT", f"/config/{subject}-leaf", {"compatibility": "NONE"})
    assert api("POST", f"/subjects/{subject}-leaf/versions", schema_body({**leaf, "size": 8}))[0] == 200
    assert api("GET", f"/schemas/ids/{root_id}")[1]["references"] == pinned     # the id keeps its meaning

def test_compatibility_level_per_subject_and_global(api, subject):
    assert api("GET", f"/config/{subject}")[1]["error_code"] == 40408
    assert api("GET", f"/config/{subject}?defaultToGlobal=true")[1] == {"compatibilityLevel": "BACKWARD"}
    assert api("PUT", f"/config/{subject}", {"compatibility": "none"})[1] == {"compatibility": "NONE"}
    assert api("GET", f"/config/{subject}")[1] == {"compatibilityLevel": "NONE"}
    api("POST", f"/subjects/{subject}/versions", schema_body(RECORD))
    status, _, _ = api("POST", f"/subjects/{subject}/versions", schema_body({"type": "string"}))
    assert status == 200                                    # NONE: anything goes
    assert api("DELETE", f"/config/{subject}")[1] == {"compatibilityLevel": "NONE"}
    assert api("GET", f"/config/{subject}")[1]["error_code"] == 40408


def test_read_only_mode_refuses_writes(api, subject):
    assert api("PUT", f"/mode/{subject}", {"mode": "READONLY"})[1] == {"mode": "READONLY"}
    status, answer, _ = api("POST", f"/subjects/{subject}/versions", schema_body(RECORD))
    assert (status, answer["error_code"]) == (422, 42205)
    assert api("GET", f"/mode/{subject}")[1] == {"mode": "READONLY"}
    assert api("DELETE", f"/mode/{subject}")[1] == {"mode": "READONLY"}
    assert api("POST", f"/subjects/{subject}/versions", schema_body(RECORD))[0] == 200


def test_import_mode_keeps_the_given_id(api, subject):
    assert api("PUT", f"/mode/{subject}", {"mode": "IMPORT"})[1] == {"mode": "IMPORT"}
    body = schema_body({"type": "record", "name": "Imported", "fields": []}, id=90001, version=3)
    assert api("POST", f"/subjects/{subject}/versions", body)[1] == {"id": 90001}
    assert api("GET", f"/subjects/{subject}/versions")[1] == [3]
    api("DELETE", f"/mode/{subject}")
    refused = api("POST", f"/subjects/{subject}/versions", schema_body(RECORD, id=90002))[1]
    assert refused["error_code"] == 42205


def test_protobuf_format_serialized_and_json_schema(api, subject):
    proto = 'syntax = "proto3";\npackage p;\nmessage M {\n  string a = 1;\n}\n'
    proto_id = api("POST", f"/subjects/{subject}-p/versions", schema_body(proto, schemaType="PROTOBUF"))[1]["id"]
    assert api("GET", f"/schemas/ids/{proto_id}")[1] == {"schemaType": "PROTOBUF", "schema": proto}
    serialized = api("GET", f"/schemas/ids/{proto_id}?format=serialized")[1]["schema"]
    assert serialized != proto and "\n" not in serialized       # base64 FileDescriptorProto
    json_id = api("POST", f"/subjects/{subject}-j/versions",
                  schema_body('{"type": "object"}', schemaType="JSON"))[1]["id"]
    assert api("GET", f"/subjects/{subject}-j/versions/1")[1]["schemaType"] == "JSON"
    assert json_id != proto_id


def test_every_schema_is_listed_by_subject_prefix_latest_and_page(api, subject):
    """`GET /schemas`, as Confluent's SchemasResource: version bodies by subject then version."""
    other = f"{subject}-other"
    api("POST", f"/subjects/{subject}/versions", schema_body(RECORD))
    api("POST", f"/subjects/{subject}/versions", schema_body({**RECORD, "fields": []}))
    api("POST", f"/subjects/{other}/versions", schema_body(RECORD))
    status, listed, _ = api("GET", f"/schemas?subjectPrefix={subject}")
    assert status == 200
    assert [(s["subject"], s["version"]) for s in listed] == [(subject, 1), (subject, 2), (other, 1)]
    assert listed[0] == api("GET", f"/subjects/{subject}/versions/1")[1]
    latest = api("GET", f"/schemas?subjectPrefix={subject}&latestOnly=true")[1]
    assert [(s["subject"], s["version"]) for s in latest] == [(subject, 2), (other, 1)]
    page = api("GET", f"/schemas?subjectPrefix={subject}&offset=1&limit=1")[1]
    assert [(s["subject"], s["version"]) for s in page] == [(subject, 2)]
    api("DELETE", f"/subjects/{subject}/versions/2")
    assert [s["version"] for s in api("GET", f"/schemas?subjectPrefix={subject}&latestOnly=true")[1]][:1] == [1]
    assert len(api("GET", f"/schemas?subjectPrefix={subject}&deleted=true")[1]) == 3
    status, refused, _ = api("GET", "/schemas?offset=many")
    assert status == 400 and "offset must be a whole number" in refused["message"]


def test_a_subject_with_a_slash_is_routed_when_percent_encoded(api, subject):
    """Confluent's clients percent-encode a `/` in a subject (`ns%2Fname`): the path is routed on
    its encoded form and the subject read back whole."""
    name = f"{subject}/with-slash"
    encoded = name.replace("/", "%2F")
    status, body, _ = api("POST", f"/subjects/{encoded}/versions", schema_body(RECORD))
    assert status == 200 and "id" in body
    assert name in api("GET", "/subjects")[1]
    assert api("GET", f"/subjects/{encoded}/versions/latest")[1]["subject"] == name
    # Confluent's Python client encodes the subject itself.
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    client = SchemaRegistryClient({"url": api.url})
    assert client.get_latest_version(name).subject == name
    assert client.register_schema(f"{name}-2", Schema(json.dumps(RECORD), "AVRO")) == body["id"]
    assert api("DELETE", f"/subjects/{encoded}")[1] == [1]


def test_a_body_nested_too_deeply_is_a_readable_400_and_the_registry_goes_on(api, subject):
    status, answer, _ = api("POST", f"/subjects/{subject}/versions", b"[" * 100_000 + b"]" * 100_000)
    assert (status, answer["error_code"]) == (400, 400) and "nested too deeply" in answer["message"]
    assert api("POST", f"/subjects/{subject}/versions", schema_body(RECORD))[0] == 200


def _avro_doubled(depth: int, leaf: str) -> dict:
    """Records R0..R{depth-1}, each using the next in two fields: 2^depth paths to the leaf."""
    schema: dict | str = leaf
    for i in reversed(range(depth)):
        schema = {"type": "record", "name": f"R{i}", "fields": [
            {"name": "a", "type": schema}, {"name": "b", "type": schema if isinstance(schema, str) else f"R{i + 1}"}]}
    return schema


def _json_doubled(depth: int, leaf: str) -> dict:
    definitions = {f"d{i}": {"anyOf": [{"$ref": f"#/definitions/d{i + 1}"}, {"type": "object", "properties": {
        "a": {"$ref": f"#/definitions/d{i + 1}"}, "b": {"$ref": f"#/definitions/d{i + 1}"}}}]} for i in range(depth)}
    return {"$ref": "#/definitions/d0", "definitions": {**definitions, f"d{depth}": {"type": leaf}}}


@pytest.mark.parametrize("schema_type, doubled, change", [
    ("AVRO", _avro_doubled, "TYPE_MISMATCH"), ("JSON", _json_doubled, "COMBINED_TYPE_SUBSCHEMAS_CHANGED")])
def test_a_type_used_twice_at_every_level_is_checked_once_per_pair(api, subject, schema_type, doubled, change):
    """Without memoized pairs, comparing these 30-deep schemas walks 2^30 paths or more and
    holds the registry's only event loop meanwhile; each change is reported where it is first met."""
    old = schema_body(doubled(30, "int" if schema_type == "AVRO" else "integer"), schemaType=schema_type)
    assert api("POST", f"/subjects/{subject}/versions", old)[0] == 200
    new = schema_body(doubled(30, "string"), schemaType=schema_type)
    status, answer, _ = api("POST", f"/compatibility/subjects/{subject}/versions/latest?verbose=true", new)
    assert status == 200 and answer["is_compatible"] is False
    assert any(change in m for m in answer["messages"]) and len(answer["messages"]) <= 5
    status, answer, _ = api("POST", f"/subjects/{subject}/versions", new)
    assert (status, answer["error_code"]) == (409, 409) and change in answer["message"]
    assert api("POST", f"/subjects/{subject}/versions", old)[1]["id"] > 0        # itself: compatible at once
    assert subject in api("GET", "/subjects")[1]


def _diamond_level(schema_type: str, name: str, below: list[str]) -> str:
    if schema_type == "AVRO":
        fields = [{"name": f"f{i}", "type": b} for i, b in enumerate(below)] or [{"name": "x", "type": "int"}]
        return json.dumps({"type": "record", "name": name, "fields": fields})
    imports = "".join(f'import "{b}.proto";\n' for b in below)
    fields = "".join(f" {b} f{i} = {i + 1};" for i, b in enumerate(below)) or " int32 x = 1;"
    return f'syntax = "proto3";\n{imports}message {name} {{{fields} }}\n'


@pytest.mark.parametrize("schema_type", ["AVRO", "PROTOBUF"])
def test_references_reached_along_many_paths_are_resolved_once(api, subject, schema_type):
    """Two schemas per level, each referencing both of the level below: 24 levels are 2^24
    paths to the bottom. Walking them all held the registry, at each registration and at
    each start (the replay parses every schema again)."""
    below: list[str] = []
    for level in range(24):
        names = [f"A{level}", f"B{level}"]
        for name in names:
            references = [{"name": b if schema_type == "AVRO" else f"{b}.proto", "subject": f"{subject}-{b}",
                           "version": 1} for b in below]
            status, answer, _ = api("POST", f"/subjects/{subject}-{name}/versions", schema_body(
                _diamond_level(schema_type, name, below), schemaType=schema_type, references=references))
            assert status == 200, answer
        below = names
    assert len(api("GET", f"/schemas/ids/{answer['id']}")[1]["references"]) == 2
