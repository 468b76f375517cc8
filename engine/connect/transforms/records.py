"""A record's key or value, read and rewritten, for the transforms that change one of them
(`which`: "key" or "value"; the `$Key` and `$Value` variants of a class).

Keys and values without a schema are dicts (Connect's Map); with a schema, a value is a dict
under a Connect struct schema
(`{"type": "struct", "fields": [{"field": "id", "type": "int32", "optional": false}]}`), and a
transform that changes the fields changes the schema with them. A transform refuses what it
cannot read with Kafka's DataError texts: a schema that is not a struct ("Only Struct objects
supported"), a schemaless value that is not a map ("Only Map objects supported in absence of
schema"). A struct field's null reads as its schema's `default` when the transform's
`replace.null.with.default` says so (REPLACE_NULL, the key spec those transforms share).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from engine.connect.api import DataError
from engine.connect.config_def import BOOLEAN


def part(record, which: str) -> tuple[dict | None, Any]:
    return (record.key_schema, record.key) if which == "key" else (record.value_schema, record.value)


def with_part(record, which: str, schema: dict | None, value: Any):
    if which == "key":
        return dataclasses.replace(record, key_schema=schema, key=value)
    return dataclasses.replace(record, value_schema=schema, value=value)


def struct_fields(schema: dict | None) -> list[dict] | None:
    """A struct schema's fields, None without a schema; DataError for a schema of another type."""
    if schema is None:
        return None
    if schema.get("type") != "struct":
        raise DataError(f"Only Struct objects supported, found a {schema.get('type')} schema")
    return list(schema.get("fields") or [])


def as_map(value: Any, purpose: str) -> dict:
    if not isinstance(value, dict):
        raise DataError(f"Only Map objects supported in absence of schema for [{purpose}], found: "
                        f"{type(value).__name__}")
    return value


REPLACE_NULL = ("replace.null.with.default", "Whether to replace fields that have a default value and that are null "
                 "to the default value. When set to true, the default value is used, otherwise null is used.", BOOLEAN)


def field_value(value: dict, field: dict, replace_null: bool) -> Any:
    """A struct field's value; a null one is the field's `default` when `replace_null`, as
    Connect's Struct.get (and null as getWithoutDefault otherwise)."""
    found = value.get(field["field"])
    return field.get("default") if found is None and replace_null else found
