"""AVRO schemas, parsed by fastavro.

References name Avro types by their full names: each referenced schema is parsed first
into the same table of named types, so the schema may use them as it uses its own.
fastavro checks names, types and defaults (a default must match its field's type, the
first branch of a union); its errors become Confluent's 42201 with fastavro's sentence.

The canonical form (what identifies a schema) is the parsed schema written with full
names, attributes in a fixed order and no whitespace, so two texts that differ only in
layout, attribute order or namespace spelling are one schema. It keeps what matters to
readers (defaults, aliases, doc and custom properties), unlike Avro's Parsing Canonical Form.
"""
from __future__ import annotations

import json
from typing import Any

from fastavro.schema import SchemaParseException, UnknownType, parse_schema

from engine.schema_registry.schemas.base import (InvalidSchema, ParsedSchema, Reference, SchemaType,
                                                 in_dependency_order)

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
# Avro's own attribute order (Schema.toString in the Java library), then anything else sorted.
ORDER = ("type", "name", "namespace", "doc", "fields", "symbols", "items", "values", "size", "default",
         "order", "aliases", "logicalType", "precision", "scale")
FIELD_ORDER = ("name", "type", "doc", "default", "order", "aliases")


class AvroModel:
    """The fastavro-parsed schema and the table of named types it and its references define."""

    def __init__(self, parsed: Any, named: dict[str, Any]) -> None:
        self.parsed = parsed
        self.named = named

    def resolve(self, schema: Any) -> Any:
        """A named type's definition for its name; anything else as it is."""
        if isinstance(schema, str) and schema not in PRIMITIVES:
            return self.named.get(schema, schema)
        return schema

    def fastavro_schema(self) -> Any:
        return self.parsed


def parse(text: str, references: tuple[Reference, ...], dependencies: dict[str, ParsedSchema],
          normalize: bool = False) -> ParsedSchema:
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidSchema(f"Invalid schema {_short(text)}: {exc}") from None
    named: dict[str, Any] = {}
    for _, dependency in in_dependency_order(dependencies):
        if dependency.schema_type is not SchemaType.AVRO:
            raise InvalidSchema("An Avro schema can only reference Avro schemas")
        named.update(dependency.model.named)
    try:
        parsed = parse_schema(document, named_schemas=named, _write_hint=False)
    except UnknownType as exc:
        raise InvalidSchema(f"Invalid schema {_short(text)}: unknown type {exc.name!r} (no such named type, "
                            "and no reference names it)") from None
    except (SchemaParseException, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        raise InvalidSchema(f"Invalid schema {_short(text)}: {exc}") from None
    model = AvroModel(parsed, named)
    canonical = normalized_text(parsed)
    stored = canonical if normalize else compact(document)
    return ParsedSchema(SchemaType.AVRO, stored, canonical, references, dependencies, model)


def compact(document: Any) -> str:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def normalized_text(parsed: Any) -> str:
    return compact(_normalize(parsed, set()))


def _normalize(schema: Any, seen: set[str]) -> Any:
    """Full names, fixed attribute order, each named type defined once (later uses by name)."""
    if isinstance(schema, str):
        return schema
    if isinstance(schema, list):
        return [_normalize(branch, seen) for branch in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and kind in PRIMITIVES and len(schema) == 1:
        return kind
    name = schema.get("name") if kind in ("record", "error", "enum", "fixed") else None
    if name is not None:
        if name in seen:
            return name
        seen.add(name)
    out: dict[str, Any] = {}
    for key in sorted(schema, key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k)):
        value = schema[key]
        if key.startswith("__fastavro"):
            continue
        if key == "fields":
            value = [_normalize_field(f, seen) for f in value]
        elif key in ("items", "values") or (key == "type" and not isinstance(value, str)):
            value = _normalize(value, seen)
        out[key] = value
    return out


def _normalize_field(field: dict, seen: set[str]) -> dict:
    out = {}
    for key in sorted(field, key=lambda k: (FIELD_ORDER.index(k) if k in FIELD_ORDER else len(FIELD_ORDER), k)):
        out[key] = _normalize(field[key], seen) if key == "type" else field[key]
    return out


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:200] + "..."
