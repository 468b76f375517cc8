"""Single message transforms and predicates: each built-in on records with and without a
schema, predicates with negation, Kafka's config errors; then a source and a sink connector on
the worker cluster whose records are routed, stamped, masked and filtered on their way."""
from __future__ import annotations

import datetime
import json
import re

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from engine.connect.api import DataError, SinkRecord, SourceRecord
from engine.connect.date_format import DATE, TIMESTAMP, DateFormat, DateFormatError, iso_text, millis, moment
from engine.connect.transforms import TransformationChain, TransformConfigError, TransformError
from tests.support.connect_worker import request
from tests.support.groups import create_topic
from tests.support.waiting import wait_until

T = "org.apache.kafka.connect.transforms."
USER_SCHEMA = {"type": "struct", "optional": False, "fields": [
    {"field": "id", "type": "int32", "optional": False}, {"field": "ssn", "type": "string", "optional": False},
    {"field": "name", "type": "string", "optional": True}]}


def chain(**props) -> TransformationChain:
    return TransformationChain({k.replace("__", "."): v for k, v in props.items()})


def sink(value, *, schema=None, topic="users", headers=(), key=None, key_schema=None) -> SinkRecord:
    return SinkRecord(topic, 3, key_schema, key, schema, value, 41, 1_700_000_000_000, "CreateTime", list(headers))


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
    ({"transforms": "a", "transforms.a.type": "com.example.Redact"}, "Class com.example.Redact could not be found"),
    ({"transforms": "a", "transforms.a.type": "MaskField$Value"}, 'Missing required configuration "fields"'),
    ({"transforms": "a", "transforms.a.type": "RegexRouter", "transforms.a.regex": "(", "transforms.a.replacement":
      "x"}, "Invalid value ( for configuration regex"),
    ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p"},
     "predicate p is not among the predicates"),
    ({"transforms": "a", "transforms.a.type": "ReplaceField$Value", "transforms.a.renames": "broken"},
     "Invalid rename mapping: broken"),
    ({"transforms": "a", "transforms.a.type": T + "TimestampConverter$Value"},
     'Missing required configuration "target.type"'),
    ({"transforms": "a", "transforms.a.type": "TimestampConverter$Key", "transforms.a.target.type": "timestamp"},
     "Invalid value timestamp for configuration target.type: String must be one of: string, unix, Date, Time, "
     "Timestamp"),
    ({"transforms": "a", "transforms.a.type": "TimestampConverter$Value", "transforms.a.target.type": "unix",
      "transforms.a.unix.precision": "minutes"},
     "Invalid value minutes for configuration unix.precision: String must be one of: seconds, milliseconds, "
     "microseconds, nanoseconds"),
    ({"transforms": "a", "transforms.a.type": "TimestampConverter$Value", "transforms.a.target.type": "string"},
     "TimestampConverter requires format option to be specified when using string timestamps"),
    ({"transforms": "a", "transforms.a.type": "TimestampConverter$Value", "transforms.a.target.type": "string",
      "transforms.a.format": "EEE, dd MMM yyyy"},
     "Invalid value EEE, dd MMM yyyy for configuration format: Unsupported pattern letters 'EEE'"),
    ({"transforms": "a", "transforms.a.type": "TimestampConverter$Value", "transforms.a.target.type": "unix",
      "transforms.a.replace.null.with.default": "maybe"}, "Expected value to be either true or false"),
    ({"transforms": "a", "transforms.a.type": "TimestampRouter", "transforms.a.timestamp.format": "yyyy-ww"},
     "Invalid value yyyy-ww for configuration timestamp.format: Unsupported pattern letters 'ww'"),
    ({"transforms": "a", "transforms.a.type": T + "SetSchemaMetadata$Value"},
     "Neither schema name nor version configured"),
    ({"transforms": "a", "transforms.a.type": "SetSchemaMetadata$Key", "transforms.a.schema.version": "two"},
     "Invalid value two for configuration schema.version: Not a number of type INT"),
    ({"transforms": "a", "transforms.a.type": T + "HeaderFrom$Value", "transforms.a.fields": "id,at",
      "transforms.a.headers": "id", "transforms.a.operation": "copy"},
     "'fields' config must have the same number of elements as 'headers' config."),
    ({"transforms": "a", "transforms.a.type": "HeaderFrom$Key", "transforms.a.fields": "id",
      "transforms.a.headers": "id", "transforms.a.operation": "rename"},
     "Invalid value rename for configuration operation: String must be one of: move, copy"),
    ({"transforms": "a", "transforms.a.type": "HeaderFrom$Key", "transforms.a.fields": "id",
      "transforms.a.headers": "id"}, 'Missing required configuration "operation"'),
])
def test_config_errors_are_sentences(props, message):
    with pytest.raises(TransformConfigError, match=re.escape(message)):
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
                            {**sink_config, "name": "smt-bad", "transforms.unwrap.type": "com.example.Redact"})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"]}
    assert code == 200 and body["error_count"] == 1
    assert "Class com.example.Redact could not be found" in errors["transforms"][0]
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


