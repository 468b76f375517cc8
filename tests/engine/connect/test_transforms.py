"""Single message transforms and predicates: each built-in on records with and without a
schema, predicates with negation, Kafka's config errors; then a source and a sink connector on
the worker cluster whose records are routed, stamped, masked and filtered on their way."""
from __future__ import annotations

import json

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from engine.connect.api import DataError, SinkRecord, SourceRecord
from engine.connect.transforms import TransformationChain, TransformConfigError
from tests.support.connect_worker import request
from tests.support.groups import create_topic
from tests.support.waiting import wait_until

T = "org.apache.kafka.connect.transforms."
USER_SCHEMA = {"type": "struct", "optional": False, "fields": [
    {"field": "id", "type": "int32", "optional": False}, {"field": "ssn", "type": "string", "optional": False},
    {"field": "name", "type": "string", "optional": True}]}


def chain(**props) -> TransformationChain:
    return TransformationChain({k.replace("__", "."): v for k, v in props.items()})


def sink(value, *, schema=None, topic="users", headers=(), key=None) -> SinkRecord:
    return SinkRecord(topic, 3, None, key, schema, value, 41, 1_700_000_000_000, "CreateTime", list(headers))


def test_insert_replace_mask_on_a_map_and_a_struct_with_its_schema():
    transforms = chain(transforms="add,rename,mask", transforms__add__type=T + "InsertField$Value",
                       transforms__add__topic__field="from", transforms__add__offset__field="at!",
                       transforms__add__static__field="origin", transforms__add__static__value="dc1",
                       transforms__rename__type="ReplaceField$Value", transforms__rename__exclude="name",
                       transforms__rename__renames="id:user_id",
                       transforms__mask__type=T + "MaskField$Value", transforms__mask__fields="ssn")
    plain = transforms.apply(sink({"id": 7, "ssn": "123-45", "name": "Ann"}))
    assert plain.value == {"user_id": 7, "ssn": "", "from": "users", "at": 41, "origin": "dc1"}
    typed = transforms.apply(sink({"id": 7, "ssn": "123-45", "name": "Ann"}, schema=USER_SCHEMA))
    assert typed.value == plain.value
    assert [(f["field"], f["type"]) for f in typed.value_schema["fields"]] == [
        ("user_id", "int32"), ("ssn", "string"), ("from", "string"), ("at", "int64"), ("origin", "string")]
    replaced = chain(transforms="m", transforms__m__type="MaskField$Value", transforms__m__fields="id,ssn",
                     transforms__m__replacement="****").apply(sink({"id": 7, "ssn": "x"}))
    assert replaced.value == {"id": "****", "ssn": "****"}


def test_extract_hoist_and_value_to_key():
    record = sink({"id": 7, "ssn": "x", "name": "Ann"}, schema=USER_SCHEMA)
    keyed = chain(transforms="k", transforms__k__type="ValueToKey", transforms__k__fields="id").apply(record)
    assert keyed.key == {"id": 7} and keyed.key_schema["fields"] == [USER_SCHEMA["fields"][0]]
    extracted = chain(transforms="k,x", transforms__k__type="ValueToKey", transforms__k__fields="id",
                      transforms__x__type="ExtractField$Key", transforms__x__field="id").apply(record)
    assert (extracted.key, extracted.key_schema) == (7, {"type": "int32", "optional": False})
    hoisted = chain(transforms="h", transforms__h__type="HoistField$Value", transforms__h__field="line").apply(
        SourceRecord(None, None, "lines", value="hello", value_schema={"type": "string", "optional": False}))
    assert hoisted.value == {"line": "hello"} and hoisted.value_schema["fields"][0]["field"] == "line"
    with pytest.raises(DataError, match="Transform x failed: nope is not a valid field name"):
        chain(transforms="x", transforms__x__type="ExtractField$Value", transforms__x__field="nope").apply(record)
    with pytest.raises(DataError, match="Only Map objects supported"):
        chain(transforms="x", transforms__x__type="ExtractField$Value", transforms__x__field="a").apply(sink("text"))


