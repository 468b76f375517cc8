"""JSON Schema compatibility, case by case from Confluent's rules for open, closed and
partially open content models."""
from __future__ import annotations

import json

import pytest

from engine.schema_registry import compatibility
from engine.schema_registry.compatibility import PreviousVersion
from engine.schema_registry.schemas import SchemaType, parse


def obj(props: dict, *, additional=None, required=()) -> dict:
    schema = {"type": "object", "properties": props}
    if additional is not None:
        schema["additionalProperties"] = additional
    if required:
        schema["required"] = list(required)
    return schema


STRING, INTEGER, NUMBER = {"type": "string"}, {"type": "integer"}, {"type": "number"}
CASES = [
    # (why, old, new, backward, change)
    ("same", STRING, STRING, True, None),
    ("integer widened to number", INTEGER, NUMBER, True, None),
    ("number narrowed to integer", NUMBER, INTEGER, False, "TYPE_NARROWED"),
    ("string to integer", STRING, INTEGER, False, "TYPE_CHANGED"),
    ("maxLength added", STRING, {"type": "string", "maxLength": 5}, False, "MAX_LENGTH_ADDED"),
    ("maxLength increased", {"type": "string", "maxLength": 5}, {"type": "string", "maxLength": 9}, True, None),
    ("minimum increased", {"type": "integer", "minimum": 1}, {"type": "integer", "minimum": 5}, False,
     "MINIMUM_INCREASED"),
    ("minimum removed", {"type": "integer", "minimum": 1}, INTEGER, True, None),
    ("pattern added", STRING, {"type": "string", "pattern": "^a"}, False, "PATTERN_ADDED"),
    ("enum extended", {"enum": ["a", "b"]}, {"enum": ["a", "b", "c"]}, True, None),
    ("enum narrowed", {"enum": ["a", "b"]}, {"enum": ["a"]}, False, "ENUM_ARRAY_NARROWED"),
    ("closed model: optional property added", obj({"a": STRING}, additional=False),
     obj({"a": STRING, "b": INTEGER}, additional=False), True, None),
    ("closed model: property removed", obj({"a": STRING, "b": INTEGER}, additional=False),
     obj({"a": STRING}, additional=False), False, "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"),
    ("open model: property removed", obj({"a": STRING, "b": INTEGER}), obj({"a": STRING}), True, None),
    ("open model: typed property added", obj({"a": STRING}), obj({"a": STRING, "b": INTEGER}), False,
     "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"),
    ("open model: untyped property added", obj({"a": STRING}), obj({"a": STRING, "b": {}}), True, None),
    ("partially open: added property covered", obj({"a": STRING}, additional=INTEGER),
     obj({"a": STRING, "b": INTEGER}, additional=INTEGER), True, None),
    ("partially open: added property not covered", obj({"a": STRING}, additional=INTEGER),
     obj({"a": STRING, "b": STRING}, additional=INTEGER), False,
     "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"),
    ("required added without default", obj({"a": STRING}, additional=False),
     obj({"a": STRING}, additional=False, required=["a"]), False, "REQUIRED_ATTRIBUTE_ADDED"),
    ("required added with default", obj({"a": STRING}, additional=False),
     obj({"a": {"type": "string", "default": "x"}}, additional=False, required=["a"]), True, None),
    ("required removed", obj({"a": STRING}, required=["a"]), obj({"a": STRING}), True, None),
    ("additionalProperties closed", obj({"a": STRING}), obj({"a": STRING}, additional=False), False,
     "ADDITIONAL_PROPERTIES_REMOVED"),
    ("additionalProperties opened", obj({"a": STRING}, additional=False), obj({"a": STRING}), True, None),
    ("anyOf branch added", {"anyOf": [STRING, INTEGER]}, {"anyOf": [STRING, INTEGER, {"type": "boolean"}]}, True,
     None),
    ("anyOf branch removed", {"anyOf": [STRING, INTEGER]}, {"anyOf": [STRING]}, False, "SUM_TYPE_NARROWED"),
    ("type made nullable", STRING, {"type": ["string", "null"]}, True, None),
    ("nullable made plain", {"type": ["string", "null"]}, STRING, False, "TYPE_CHANGED"),
    ("array items changed", {"type": "array", "items": STRING}, {"type": "array", "items": INTEGER}, False,
     "TYPE_CHANGED"),
    ("maxItems removed", {"type": "array", "items": STRING, "maxItems": 3}, {"type": "array", "items": STRING},
     True, None),
    ("nested property type changed", obj({"inner": obj({"x": STRING})}), obj({"inner": obj({"x": INTEGER})}),
     False, "TYPE_CHANGED"),
    ("title and description changed", {"type": "string", "title": "a"}, {"type": "string", "title": "b",
                                                                           "description": "d"}, True, None),
]


def parsed(document) -> object:
    return parse(SchemaType.JSON, json.dumps(document))


@pytest.mark.parametrize(("why", "old", "new", "backward", "change"), CASES, ids=[c[0] for c in CASES])
def test_json_schema_case(why, old, new, backward, change):
    messages = compatibility.check("BACKWARD", parsed(new), [PreviousVersion(1, parsed(old))])
    assert (not messages) is backward, messages
    if change:
        assert any(f'errorType:"{change}"' in m for m in messages), messages


def test_refs_are_followed_and_recursion_ends():
    old = {"definitions": {"node": obj({"next": {"$ref": "#/definitions/node"}, "v": INTEGER})},
           "$ref": "#/definitions/node"}
    new = {"definitions": {"node": obj({"next": {"$ref": "#/definitions/node"}, "v": STRING})},
           "$ref": "#/definitions/node"}
    messages = compatibility.check("BACKWARD", parsed(new), [PreviousVersion(1, parsed(old))])
    assert messages and 'TYPE_CHANGED' in messages[0]
    assert compatibility.check("BACKWARD", parsed(old), [PreviousVersion(1, parsed(old))]) == []


def test_forward_closed_model_property_added_is_the_reverse_removal():
    old = obj({"a": STRING}, additional=False)
    new = obj({"a": STRING, "b": INTEGER}, additional=False)
    assert "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL" in compatibility.check(
        "FORWARD", parsed(new), [PreviousVersion(1, parsed(old))])[0]