STAMP = 1_700_000_000_123                     # 2023-11-14T22:13:20.123Z
ISO = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
UTC = datetime.timezone.utc


@pytest.mark.parametrize(("pattern", "text", "strptime"), [
    (ISO, "2023-11-14T22:13:20.123Z", "%Y-%m-%dT%H:%M:%S.%f%z"),
    ("yyMMdd HHmmss Z", "231114 221320 +0000", "%y%m%d %H%M%S %z"),
    ("dd/MM/yyyy 'at' HH''mm '100%'", "14/11/2023 at 22'13 100%", "%d/%m/%Y at %H'%M 100%%"),
])
def test_the_date_format_translator_reads_javas_pattern_letters_and_quotes(pattern, text, strptime):
    date_format = DateFormat(pattern)
    assert date_format.strptime == strptime
    assert date_format.format(moment(STAMP)) == text
    assert date_format.format(date_format.parse(text)) == text


def test_the_date_format_translator_parses_offsets_to_utc_and_refuses_what_it_does_not_read():
    assert millis(DateFormat(ISO).parse("2023-11-14T23:13:20.123+01:00")) == STAMP
    assert millis(DateFormat("yyyy-MM-dd HH:mm:ss Z").parse("2023-11-14 17:13:20 -0500")) == STAMP - 123
    assert DateFormat("yyyy-MM-dd").parse("2023-11-14").tzinfo == UTC      # no offset in the text: UTC
    # Connect's Values text of dates (a header's): a time of day, a date at midnight, a timestamp.
    assert (iso_text(STAMP % 86_400_000), iso_text(19675 * 86_400_000), iso_text(STAMP)) == (
        "22:13:20.123Z", "2023-11-14", "2023-11-14T22:13:20.123Z")
    for pattern, named in (("EEE, dd MMM yyyy", "letters 'EEE'"), ("yyyy-M-d", "letter 'M'"),
                           ("hh:mm a", "letters 'hh'"), ("yyyy'T", "Unterminated quote")):
        with pytest.raises(DateFormatError, match=named):
            DateFormat(pattern)
    routed = chain(transforms="t", transforms__t__type="TimestampRouter",
                   transforms__t__timestamp__format="yyyy.MM.dd'T'HH").apply(sink({}, topic="orders"))
    assert routed.topic == "orders-2023.11.14T22"


def converter(which: str = "Value", alias: str = "ts", **props) -> TransformationChain:
    return chain(transforms=alias, **{f"transforms__{alias}__type": T + f"TimestampConverter${which}"},
                 **{f"transforms__{alias}__{k}": v for k, v in props.items()})


