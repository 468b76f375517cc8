"""The transforms of a record's headers: InsertHeader adds `header` with `value.literal`,
DropHeaders removes every header named in `headers`, and HeaderFrom (`$Key`, `$Value`) copies or
moves the key's or value's fields into headers.

Headers travel as bytes here (name, value) in the record's order; a header added is appended,
and one already there with the same name stays. A field becomes a header's bytes as Connect's
default header converter (SimpleHeaderConverter) writes it (header_bytes): text in UTF-8,
numbers and booleans as Java prints them, bytes in base64, lists and maps in brackets and braces,
dates in ISO 8601. Gap: the header keeps no schema, so a Connect header's type is not carried.
"""
from __future__ import annotations

import base64
import dataclasses
import datetime
from typing import Any

from engine.connect.api import DataError
from engine.connect.config_def import LIST, STRING
from engine.connect.date_format import LOGICAL_TYPES, is_int, iso_text, logical_millis, moment
from engine.connect.transforms.base import Transform, TransformConfigError, props_boolean, props_choice, props_list
from engine.connect.transforms.records import REPLACE_NULL, as_map, field_value, part, struct_fields, with_part


class InsertHeader(Transform):
    keys = (("header", "The name of the header.", STRING, True),
            ("value.literal", "The literal value that is to be set as the header value on all records.", STRING, True))

    def configure(self, props):
        super().configure(props)
        self.header = str(props["header"])
        self.value = str(props["value.literal"]).encode()

    def apply(self, record):
        return dataclasses.replace(record, headers=[*record.headers, (self.header, self.value)])


class DropHeaders(Transform):
    keys = (("headers", "The name of the headers to be removed.", LIST, True),)

    def configure(self, props):
        super().configure(props)
        self.names = set(props_list(props, "headers"))

    def apply(self, record):
        return dataclasses.replace(record, headers=[(k, v) for k, v in record.headers if k not in self.names])


def header_bytes(value: Any, schema: dict | None) -> bytes | None:
    """A header's value as Connect's default header converter (SimpleHeaderConverter) writes it:
    UTF-8 text, None for null. An int under a Date, Time or Timestamp schema is that date."""
    if value is None:
        return None
    if schema is not None and schema.get("name") in LOGICAL_TYPES and is_int(value):
        value = moment(logical_millis(value, LOGICAL_TYPES[schema["name"]]))
    return _header_text(value, embedded=False).encode()


def _header_text(value: Any, embedded: bool) -> str:
    """Connect's Values.convertToString: numbers and booleans as Java prints them, bytes as
    base64, lists, maps and structs in brackets and braces with their strings quoted, dates in
    ISO 8601."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (str, bytes, bytearray)):
        text = value if isinstance(value, str) else base64.b64encode(bytes(value)).decode()
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"' if embedded else text
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_header_text(v, True) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_header_text(k, True)}:{_header_text(v, True)}" for k, v in value.items()) + "}"
    if isinstance(value, (datetime.date, datetime.time)):
        return iso_text(logical_millis(value, "Timestamp"))
    raise DataError(f"Failed to serialize unexpected value type {type(value).__name__}: {value!r}"[:300])


class HeaderFrom(Transform):
    """Kafka's HeaderFrom: copies or moves the key's/value's `fields` into the `headers` named in
    the same order (appended; a header already there stays). Headers travel as bytes here, so a
    header holds the field as header_bytes writes it, its schema used for dates only."""

    keys = (("fields", "Field names in the record whose values are to be copied or moved to headers.", LIST, True),
            ("headers", "Header names, in the same order as the field names listed in the fields configuration "
             "property.", LIST, True),
            ("operation", "Either move if the fields are to be moved to the headers (removed from the key/value), "
             "or copy if the fields are to be copied to the headers (retained in the key/value).", STRING, True),
            REPLACE_NULL)

    def configure(self, props):
        super().configure(props)
        self.fields, self.headers = props_list(props, "fields"), props_list(props, "headers")
        if len(self.fields) != len(self.headers):
            raise TransformConfigError("'fields' config must have the same number of elements as 'headers' config.")
        self.operation = props_choice(props, "operation", ("move", "copy"))
        self.replace_null = props_boolean(props, "replace.null.with.default", True)

    def apply(self, record):
        schema, value = part(record, self.which)
        fields = struct_fields(schema)
        if fields is None:
            schema, value, added = self._schemaless(as_map(value, f"header {self.operation}"))
        else:
            schema, value, added = self._with_schema(schema, fields, value)
        return dataclasses.replace(with_part(record, self.which, schema, value), headers=[*record.headers, *added])

    def _schemaless(self, value: dict) -> tuple[None, dict, list]:
        added = [(header, header_bytes(value.get(name), None)) for name, header in zip(self.fields, self.headers)]
        if self.operation == "move":
            value = {k: v for k, v in value.items() if k not in self.fields}
        return None, dict(value), added

    def _with_schema(self, schema: dict, fields: list[dict], value: Any) -> tuple[dict, dict, list]:
        if not isinstance(value, dict):
            raise DataError(f"Only Struct objects supported for [header {self.operation}], found: "
                            f"{type(value).__name__}")
        by_name = {f["field"]: f for f in fields}
        added = []
        for name, header in zip(self.fields, self.headers):
            if name not in by_name:
                raise DataError(f"{name} is not a valid field name")
            added.append((header, header_bytes(field_value(value, by_name[name], self.replace_null), by_name[name])))
        if self.operation == "move":
            kept = [f for f in fields if f["field"] not in self.fields]
            schema, value = {**schema, "fields": kept}, {f["field"]: field_value(value, f, self.replace_null)
                                                         for f in kept}
        return schema, value, added
