"""How Confluent's JSON Schema checks (everit's model) see a schema node: its kind (string,
number, object, combined ...) and its content model (open, closed, partially open)."""
from __future__ import annotations

from typing import Any

OBJECT_WORDS = ("properties", "required", "additionalProperties", "patternProperties", "minProperties",
                "maxProperties", "dependencies", "propertyNames")
ARRAY_WORDS = ("items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains")
STRING_WORDS = ("minLength", "maxLength", "pattern", "format")
NUMBER_WORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
COMBINERS = ("allOf", "anyOf", "oneOf")


def schema_kind(schema: Any) -> tuple[str, Any]:
    """The kind of a schema node (as the everit model Confluent uses sees it) and its content."""
    if schema is True or schema == {}:
        return "empty", schema
    if schema is False:
        return "false", schema
    if not isinstance(schema, dict):
        return "empty", schema
    for word in COMBINERS:
        if isinstance(schema.get(word), list):
            return "combined", (word, schema[word])
    if "enum" in schema:
        return "enum", schema
    if "const" in schema:
        return "const", schema
    if "not" in schema:
        return "not", schema
    kind = schema.get("type")
    if isinstance(kind, list):
        if len(kind) == 1:
            kind = kind[0]
        else:
            return "combined", ("anyOf", [{**schema, "type": k} for k in kind])
    if isinstance(kind, str):
        return ("number" if kind == "number" else kind), schema
    for words, name in ((OBJECT_WORDS, "object"), (ARRAY_WORDS, "array"), (STRING_WORDS, "string"),
                        (NUMBER_WORDS, "number")):
        if any(w in schema for w in words):
            return name, schema
    return "empty", schema


def is_open(schema: dict, word: str, pattern_word: str | None = None) -> bool:
    value = schema.get(word, True)
    if pattern_word and schema.get(pattern_word):
        return False
    return value is True or value == {}


def partial_schema(schema: dict, word: str) -> Any:
    value = schema.get(word)
    return value if isinstance(value, dict) and value != {} else None


def schema_of(value: Any) -> Any:
    return value if isinstance(value, dict) and value != {} else None


def has_default(schema: Any) -> bool:
    return isinstance(schema, dict) and "default" in schema