def test_timestamp_converter_without_a_schema_infers_the_type_from_the_value():
    as_text = converter(field="at", target__type="string", format=ISO)
    assert as_text.apply(sink({"at": STAMP, "id": 1})).value == {"at": "2023-11-14T22:13:20.123Z", "id": 1}
    assert as_text.apply(sink({"id": 1})).value == {"id": 1, "at": None}     # Kafka puts the missing field
    in_seconds = converter(field="at", target__type="unix", format=ISO, unix__precision="seconds")
    assert in_seconds.apply(sink({"at": "2023-11-14T22:13:20.999Z"})).value == {"at": 1_700_000_000}
    at = datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    from_nanos = converter(target__type="Timestamp", unix__precision="nanoseconds")
    assert from_nanos.apply(sink(STAMP * 1_000_000 + 999_999)).value == at      # Java's milliseconds
    assert converter(target__type="unix", unix__precision="microseconds").apply(sink(at)).value == STAMP * 1000
    keyed = converter("Key", target__type="Date").apply(sink({"id": 1}, key=STAMP))
    assert (keyed.key, keyed.key_schema, keyed.value) == (datetime.date(2023, 11, 14), None, {"id": 1})
    assert converter(target__type="Time").apply(sink(STAMP)).value == datetime.time(22, 13, 20, 123000)
    assert converter(target__type="unix").apply(sink(datetime.date(2023, 11, 14))).value == 1_699_920_000_000
    assert converter(target__type="unix").apply(sink(None)).value is None
    with pytest.raises(TransformError, match=re.escape("Could not parse timestamp: value (yesterday) does not "
                                                       f"match pattern ({ISO})")):
        as_text.apply(sink({"at": "yesterday"}))
    with pytest.raises(TransformError, match="TimestampConverter does not support float objects as timestamps"):
        converter(target__type="unix").apply(sink(1.5))
    with pytest.raises(TransformError, match="requires format option"):
        converter(target__type="unix").apply(sink("2023-11-14"))


EVENT_SCHEMA = {"type": "struct", "optional": False, "fields": [
    {"field": "id", "type": "int32", "optional": False},
    {"field": "at", "type": "int64", "optional": True},
    {"field": "day", "type": "int32", "optional": True, "name": DATE, "version": 1},
    {"field": "note", "type": "string", "optional": True, "default": "none"}]}


def test_timestamp_converter_with_a_schema_writes_connects_logical_types():
    event = {"id": 7, "at": STAMP, "day": 19675, "note": None}
    stamped = converter(field="at", target__type="Timestamp").apply(sink(event, schema=EVENT_SCHEMA))
    assert stamped.value == {"id": 7, "at": STAMP, "day": 19675, "note": "none"}
    assert stamped.value_schema["fields"][1] == {"field": "at", "type": "int64", "optional": True,
                                                 "name": TIMESTAMP, "version": 1}
    assert [f for i, f in enumerate(stamped.value_schema["fields"]) if i != 1] == [
        f for i, f in enumerate(EVENT_SCHEMA["fields"]) if i != 1]
    as_text = converter(field="at", target__type="string", format=ISO).apply(stamped)
    assert as_text.value["at"] == "2023-11-14T22:13:20.123Z"
    assert as_text.value_schema["fields"][1] == {"field": "at", "type": "string", "optional": True}
    day = converter(field="day", target__type="string", format="yyyy-MM-dd",
                    replace__null__with__default="false").apply(sink(event, schema=EVENT_SCHEMA))
    assert day.value == {"id": 7, "at": STAMP, "day": "2023-11-14", "note": None}
    as_time = converter(field="at", target__type="Time").apply(sink(event, schema=EVENT_SCHEMA))
    assert as_time.value["at"] == 80_000_123 and as_time.value_schema["fields"][1]["name"] == DATE[:-4] + "Time"
    # A Timestamp value may be a datetime too (a connector's own records).
    at_schema = {"type": "int64", "optional": False, "name": TIMESTAMP}
    unix = converter(target__type="unix").apply(sink(moment(STAMP), schema=at_schema))
    assert (unix.value, unix.value_schema) == (STAMP, {"type": "int64", "optional": False})
    keyed = converter("Key", target__type="Date", format="yyyy-MM-dd").apply(
        sink({}, key="2023-11-14", key_schema={"type": "string", "optional": False}))
    assert (keyed.key, keyed.key_schema) == (19675, {"type": "int32", "optional": False, "name": DATE,
                                                     "version": 1})
    defaulted = {**EVENT_SCHEMA, "fields": [{"field": "at", "type": "int64", "optional": True, "default": STAMP}]}
    assert converter(field="at", target__type="Date").apply(sink({"at": None}, schema=defaulted)).value == {
        "at": 19675}
    assert converter(field="at", target__type="Date", replace__null__with__default="false").apply(
        sink({"at": None}, schema=defaulted)).value == {"at": None}
    with pytest.raises(TransformError, match="does not correspond to a known timestamp type format"):
        converter(field="id", target__type="unix").apply(sink(event, schema=EVENT_SCHEMA))


