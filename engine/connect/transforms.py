"""Single message transforms and predicates (KIP-66, KIP-585): Kafka Connect's built-in ones,
by their class names, applied in order to each record of a task.

A source record is transformed after `poll()` and before the converters; a sink record after
the converters and before `put()`. A transform that returns None drops the record: a source
record is not sent (its offset is still committed), a sink record is not put (its offset is
committed as consumed). A transform that fails fails the task, or with `errors.tolerance=all`
drops the record and logs it.

The connector's config, as Connect's:

    transforms=route,mask
    transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
    transforms.route.regex=(.*)-raw
    transforms.route.replacement=$1
    transforms.mask.type=org.apache.kafka.connect.transforms.MaskField$Value
    transforms.mask.fields=ssn
    transforms.mask.predicate=is-users
    transforms.mask.negate=false
    predicates=is-users
    predicates.is-users.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches
    predicates.is-users.pattern=users.*

Class names are Kafka's; the simple name (`RegexRouter`, `MaskField$Value`) is an alias, as
Connect's plugin aliases are. Keys and values without a schema are dicts (Connect's Map); with
a schema, a value is a dict under a Connect struct schema
(`{"type": "struct", "fields": [{"field": "id", "type": "int32", "optional": false}]}`), and a
transform that changes the fields changes the schema with them.

Built in: InsertField, ReplaceField, MaskField, ExtractField, HoistField, Flatten, Cast,
TimestampConverter, SetSchemaMetadata, HeaderFrom (each `$Key` and `$Value`), ValueToKey,
RegexRouter, TimestampRouter, Filter, InsertHeader, DropHeaders; the predicates
TopicNameMatches, HasHeaderKey and RecordIsTombstone. Not built in: custom transform classes.
Date patterns (`format`, `timestamp.format`) are SimpleDateFormat's, in UTC, with the letters
engine/connect/date_format.py reads.
"""
from __future__ import annotations

import base64
import dataclasses
import datetime
import re
from typing import Any, Callable

from engine.connect.api import DataError
from engine.connect.config_def import BOOLEAN, INT, LIST, LOW, MEDIUM, STRING, ConfigDef
from engine.connect.date_format import (DAY_MS, LOGICAL_TYPES, TIMESTAMP_TYPES, DateFormat, DateFormatError, clock,
                                        is_int, iso_text, logical_millis, millis, moment, schema_timestamp_type,
                                        timestamp_schema, value_timestamp_type)

TRANSFORMS_PACKAGE = "org.apache.kafka.connect.transforms."
PREDICATES_PACKAGE = TRANSFORMS_PACKAGE + "predicates."


class TransformConfigError(ValueError):
    """A transform or predicate config Connect would refuse (the connector's 400)."""


class TransformError(DataError):
    """A transform failed on a record; `class_name` is the transform's (Kafka's name)."""

    def __init__(self, message: str, class_name: str) -> None:
        super().__init__(message)
        self.class_name = class_name


# --- records --------------------------------------------------------------------------------

def _part(record, which: str) -> tuple[dict | None, Any]:
    return (record.key_schema, record.key) if which == "key" else (record.value_schema, record.value)


def _with_part(record, which: str, schema: dict | None, value: Any):
    if which == "key":
        return dataclasses.replace(record, key_schema=schema, key=value)
    return dataclasses.replace(record, value_schema=schema, value=value)


def _fields(schema: dict | None) -> list[dict] | None:
    """A struct schema's fields, None without a schema; DataError for a schema of another type."""
    if schema is None:
        return None
    if schema.get("type") != "struct":
        raise DataError(f"Only Struct objects supported, found a {schema.get('type')} schema")
    return list(schema.get("fields") or [])


def _as_map(value: Any, purpose: str) -> dict:
    if not isinstance(value, dict):
        raise DataError(f"Only Map objects supported in absence of schema for [{purpose}], found: "
                        f"{type(value).__name__}")
    return value


def _props_list(props: dict, key: str) -> list[str]:
    return [item.strip() for item in str(props.get(key) or "").split(",") if item.strip()]


def _java_replacement(replacement: str) -> str:
    """Java's `$1` group references as Python's `\\g<1>`."""
    return re.sub(r"\$(\d+)", r"\\g<\1>", replacement.replace("\\", "\\\\"))