def test_routers_headers_and_a_filter_behind_predicates():
    routed = chain(transforms="r,t", transforms__r__type="RegexRouter", transforms__r__regex="(.*)-raw",
                   transforms__r__replacement="$1-clean", transforms__t__type="TimestampRouter",
                   transforms__t__topic__format="${topic}.${timestamp}",
                   transforms__t__timestamp__format="yyyy-MM-dd").apply(sink({}, topic="orders-raw"))
    assert routed.topic == "orders-clean.2023-11-14"
    assert chain(transforms="r", transforms__r__type="RegexRouter", transforms__r__regex="(.*)-raw",
                 transforms__r__replacement="$1").apply(sink({}, topic="other")).topic == "other"
    headers = chain(transforms="add,drop", transforms__add__type="InsertHeader", transforms__add__header="src",
                    transforms__add__value__literal="dc1", transforms__drop__type="DropHeaders",
                    transforms__drop__headers="secret").apply(sink({}, headers=[("secret", b"x"), ("keep", b"y")]))
    assert headers.headers == [("keep", b"y"), ("src", b"dc1")]
    # Drop tombstones and records of topics not named audit.*, keep the rest.
    filtering = chain(transforms="tomb,others", predicates="is-tomb,is-audit",
                      transforms__tomb__type=T + "Filter", transforms__tomb__predicate="is-tomb",
                      transforms__others__type="Filter", transforms__others__predicate="is-audit",
                      transforms__others__negate="true",
                      **{"predicates.is-tomb.type": T + "predicates.RecordIsTombstone",
                                                        "predicates.is-audit.type": "TopicNameMatches",
                                                        "predicates.is-audit.pattern": "audit\\..*"})
    assert filtering.apply(sink(None, topic="audit.log")) is None
    assert filtering.apply(sink({"a": 1}, topic="orders")) is None
    assert filtering.apply(sink({"a": 1}, topic="audit.log")).value == {"a": 1}
    by_header = chain(transforms="f", predicates="h", transforms__f__type="Filter", transforms__f__predicate="h",
                      predicates__h__type="HasHeaderKey", predicates__h__name="drop-me")
    assert by_header.apply(sink({}, headers=[("drop-me", None)])) is None and by_header.apply(sink({})) is not None


@pytest.mark.parametrize(("props", "message"), [
    ({"transforms": "a"}, "transforms.a.type is not set"),
    ({"transforms": "a", "transforms.a.type": "TimestampConverter$Value"},
     "Class TimestampConverter$Value could not be found"),
    ({"transforms": "a", "transforms.a.type": "MaskField$Value"}, 'Missing required configuration "fields"'),
    ({"transforms": "a", "transforms.a.type": "RegexRouter", "transforms.a.regex": "(", "transforms.a.replacement":
      "x"}, "Invalid value ( for configuration regex"),
    ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p"},
     "predicate p is not among the predicates"),
    ({"transforms": "a", "transforms.a.type": "ReplaceField$Value", "transforms.a.renames": "broken"},
     "Invalid rename mapping: broken"),
])
def test_config_errors_are_sentences(props, message):
    with pytest.raises(TransformConfigError, match=message.replace("(", r"\(").replace("$", r"\$")):
        TransformationChain(props)


def _values(bootstrap: str, topic: str, count: int) -> list:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        found = []
        wait_until(lambda: found.extend(m for m in consumer.consume(100, 0.5) if m.error() is None)
                   or len(found) >= count, 60, message=f"{count} records on {topic}")
        return found
    finally:
        consumer.close()