def test_set_schema_metadata_names_the_schema_and_refuses_a_record_without_one():
    renamed = chain(transforms="m", transforms__m__type=T + "SetSchemaMetadata$Value",
                    transforms__m__schema__name="com.example.User", transforms__m__schema__version="2").apply(
        sink({"id": 7, "ssn": "x", "name": "Ann"}, schema=USER_SCHEMA))
    assert renamed.value_schema == {**USER_SCHEMA, "name": "com.example.User", "version": 2}
    assert renamed.value == {"id": 7, "ssn": "x", "name": "Ann"}
    versioned = chain(transforms="m", transforms__m__type="SetSchemaMetadata$Key", transforms__m__schema__version="4")
    keyed = versioned.apply(sink({"a": 1}, key="k", key_schema={"type": "string", "optional": False, "name": "old"}))
    assert (keyed.key, keyed.key_schema, keyed.value) == ("k", {"type": "string", "optional": False, "name": "old",
                                                                "version": 4}, {"a": 1})
    defaulted = {"type": "struct", "fields": [{"field": "name", "type": "string", "optional": True,
                                               "default": "anon"}]}
    named = chain(transforms="m", transforms__m__type="SetSchemaMetadata$Value", transforms__m__schema__name="N")
    assert named.apply(sink({"name": None}, schema=defaulted)).value == {"name": "anon"}
    kept = chain(transforms="m", transforms__m__type="SetSchemaMetadata$Value", transforms__m__schema__name="N",
                 transforms__m__replace__null__with__default="false")
    assert kept.apply(sink({"name": None}, schema=defaulted)).value == {"name": None}
    assert versioned.apply(sink({"a": 1})).key_schema is None                # a null key without a schema passes
    with pytest.raises(TransformError, match=re.escape("Schema required for [updating schema metadata]: the "
                                                       "record's value has no schema")) as raised:
        named.apply(sink({"name": "Ann"}))
    assert raised.value.class_name == T + "SetSchemaMetadata$Value"


def header_from(which: str, fields: str, headers: str, operation: str, **props) -> TransformationChain:
    return chain(transforms="h", transforms__h__type=T + f"HeaderFrom${which}", transforms__h__fields=fields,
                 transforms__h__headers=headers, transforms__h__operation=operation,
                 **{f"transforms__h__{k}": v for k, v in props.items()})


def test_header_from_copies_and_moves_fields_into_headers_as_connects_header_text():
    value = {"id": 7, "tags": ["a", 'b"'], "raw": b"\x00\x01", "ok": True, "who": {"n": "Ann"}, "s": "x"}
    copied = header_from("Value", "id,tags,raw,ok,who,s,missing", "h-id,h-tags,h-raw,h-ok,h-who,h-s,h-missing",
                         "copy").apply(sink(value, headers=[("h-id", b"old")]))
    assert copied.value == value
    assert copied.headers == [("h-id", b"old"), ("h-id", b"7"), ("h-tags", b'["a","b\\""]'), ("h-raw", b"AAE="),
                              ("h-ok", b"true"), ("h-who", b'{"n":"Ann"}'), ("h-s", b"x"), ("h-missing", None)]
    moved = header_from("Value", "id,s", "h-id,h-s", "move").apply(sink(value))
    assert moved.value == {k: v for k, v in value.items() if k not in ("id", "s")}
    assert moved.headers == [("h-id", b"7"), ("h-s", b"x")]
    key_schema = {"type": "struct", "optional": False, "fields": [
        {"field": "id", "type": "int32", "optional": False},
        {"field": "at", "type": "int64", "optional": False, "name": TIMESTAMP, "version": 1}]}
    keyed = header_from("Key", "at", "event-time", "move").apply(
        sink({"v": 1}, key={"id": 7, "at": STAMP}, key_schema=key_schema))
    assert (keyed.key, keyed.key_schema, keyed.value) == ({"id": 7}, {**key_schema, "fields": key_schema["fields"][:1]},
                                                          {"v": 1})
    assert keyed.headers == [("event-time", b"2023-11-14T22:13:20.123Z")]
    defaulted = {"type": "struct", "fields": [{"field": "name", "type": "string", "optional": True,
                                               "default": "anon"}]}
    assert header_from("Value", "name", "who", "copy").apply(sink({"name": None}, schema=defaulted)).headers == [
        ("who", b"anon")]
    assert header_from("Value", "name", "who", "copy", replace__null__with__default="false").apply(
        sink({"name": None}, schema=defaulted)).headers == [("who", None)]
    with pytest.raises(TransformError, match="nope is not a valid field name"):
        header_from("Value", "nope", "n", "copy").apply(sink({"name": "Ann"}, schema=defaulted))
    with pytest.raises(TransformError, match=re.escape("Only Map objects supported in absence of schema for "
                                                       "[header copy]")):
        header_from("Value", "a", "a", "copy").apply(sink("text"))