# --- transforms -----------------------------------------------------------------------------

class _Configured:
    """A transform or predicate with its config keys, `keys`: (name, documentation[, type,
    required]), which Connect's validation lists; `configure` refuses a required one left empty."""

    keys: tuple[tuple, ...] = ()

    def configure(self, props: dict[str, str]) -> None:
        for spec in self.keys:
            if len(spec) > 3 and spec[3] and not str(props.get(spec[0]) or "").strip():
                raise TransformConfigError(f"Missing required configuration \"{spec[0]}\" which has no default "
                                           "value.")


def _pattern(props: dict[str, str], key: str) -> re.Pattern:
    """A regex config compiled (Java's syntax reads the same for the usual patterns)."""
    try:
        return re.compile(props[key])
    except re.error as exc:
        raise TransformConfigError(f"Invalid value {props[key]} for configuration {key}: {exc}") from None


def _date_format(props: dict[str, str], key: str) -> DateFormat | None:
    """A SimpleDateFormat config as a DateFormat; None when blank."""
    pattern = props.get(key) or ""
    if not pattern.strip():
        return None
    try:
        return DateFormat(pattern)
    except DateFormatError as exc:
        raise TransformConfigError(f"Invalid value {pattern} for configuration {key}: {exc}") from None


def _choice(props: dict[str, str], key: str, choices: tuple[str, ...], default: str | None = None) -> str:
    """A string config that must be one of `choices` (case matters, as in Kafka's ValidString)."""
    value = str(props.get(key) or "").strip() or default
    if value not in choices:
        raise TransformConfigError(f"Invalid value {value} for configuration {key}: String must be one of: "
                                   f"{', '.join(choices)}")
    return value


def _boolean(props: dict[str, str], key: str, default: bool) -> bool:
    text = str(props.get(key) or "").strip().lower() or str(default).lower()
    if text not in ("true", "false"):
        raise TransformConfigError(f"Invalid value {props.get(key)} for configuration {key}: Expected value to be "
                                   "either true or false")
    return text == "true"


