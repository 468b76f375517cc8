"""Avro compatibility, case by case from the specification's schema resolution rules.

Each case: the old schema (already registered), the new one, and whether the new one is
BACKWARD compatible (it reads old data) and FORWARD compatible (old readers read new data)."""
from __future__ import annotations

import json

import pytest

from engine.schema_registry import compatibility
from engine.schema_registry.compatibility import PreviousVersion
from engine.schema_registry.schemas import SchemaType, parse


def record(*fields, name="R", **extra) -> dict:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def field(name, kind, **extra) -> dict:
    return {"name": name, "type": kind, **extra}


ENUM_AB = {"type": "enum", "name": "E", "symbols": ["A", "B"]}
ENUM_ABC = {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}

CASES = [
    # (why, old, new, backward, forward)
    ("same primitive", "int", "int", True, True),
    ("int promoted to long", "int", "long", True, False),
    ("int promoted to double", "int", "double", True, False),
    ("long promoted to float", "long", "float", True, False),
    ("float promoted to double", "float", "double", True, False),
    ("string and bytes read each other", "string", "bytes", True, True),
    ("long cannot become int", "long", "int", False, True),
    ("string cannot become int", "string", "int", False, False),
    ("field added with a default", record(field("a", "int")),
     record(field("a", "int"), field("b", "string", default="x")), True, True),
    ("field added without a default", record(field("a", "int")),
     record(field("a", "int"), field("b", "string")), False, True),
    ("field removed that had a default", record(field("a", "int"), field("b", "int", default=0)),
     record(field("a", "int")), True, True),
    ("field removed without a default", record(field("a", "int"), field("b", "int")),
     record(field("a", "int")), True, False),
    ("field renamed with an alias", record(field("a", "int")), record(field("b", "int", aliases=["a"])), True, False),
    ("field type promoted", record(field("a", "int")), record(field("a", "long")), True, False),
    ("record renamed", record(field("a", "int")), record(field("a", "int"), name="S"), False, False),
    ("record renamed keeping an alias", record(field("a", "int")),
     record(field("a", "int"), name="S", aliases=["R"]), True, False),
    ("enum symbol added", ENUM_AB, ENUM_ABC, True, False),
    ("enum symbol removed", ENUM_ABC, ENUM_AB, False, True),
    ("enum symbol removed, the reader has a default", ENUM_ABC, {**ENUM_AB, "default": "A"}, True, True),
    ("fixed size changed", {"type": "fixed", "name": "F", "size": 4}, {"type": "fixed", "name": "F", "size": 8},
     False, False),
    ("array items promoted", {"type": "array", "items": "int"}, {"type": "array", "items": "long"}, True, False),
    ("map values changed", {"type": "map", "values": "int"}, {"type": "map", "values": "string"}, False, False),
    ("union branch added", ["null", "int"], ["null", "int", "string"], True, False),
    ("union branch removed", ["null", "int", "string"], ["null", "int"], False, True),
    ("type made nullable", "int", ["null", "int"], True, False),
    ("nullable made plain", ["null", "int"], "int", False, True),
    ("nested record field added without default",
     record(field("inner", record(field("x", "int"), name="Inner"))),
     record(field("inner", record(field("x", "int"), field("y", "int"), name="Inner"))), False, True),
    ("recursive list keeps its shape",
     record(field("value", "int"), field("next", ["null", "R"], default=None)),
     record(field("value", "long"), field("next", ["null", "R"], default=None)), True, False),
]


def schema(document) -> object:
    return parse(SchemaType.AVRO, json.dumps(document))


@pytest.mark.parametrize(("why", "old", "new", "backward", "forward"), CASES, ids=[c[0] for c in CASES])
def test_avro_case(why, old, new, backward, forward):
    previous = [PreviousVersion(1, schema(old))]
    assert (not compatibility.check("BACKWARD", schema(new), previous)) is backward
    assert (not compatibility.check("FORWARD", schema(new), previous)) is forward
    assert (not compatibility.check("FULL", schema(new), previous)) is (backward and forward)
    assert not compatibility.check("NONE", schema(new), previous)


def test_transitive_levels_check_every_version_not_only_the_latest():
    v1 = schema(record(field("a", "int")))
    v2 = schema(record(field("a", "int", default=0)))
    v3 = schema(record(field("b", "int", default=0)))         # drops "a": v2 readers default it, v1 readers cannot
    history = [PreviousVersion(1, v1), PreviousVersion(2, v2)]
    assert compatibility.check("FORWARD", v3, history) == []
    messages = compatibility.check("FORWARD_TRANSITIVE", v3, history)
    assert "{oldSchemaVersion: 1}" in messages and messages[-1] == "{compatibility: 'FORWARD_TRANSITIVE'}"
    # BACKWARD_TRANSITIVE: v1 wrote no "b"; a new reader without a default for it fails against v1 and v2 alike.
    new = schema(record(field("a", "int"), field("c", "int")))
    assert compatibility.check("BACKWARD", new, history) != []
    assert compatibility.check("BACKWARD_TRANSITIVE", new, history)[-1] == "{compatibility: 'BACKWARD_TRANSITIVE'}"


def test_messages_say_what_where_and_against_which_version():
    old = schema(record(field("a", "int")))
    new = schema(record(field("a", "int"), field("b", "string")))
    messages = compatibility.check("BACKWARD", new, [PreviousVersion(3, old)])
    assert messages[0] == ("{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path "
                           "'/fields/1' in the new schema has no default value and is missing in the old schema', "
                           "additionalInfo:'b'}")
    assert messages[1:3] == ["{oldSchemaVersion: 3}", f"{{oldSchema: '{old.text}'}}"]