def test_a_source_and_a_sink_transform_their_records_on_the_worker(connect_cluster, connect_engine, tmp_path):
    leader = connect_cluster[0]
    create_topic(connect_engine.bootstrap, "smt-lines-clean", 1)
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("keep one\nDROP two\nkeep three\n")
    source = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": "smt-lines-raw",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "transforms": "route,hoist,stamp", "transforms.route.type": T + "RegexRouter",
              "transforms.route.regex": "(.*)-raw", "transforms.route.replacement": "$1-clean",
              "transforms.hoist.type": T + "HoistField$Value", "transforms.hoist.field": "line",
              "transforms.stamp.type": T + "InsertHeader", "transforms.stamp.header": "via",
              "transforms.stamp.value.literal": "smt"}
    assert request(leader, "POST", "/connectors", {"name": "smt-source", "config": source})[0] == 201
    records = _values(connect_engine.bootstrap, "smt-lines-clean", 3)
    assert [json.loads(m.value())["payload"] for m in records] == [
        {"line": "keep one"}, {"line": "DROP two"}, {"line": "keep three"}]
    assert all(dict(m.headers())["via"] == b"smt" for m in records)
    # A sink that unwraps the line; another that drops every record with the header, whose
    # offsets are committed all the same.
    sink_config = {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": "smt-lines-clean",
                   "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                   "transforms": "unwrap", "transforms.unwrap.type": T + "ExtractField$Value",
                   "transforms.unwrap.field": "line"}
    dropped_file = tmp_path / "dropped.txt"
    dropping = {**sink_config, "file": str(dropped_file), "transforms": "drop,unwrap", "predicates": "stamped",
                "transforms.drop.type": T + "Filter", "transforms.drop.predicate": "stamped",
                "predicates.stamped.type": T + "predicates.HasHeaderKey", "predicates.stamped.name": "via"}
    assert request(leader, "POST", "/connectors", {"name": "smt-sink", "config": sink_config})[0] == 201
    assert request(leader, "POST", "/connectors", {"name": "smt-drop", "config": dropping})[0] == 201
    wait_until(lambda: sink_file.exists() and sink_file.read_text().count("\n") >= 3, 60, message="sink wrote")
    assert sink_file.read_text().splitlines() == ["keep one", "DROP two", "keep three"]
    wait_until(lambda: _committed(connect_engine.bootstrap, "connect-smt-drop", "smt-lines-clean") == 3, 60,
               message="the dropping sink's offsets committed")
    assert not dropped_file.exists() or dropped_file.read_text() == ""
    # Validation names an unknown transform on the transforms key, as Connect's 400 does.
    code, body, _ = request(leader, "PUT", "/connector-plugins/FileStreamSink/config/validate",
                            {**sink_config, "name": "smt-bad", "transforms.unwrap.type": "TimestampConverter$Value"})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"]}
    assert code == 200 and body["error_count"] == 1
    assert "Class TimestampConverter$Value could not be found" in errors["transforms"][0]
    for name in ("smt-source", "smt-sink", "smt-drop"):
        request(leader, "DELETE", f"/connectors/{name}")