def test_a_source_stamps_names_and_heads_its_records_through_the_new_transforms(connect_cluster, connect_engine,
                                                                                tmp_path):
    """A FileStreamSource whose lines are parsed to Connect Timestamps, hoisted into a struct that
    SetSchemaMetadata names and HeaderFrom copies into a header: the JSON converter writes the
    logical schema and its epoch milliseconds, as Kafka's does."""
    leader = connect_cluster[0]
    create_topic(connect_engine.bootstrap, "smt-times", 1)
    source_file = tmp_path / "times.txt"
    source_file.write_text("2023-11-14 22:13:20\n")
    config = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": "smt-times",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "transforms": "parse,hoist,name,head",
              "transforms.parse.type": T + "TimestampConverter$Value", "transforms.parse.target.type": "Timestamp",
              "transforms.parse.format": "yyyy-MM-dd HH:mm:ss",
              "transforms.hoist.type": T + "HoistField$Value", "transforms.hoist.field": "at",
              "transforms.name.type": T + "SetSchemaMetadata$Value", "transforms.name.schema.name": "com.example.Event",
              "transforms.name.schema.version": "2",
              "transforms.head.type": T + "HeaderFrom$Value", "transforms.head.fields": "at",
              "transforms.head.headers": "event-time", "transforms.head.operation": "copy"}
    assert request(leader, "POST", "/connectors", {"name": "smt-times", "config": config})[0] == 201
    [record] = _values(connect_engine.bootstrap, "smt-times", 1)
    assert json.loads(record.value()) == {
        "schema": {"type": "struct", "optional": False, "name": "com.example.Event", "version": 2, "fields": [
            {"field": "at", "type": "int64", "optional": False, "name": TIMESTAMP, "version": 1}]},
        "payload": {"at": 1_700_000_000_000}}
    assert dict(record.headers())["event-time"] == b"2023-11-14T22:13:20.000Z"
    request(leader, "DELETE", "/connectors/smt-times")


def test_validation_lists_the_new_transforms_keys_and_names_an_unsupported_format_letter(connect_cluster, tmp_path):
    config = {"connector.class": "FileStreamSink", "file": str(tmp_path / "x.txt"), "topics": "t", "name": "times",
              "transforms": "ts,meta,head", "transforms.ts.type": T + "TimestampConverter$Value",
              "transforms.meta.type": "SetSchemaMetadata$Key", "transforms.meta.schema.name": "k",
              "transforms.head.type": "HeaderFrom$Value", "transforms.head.fields": "a",
              "transforms.head.headers": "a", "transforms.head.operation": "move"}
    path = "/connector-plugins/FileStreamSink/config/validate"
    code, body, _ = request(connect_cluster[0], "PUT", path, config)
    configs = {c["definition"]["name"]: c for c in body["configs"]}
    assert code == 200 and {"Transforms: ts", "Transforms: meta", "Transforms: head"} <= set(body["groups"])
    assert {f"transforms.ts.{k}" for k in ("field", "target.type", "format", "unix.precision",
                                            "replace.null.with.default")} <= set(configs)
    assert {"transforms.meta.schema.name", "transforms.meta.schema.version", "transforms.head.fields",
            "transforms.head.headers", "transforms.head.operation"} <= set(configs)
    assert configs["transforms.ts.target.type"]["value"]["errors"] == [
        'Missing required configuration "transforms.ts.target.type" which has no default value.']
    assert body["error_count"] == 1
    unsupported = {**config, "transforms.ts.target.type": "string", "transforms.ts.format": "EEE yyyy"}
    body = request(connect_cluster[0], "PUT", path, unsupported)[1]
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"]}
    assert body["error_count"] == 1 and "Unsupported pattern letters 'EEE'" in errors["transforms"][0]
    valid = {**unsupported, "transforms.ts.format": "yyyy-MM-dd", "transforms.meta.schema.version": "3"}
    assert request(connect_cluster[0], "PUT", path, valid)[1]["error_count"] == 0