def _integer(props: dict[str, str], key: str) -> int | None:
    text = str(props.get(key) or "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise TransformConfigError(f"Invalid value {text} for configuration {key}: Not a number of type INT") from None


_REPLACE_NULL = ("replace.null.with.default", "Whether to replace fields that have a default value and that are null "
                 "to the default value. When set to true, the default value is used, otherwise null is used.", BOOLEAN)


def _field_value(value: dict, field: dict, replace_null: bool) -> Any:
    """A struct field's value; a null one is the field's `default` when `replace_null`, as
    Connect's Struct.get (and null as getWithoutDefault otherwise)."""
    found = value.get(field["field"])
    return field.get("default") if found is None and replace_null else found


class Transform(_Configured):
    """One transform: `configure` checks and keeps its config, `apply` returns the new record or None."""

    def __init__(self, which: str = "value") -> None:
        self.which = which

    def apply(self, record):
        raise NotImplementedError


class InsertField(Transform):
    keys = (("topic.field", "Field name for Kafka topic."), ("partition.field", "Field name for Kafka partition."),
            ("offset.field", "Field name for Kafka offset - only applicable to sink connectors."),
            ("timestamp.field", "Field name for record timestamp."),
            ("static.field", "Field name for static data field."),
            ("static.value", "Static field value, if field name configured."))

    def configure(self, props):
        super().configure(props)
        self.inserts = {source: _field_name(props.get(f"{source}.field"))
                        for source in ("topic", "partition", "offset", "timestamp", "static")}
        self.static_value = props.get("static.value")
        if self.inserts["static"] and self.static_value is None:
            raise TransformConfigError("static.value is required with static.field")

    def apply(self, record):
        schema, value = _part(record, self.which)
        values = {
            "topic": ({"type": "string", "optional": False}, record.topic),
            "partition": ({"type": "int32", "optional": True},
                          getattr(record, "kafka_partition", getattr(record, "partition", None))),
            "offset": ({"type": "int64", "optional": True}, getattr(record, "kafka_offset", None)),
            "timestamp": ({"type": "int64", "optional": True, "name": "org.apache.kafka.connect.data.Timestamp"},
                          record.timestamp),
            "static": ({"type": "string", "optional": True}, self.static_value),
        }
        fields = _fields(schema)
        updated = dict(_as_map(value, "field insertion")) if fields is None else dict(value or {})
        for source, name in self.inserts.items():
            if not name:
                continue
            field_schema, inserted = values[source]
            if source == "offset" and inserted is None:
                raise DataError("Only applicable to records with an offset (sink records): offset.field")
            updated[name] = inserted
            if fields is not None:
                fields = [f for f in fields if f.get("field") != name] + [{"field": name, **field_schema}]
        new_schema = None if fields is None else {**schema, "fields": fields}
        return _with_part(record, self.which, new_schema, updated)


def _field_name(raw: str | None) -> str:
    """Kafka's optional `!` (required) and `?` (optional) suffixes are dropped."""
    name = str(raw or "").strip()
    return name[:-1] if name.endswith(("!", "?")) else name


class ReplaceField(Transform):
    keys = (("exclude", "Fields to exclude. This takes precedence over the fields to include.", LIST),
            ("include", "Fields to include. If specified, only these fields will be used.", LIST),
            ("renames", "Field rename mappings.", LIST))

    def configure(self, props):
        super().configure(props)
        self.exclude = set(_props_list(props, "exclude") or _props_list(props, "blacklist"))
        self.include = set(_props_list(props, "include") or _props_list(props, "whitelist"))
        self.renames = {}
        for pair in _props_list(props, "renames"):
            old, sep, new = pair.partition(":")
            if not sep or not old.strip() or not new.strip():
                raise TransformConfigError(f"Invalid rename mapping: {pair} (use old:new)")
            self.renames[old.strip()] = new.strip()

    def _kept(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def apply(self, record):
        schema, value = _part(record, self.which)
        fields = _fields(schema)
        if value is None:
            return record
        source = _as_map(value, "field replacement") if fields is None else value
        updated = {self.renames.get(k, k): v for k, v in source.items() if self._kept(k)}
        new_schema = None if fields is None else {**schema, "fields": [
            {**f, "field": self.renames.get(f["field"], f["field"])} for f in fields if self._kept(f["field"])]}
        return _with_part(record, self.which, new_schema, updated)


_MASKED = {"string": "", "int8": 0, "int16": 0, "int32": 0, "int64": 0, "float": 0.0, "double": 0.0,
           "boolean": False, "bytes": b""}


class MaskField(Transform):
    keys = (("fields", "Names of fields to mask.", LIST, True),
            ("replacement", "Custom value replacement, that will be applied to all 'fields' values."))

    def configure(self, props):
        super().configure(props)
        self.fields = set(_props_list(props, "fields"))
        self.replacement = props.get("replacement")

    def _mask(self, current: Any, field_type: str | None) -> Any:
        if self.replacement is not None:
            return self.replacement
        if field_type in _MASKED:
            return _MASKED[field_type]
        return {str: "", bool: False, int: 0, float: 0.0, bytes: b""}.get(type(current), None)

    def apply(self, record):
        schema, value = _part(record, self.which)
        if value is None:
            return record
        fields = _fields(schema)
        types = {} if fields is None else {f["field"]: f.get("type") for f in fields}
        source = _as_map(value, "masking") if fields is None else value
        updated = {k: (self._mask(v, types.get(k)) if k in self.fields else v) for k, v in source.items()}
        return _with_part(record, self.which, schema, updated)


class _OneField(Transform):
    """A transform of one named field (`field`, required in its `keys`)."""


    def configure(self, props):
        super().configure(props)
        self.field = str(props["field"]).strip()


class ExtractField(_OneField):
    keys = (("field", "Field name to extract.", STRING, True),)

    def apply(self, record):
        schema, value = _part(record, self.which)
        fields = _fields(schema)
        if value is None:
            return record
        source = _as_map(value, "field extraction") if fields is None else value
        field_schema = None if fields is None else next((f for f in fields if f["field"] == self.field), None)
        if fields is not None and field_schema is None:
            raise DataError(f"{self.field} is not a valid field name")
        extracted = {k: v for k, v in (field_schema or {}).items() if k != "field"} or None
        return _with_part(record, self.which, extracted, source.get(self.field))


class HoistField(_OneField):
    keys = (("field", "Field name for the single field that will be created in the resulting Struct or Map.",
             STRING, True),)

    def apply(self, record):
        schema, value = _part(record, self.which)
        new_schema = None if schema is None else {"type": "struct", "optional": False,
                                                  "fields": [{"field": self.field, **schema}]}
        return _with_part(record, self.which, new_schema, {self.field: value})


class ValueToKey(Transform):
    keys = (("fields", "Field names on the record value to extract as the record key.", LIST, True),)

    def configure(self, props):
        super().configure(props)
        self.fields = _props_list(props, "fields")

    def apply(self, record):
        fields = _fields(record.value_schema)
        source = _as_map(record.value, "copying fields from value to key") if fields is None else record.value
        key = {name: source.get(name) for name in self.fields}
        key_schema = None
        if fields is not None:
            by_name = {f["field"]: f for f in fields}
            missing = [n for n in self.fields if n not in by_name]
            if missing:
                raise DataError(f"Field does not exist: {missing[0]}")
            key_schema = {"type": "struct", "optional": False, "fields": [by_name[n] for n in self.fields]}
        return dataclasses.replace(record, key_schema=key_schema, key=key)


class RegexRouter(Transform):
    keys = (("regex", "Regular expression to use for matching.", STRING, True),
            ("replacement", "Replacement string.", STRING, True))

    def configure(self, props):
        super().configure(props)
        self.regex = _pattern(props, "regex")
        self.replacement = _java_replacement(props["replacement"])

    def apply(self, record):
        if self.regex.fullmatch(record.topic):
            return dataclasses.replace(record, topic=self.regex.sub(self.replacement, record.topic, count=1))
        return record


class TimestampRouter(Transform):
    keys = (("topic.format", "Format string which can contain ${topic} and ${timestamp} as placeholders for the "
             "topic and timestamp, respectively."),
            ("timestamp.format", "Format string for the timestamp that is compatible with java.text.SimpleDateFormat."))

    def configure(self, props):
        super().configure(props)
        self.topic_format = props.get("topic.format") or "${topic}-${timestamp}"
        self.format = _date_format(props, "timestamp.format") or DateFormat("yyyyMMdd")

    def apply(self, record):
        if record.timestamp is None:
            raise DataError(f"Timestamp missing on record: {record!r}"[:300])
        topic = self.topic_format.replace("${topic}", record.topic).replace(
            "${timestamp}", self.format.format(moment(record.timestamp)))
        return dataclasses.replace(record, topic=topic)


class Flatten(Transform):
    keys = (("delimiter", "Delimiter to insert between field names from the input record when generating field "
             "names for the output record"),)

    def configure(self, props):
        super().configure(props)
        self.delimiter = props.get("delimiter") or "."

    def apply(self, record):
        schema, value = _part(record, self.which)
        if value is None:
            return record
        fields = _fields(schema)
        flat: dict = {}
        self._flatten(_as_map(value, "flattening") if fields is None else value, "", flat)
        new_schema = None
        if fields is not None:
            flat_fields: list[dict] = []
            self._flatten_schema(fields, "", False, flat_fields)
            new_schema = {**schema, "fields": flat_fields}
        return _with_part(record, self.which, new_schema, flat)

    def _flatten(self, value: dict, prefix: str, out: dict) -> None:
        for key, inner in value.items():
            name = f"{prefix}{self.delimiter}{key}" if prefix else str(key)
            if isinstance(inner, dict):
                self._flatten(inner, name, out)
            else:
                out[name] = inner

    def _flatten_schema(self, fields: list[dict], prefix: str, optional: bool, out: list[dict]) -> None:
        for field in fields:
            name = f"{prefix}{self.delimiter}{field['field']}" if prefix else field["field"]
            inner_optional = optional or bool(field.get("optional"))
            if field.get("type") == "struct":
                self._flatten_schema(list(field.get("fields") or []), name, inner_optional, out)
            else:
                out.append({**field, "field": name, "optional": inner_optional})


_CASTS: dict[str, Callable[[Any], Any]] = {
    "int8": int, "int16": int, "int32": int, "int64": int, "float32": float, "float64": float,
    "boolean": lambda v: v if isinstance(v, bool) else str(v).strip().lower() == "true" if isinstance(v, str)
    else bool(v),
    "string": lambda v: ("true" if v else "false") if isinstance(v, bool) else str(v),
}
_SCHEMA_TYPES = {"float32": "float", "float64": "double"}


class Cast(Transform):
    keys = (("spec", "List of fields and the type to cast them to of the form field1:type,field2:type to cast "
             "fields of Maps or Structs. A single type to cast the entire value.", LIST, True),)

    def configure(self, props):
        super().configure(props)
        self.whole: str | None = None
        self.casts: dict[str, str] = {}
        for item in _props_list(props, "spec"):
            field, sep, type_name = item.rpartition(":")
            type_name = type_name.strip().lower()
            if type_name not in _CASTS:
                raise TransformConfigError(f"Invalid value {item} for configuration spec: the types are "
                                           f"{', '.join(_CASTS)}")
            if sep:
                self.casts[field.strip()] = type_name
            else:
                self.whole = type_name
        if self.whole and self.casts:
            raise TransformConfigError("Cast to a whole value and to fields cannot be mixed in spec")

    def _cast(self, value: Any, type_name: str) -> Any:
        if value is None:
            return None
        try:
            return _CASTS[type_name](value)
        except (TypeError, ValueError):
            raise DataError(f"Cannot cast {value!r} to {type_name}") from None

    def apply(self, record):
        schema, value = _part(record, self.which)
        if self.whole:
            new_schema = None if schema is None else {**schema, "type": _SCHEMA_TYPES.get(self.whole, self.whole)}
            return _with_part(record, self.which, new_schema, self._cast(value, self.whole))
        if value is None:
            return record
        fields = _fields(schema)
        source = _as_map(value, "casting") if fields is None else value
        updated = {k: (self._cast(v, self.casts[k]) if k in self.casts else v) for k, v in source.items()}
        new_schema = None if fields is None else {**schema, "fields": [
            {**f, "type": _SCHEMA_TYPES.get(self.casts[f["field"]], self.casts[f["field"]])}
            if f["field"] in self.casts else f for f in fields]}
        return _with_part(record, self.which, new_schema, updated)


class Filter(Transform):
    def apply(self, record):
        return None


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
        self.names = set(_props_list(props, "headers"))

    def apply(self, record):
        return dataclasses.replace(record, headers=[(k, v) for k, v in record.headers if k not in self.names])


# --- timestamps, schema metadata, headers from fields ----------------------------------------

# unix.precision: (multiplier, divisor) from the unit to milliseconds.
_UNIX_PRECISIONS = {"seconds": (1000, 1), "milliseconds": (1, 1), "microseconds": (1, 1000),
                    "nanoseconds": (1, 1_000_000)}
_CONVERTING = "converting timestamp formats"
_FORMAT_REQUIRED = "TimestampConverter requires format option to be specified when using string timestamps"


def _truncated(numerator: int, denominator: int) -> int:
    """Integer division toward zero, as Java's TimeUnit conversions do."""
    quotient = abs(numerator) // denominator
    return quotient if numerator >= 0 else -quotient


class TimestampConverter(Transform):
    """Kafka's TimestampConverter: the whole key/value, or its `field`, from its timestamp type to
    `target.type`. The input type is the schema's (a Date, Time or Timestamp logical schema, a
    string, an int64 as unix time) or, without a schema, the value's (datetime, date, time, int,
    str). An instant is held in milliseconds, as Java's Date: unix micro- and nanoseconds lose
    their finer digits. With a schema, Date, Time and Timestamp are written in the JSON
    converter's encoding (epoch days, ms of day, epoch ms) under their logical schema; without
    one, as a date, a time of day and a UTC datetime, so that the value says its type."""

    keys = (("field", "The field containing the timestamp, or empty if the entire value is a timestamp"),
            ("target.type", "The desired timestamp representation: string, unix, Date, Time, or Timestamp", STRING,
             True),
            ("format", "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when "
             "type=string or used to parse the input if the input is a string."),
            ("unix.precision", "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, "
             "or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input "
             "is a Long."),
            _REPLACE_NULL)

    def configure(self, props):
        super().configure(props)
        self.field = str(props.get("field") or "").strip()
        self.target = _choice(props, "target.type", TIMESTAMP_TYPES)
        self.precision = _UNIX_PRECISIONS[_choice(props, "unix.precision", tuple(_UNIX_PRECISIONS), "milliseconds")]
        self.format = _date_format(props, "format")
        if self.target == "string" and self.format is None:
            raise TransformConfigError(_FORMAT_REQUIRED)
        self.replace_null = _boolean(props, "replace.null.with.default", True)

    def apply(self, record):
        schema, value = _part(record, self.which)
        if schema is None:
            return _with_part(record, self.which, None, self._schemaless(value))
        if not self.field:
            converted = self._convert(value, schema_timestamp_type(schema), typed=True)
            return _with_part(record, self.which, timestamp_schema(self.target, bool(schema.get("optional"))),
                              converted)
        fields = _fields(schema)
        new_schema = {**schema, "fields": [
            {"field": f["field"], **timestamp_schema(self.target, bool(f.get("optional")))}
            if f["field"] == self.field else f for f in fields]}
        if schema.get("default") is not None:
            new_schema["default"] = self._struct(schema["default"], fields)
        return _with_part(record, self.which, new_schema, self._struct(value, fields))

    def _schemaless(self, value: Any) -> Any:
        if value is None or not self.field:
            return self._convert(value, None, typed=False)
        updated = dict(_as_map(value, _CONVERTING))
        updated[self.field] = self._convert(updated.get(self.field), None, typed=False)
        return updated

    def _struct(self, value: Any, fields: list[dict]) -> dict | None:
        """A struct's fields (those of its schema), the one named `field` converted."""
        if value is None:
            return None
        if not isinstance(value, dict):
            raise DataError(f"Only Struct objects supported for [{_CONVERTING}], found: {type(value).__name__}")
        updated = {}
        for f in fields:
            found = _field_value(value, f, self.replace_null)
            updated[f["field"]] = (self._convert(found, schema_timestamp_type(f), typed=True)
                                   if f["field"] == self.field else found)
        return updated

    def _convert(self, value: Any, source: str | None, *, typed: bool) -> Any:
        """`value`, of timestamp type `source` (None: inferred from the value), as the target
        type: under a schema (`typed`) or not."""
        if value is None:
            return None
        return self._target(self._millis(value, source or value_timestamp_type(value)), typed)

    def _millis(self, value: Any, source: str) -> int:
        if source == "string":
            return self._parsed(value)
        if source != "unix":
            return logical_millis(value, source)
        if not is_int(value):
            raise DataError(f"Expected Unix timestamp to be an int, but found {type(value).__name__}")
        multiplier, divisor = self.precision
        return _truncated(value * multiplier, divisor)

    def _parsed(self, value: Any) -> int:
        if not isinstance(value, str):
            raise DataError(f"Expected string timestamp to be a str, but found {type(value).__name__}")
        if self.format is None:
            raise DataError(_FORMAT_REQUIRED)
        try:
            return millis(self.format.parse(value))
        except ValueError:
            raise DataError(f"Could not parse timestamp: value ({value}) does not match pattern "
                            f"({self.format.pattern})") from None

    def _target(self, ms: int, typed: bool) -> Any:
        if self.target == "string":
            return self.format.format(moment(ms))
        if self.target == "unix":
            multiplier, divisor = self.precision
            return _truncated(ms * divisor, multiplier)
        if self.target == "Date":
            return ms // DAY_MS if typed else moment(ms).date()
        if self.target == "Time":
            return ms % DAY_MS if typed else clock(ms)
        return ms if typed else moment(ms)


class SetSchemaMetadata(Transform):
    """Kafka's SetSchemaMetadata: the key's or value's schema gets `schema.name` and/or
    `schema.version`; its type and fields stay. A record with a key/value but no schema for it
    fails, as in Kafka; a null key/value without one passes."""

    keys = (("schema.name", "Schema name to set."), ("schema.version", "Schema version to set.", INT), _REPLACE_NULL)

    def configure(self, props):
        super().configure(props)
        self.name = str(props.get("schema.name") or "").strip() or None
        self.version = _integer(props, "schema.version")
        if self.name is None and self.version is None:
            raise TransformConfigError("Neither schema name nor version configured")
        self.replace_null = _boolean(props, "replace.null.with.default", True)

    def apply(self, record):
        schema, value = _part(record, self.which)
        if schema is None and value is None:
            return record
        if schema is None:
            raise DataError(f"Schema required for [updating schema metadata]: the record's {self.which} has no "
                            "schema (SetSchemaMetadata needs the converter's schemas)")
        updated = dict(schema)
        if self.name is not None:
            updated["name"] = self.name
        if self.version is not None:
            updated["version"] = self.version
        if schema.get("type") == "struct" and isinstance(value, dict):
            value = {f["field"]: _field_value(value, f, self.replace_null) for f in schema.get("fields") or []}
        return _with_part(record, self.which, updated, value)


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
            _REPLACE_NULL)

    def configure(self, props):
        super().configure(props)
        self.fields, self.headers = _props_list(props, "fields"), _props_list(props, "headers")
        if len(self.fields) != len(self.headers):
            raise TransformConfigError("'fields' config must have the same number of elements as 'headers' config.")
        self.operation = _choice(props, "operation", ("move", "copy"))
        self.replace_null = _boolean(props, "replace.null.with.default", True)

    def apply(self, record):
        schema, value = _part(record, self.which)
        fields = _fields(schema)
        if fields is None:
            schema, value, added = self._schemaless(_as_map(value, f"header {self.operation}"))
        else:
            schema, value, added = self._with_schema(schema, fields, value)
        return dataclasses.replace(_with_part(record, self.which, schema, value), headers=[*record.headers, *added])

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
            added.append((header, header_bytes(_field_value(value, by_name[name], self.replace_null), by_name[name])))
        if self.operation == "move":
            kept = [f for f in fields if f["field"] not in self.fields]
            schema, value = {**schema, "fields": kept}, {f["field"]: _field_value(value, f, self.replace_null)
                                                         for f in kept}
        return schema, value, added


# --- predicates -----------------------------------------------------------------------------

class Predicate(_Configured):
    def test(self, record) -> bool:
        raise NotImplementedError


class TopicNameMatches(Predicate):
    keys = (("pattern", "A Java regular expression for matching against the name of a record's topic.", STRING,
             True),)

    def configure(self, props):
        super().configure(props)
        self.pattern = _pattern(props, "pattern")

    def test(self, record) -> bool:
        return self.pattern.fullmatch(record.topic) is not None


class HasHeaderKey(Predicate):
    keys = (("name", "The header name.", STRING, True),)

    def configure(self, props):
        super().configure(props)
        self.name = str(props["name"])

    def test(self, record) -> bool:
        return any(k == self.name for k, _ in record.headers)


class RecordIsTombstone(Predicate):
    def test(self, record) -> bool:
        return record.value is None


def _both(cls) -> dict[str, Callable[[], Transform]]:
    name = cls.__name__
    return {f"{name}$Key": lambda: cls("key"), f"{name}$Value": lambda: cls("value")}


TRANSFORMS: dict[str, Callable[[], Transform]] = {
    **_both(InsertField), **_both(ReplaceField), **_both(MaskField), **_both(ExtractField), **_both(HoistField),
    **_both(Flatten), **_both(Cast), **_both(TimestampConverter), **_both(SetSchemaMetadata), **_both(HeaderFrom),
    "ValueToKey": ValueToKey, "RegexRouter": RegexRouter, "TimestampRouter": TimestampRouter, "Filter": Filter,
    "InsertHeader": InsertHeader, "DropHeaders": DropHeaders,
}
PREDICATES: dict[str, Callable[[], Predicate]] = {
    "TopicNameMatches": TopicNameMatches, "HasHeaderKey": HasHeaderKey, "RecordIsTombstone": RecordIsTombstone}


def _lookup(table: dict, package: str, class_name: str, what: str):
    name = class_name.strip()
    short = name[len(package):] if name.startswith(package) else name
    factory = table.get(short)
    if factory is None:
        raise TransformConfigError(f"Class {name} could not be found: this worker's {what} are "
                                   f"{', '.join(package + n for n in table)}")
    return factory()


def _scoped(props: dict[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}


@dataclasses.dataclass
class _Stage:
    alias: str
    class_name: str
    transform: Transform
    predicate: Predicate | None
    negate: bool


class TransformationChain:
    """A connector's transforms, configured from its config; `apply(record)` runs them in order."""

    def __init__(self, props: dict[str, str]) -> None:
        predicates = {}
        for alias in _props_list(props, "predicates"):
            scoped = _scoped(props, f"predicates.{alias}.")
            if not scoped.get("type"):
                raise TransformConfigError(f"Predicate {alias}: predicates.{alias}.type is not set")
            predicate = _lookup(PREDICATES, PREDICATES_PACKAGE, scoped["type"], "predicates")
            predicate.configure(scoped)
            predicates[alias] = predicate
        self.stages: list[_Stage] = []
        for alias in _props_list(props, "transforms"):
            scoped = _scoped(props, f"transforms.{alias}.")
            if not scoped.get("type"):
                raise TransformConfigError(f"Transform {alias}: transforms.{alias}.type is not set")
            transform = _lookup(TRANSFORMS, TRANSFORMS_PACKAGE, scoped["type"], "transforms")
            try:
                transform.configure(scoped)
            except TransformConfigError as exc:
                raise TransformConfigError(f"Transform {alias}: {exc}") from None
            predicate_alias = (scoped.get("predicate") or "").strip()
            if predicate_alias and predicate_alias not in predicates:
                raise TransformConfigError(f"Transform {alias}: predicate {predicate_alias} is not among the "
                                           "predicates")
            short = scoped["type"].strip().removeprefix(TRANSFORMS_PACKAGE)
            self.stages.append(_Stage(alias, TRANSFORMS_PACKAGE + short, transform, predicates.get(predicate_alias),
                                      str(scoped.get("negate", "false")).strip().lower() == "true"))

    def __bool__(self) -> bool:
        return bool(self.stages)

    def apply(self, record):
        """The transformed record, or None once a transform drops it. ConnectError names the
        transform that failed."""
        for stage in self.stages:
            if stage.predicate is not None and stage.predicate.test(record) == stage.negate:
                continue
            try:
                record = stage.transform.apply(record)
            except Exception as exc:
                raise TransformError(f"Transform {stage.alias} failed: {exc}", stage.class_name) from exc
            if record is None:
                return None
        return record


def enrich(definition: ConfigDef, props: dict[str, str]) -> None:
    """Connect's enriched ConfigDef: for each transform and predicate alias the config names, a
    group of its own ("Transforms: route") with its `type`, `predicate` and `negate` (transforms),
    and the keys of its class when the class is known, so that validation lists and checks them."""
    for kind, table, package, what in (("transforms", TRANSFORMS, TRANSFORMS_PACKAGE, "Transforms"),
                                       ("predicates", PREDICATES, PREDICATES_PACKAGE, "Predicates")):
        for alias in _props_list(props, kind):
            prefix, group = f"{kind}.{alias}.", f"{what}: {alias}"
            if prefix + "type" in definition.keys:
                continue
            definition.define(prefix + "type", STRING, importance=MEDIUM, group=group, order_in_group=0,
                              documentation=f"Class for the '{alias}' {kind[:-1]}.", display_name="Type")
            if kind == "transforms":
                definition.define(prefix + "predicate", STRING, "", MEDIUM, "The alias of a predicate used to "
                                  "determine whether to apply this transformation.", group=group, order_in_group=1,
                                  display_name="Predicate")
                definition.define(prefix + "negate", BOOLEAN, False, MEDIUM, "Whether the configured predicate "
                                  "should be negated.", group=group, order_in_group=2, display_name="Negate")
            class_name = str(props.get(prefix + "type") or "").strip()
            factory = table.get(class_name.removeprefix(package))
            if factory is None:
                continue
            for order, spec in enumerate(factory().keys, start=3):
                name, documentation = spec[0], spec[1]
                config_type = spec[2] if len(spec) > 2 else STRING
                required = len(spec) > 3 and spec[3]
                if required:
                    definition.define(prefix + name, config_type, importance=MEDIUM, documentation=documentation,
                                      group=group, order_in_group=order, display_name=name)
                else:
                    definition.define(prefix + name, config_type, None, LOW, documentation, group=group,
                                      order_in_group=order, display_name=name)