def _committed(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return consumer.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
    finally:
        consumer.close()


def test_a_sinks_dead_letter_queue_gets_what_it_could_not_convert_or_transform(connect_cluster, connect_engine,
                                                                                tmp_path):
    """errors.tolerance=all with a dead letter queue: a record that is not JSON (VALUE_CONVERTER)
    and one the transform cannot read (TRANSFORMATION) go to the queue as they were read, with
    Connect's context headers; the rest is written; the offsets pass them all."""
    leader = connect_cluster[0]
    create_topic(connect_engine.bootstrap, "dlq-in", 1)
    producer = Producer({"bootstrap.servers": connect_engine.bootstrap})
    for value in (b'{"line": "one"}', b"not json at all", b'"no field here"', b'{"line": "two"}'):
        producer.produce("dlq-in", value=value, headers=[("trace", b"t1")])
    assert producer.flush(30) == 0
    sink_file = tmp_path / "dlq-out.txt"
    config = {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": "dlq-in",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false",
              "transforms": "unwrap", "transforms.unwrap.type": T + "ExtractField$Value",
              "transforms.unwrap.field": "line", "errors.tolerance": "all",
              "errors.deadletterqueue.topic.name": "dlq-dead", "errors.deadletterqueue.topic.replication.factor": "1",
              "errors.deadletterqueue.context.headers.enable": "true"}
    refused = request(leader, "PUT", "/connector-plugins/FileStreamSink/config/validate",
                      {**config, "name": "dlq-bad", "errors.deadletterqueue.topic.name": "dlq-in"})[1]
    assert refused["error_count"] == 1
    assert request(leader, "POST", "/connectors", {"name": "dlq-sink", "config": config})[0] == 201
    wait_until(lambda: sink_file.exists() and sink_file.read_text().count("\n") >= 2, 60, message="sink wrote")
    assert sink_file.read_text().splitlines() == ["one", "two"]
    dead = _values(connect_engine.bootstrap, "dlq-dead", 2)
    assert [m.value() for m in dead] == [b"not json at all", b'"no field here"']
    first, second = (dict(m.headers()) for m in dead)
    assert first["trace"] == b"t1" and first["__connect.errors.topic"] == b"dlq-in"
    assert (first["__connect.errors.offset"], first["__connect.errors.stage"]) == (b"1", b"VALUE_CONVERTER")
    assert first["__connect.errors.connector.name"] == b"dlq-sink" and first["__connect.errors.exception.message"]
    assert (second["__connect.errors.stage"], second["__connect.errors.class.name"]) == (
        b"TRANSFORMATION", (T + "ExtractField$Value").encode())
    wait_until(lambda: _committed(connect_engine.bootstrap, "connect-dlq-sink", "dlq-in") == 4, 60,
               message="every offset committed")
    request(leader, "DELETE", "/connectors/dlq-sink")


def test_validation_lists_and_checks_each_transforms_keys(connect_cluster, tmp_path):
    """Connect's enriched validation: each alias gets a group of its own with its type, predicate,
    negate and its class's keys, and a missing key is an error on that key alone."""
    config = {"connector.class": "FileStreamSink", "file": str(tmp_path / "x.txt"), "topics": "t", "name": "enriched",
              "transforms": "route", "transforms.route.type": T + "RegexRouter", "transforms.route.regex": "(.*)",
              "predicates": "p", "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": "t.*"}
    code, body, _ = request(connect_cluster[0], "PUT", "/connector-plugins/FileStreamSink/config/validate", config)
    configs = {c["definition"]["name"]: c for c in body["configs"]}
    assert code == 200 and "Transforms: route" in body["groups"] and "Predicates: p" in body["groups"]
    assert {"transforms.route.type", "transforms.route.predicate", "transforms.route.negate",
            "transforms.route.regex", "transforms.route.replacement", "predicates.p.type",
            "predicates.p.pattern"} <= set(configs)
    assert configs["transforms.route.replacement"]["value"]["errors"] == [
        'Missing required configuration "transforms.route.replacement" which has no default value.']
    assert body["error_count"] == 1 and configs["transforms"]["value"]["errors"] == []


def test_flatten_and_cast_maps_and_structs():
    nested = {"id": "7", "user": {"name": "Ann", "address": {"city": "Oslo"}}, "score": 3}
    flat = chain(transforms="f", transforms__f__type="Flatten$Value", transforms__f__delimiter="_").apply(sink(nested))
    assert flat.value == {"id": "7", "user_name": "Ann", "user_address_city": "Oslo", "score": 3}
    schema = {"type": "struct", "fields": [
        {"field": "id", "type": "string", "optional": False},
        {"field": "user", "type": "struct", "optional": True, "fields": [
            {"field": "name", "type": "string", "optional": False}]}]}
    typed = chain(transforms="f", transforms__f__type="Flatten$Value").apply(
        sink({"id": "7", "user": {"name": "Ann"}}, schema=schema))
    assert typed.value == {"id": "7", "user.name": "Ann"}
    assert typed.value_schema["fields"][1] == {"field": "user.name", "type": "string", "optional": True}
    cast = chain(transforms="c", transforms__c__type=T + "Cast$Value", transforms__c__spec="id:int32,score:string")
    assert cast.apply(sink({"id": "7", "score": 3, "x": 1})).value == {"id": 7, "score": "3", "x": 1}
    whole = chain(transforms="c", transforms__c__type="Cast$Value", transforms__c__spec="float64").apply(
        sink("2.5", schema={"type": "string", "optional": False}))
    assert (whole.value, whole.value_schema["type"]) == (2.5, "double")
    with pytest.raises(DataError, match="Cannot cast 'seven' to int32"):
        cast.apply(sink({"id": "seven"}))
    with pytest.raises(TransformConfigError, match="the types are"):
        chain(transforms="c", transforms__c__type="Cast$Value", transforms__c__spec="id:decimal")
