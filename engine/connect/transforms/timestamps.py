"""TimestampConverter (`$Key`, `$Value`): a timestamp, the whole key/value or its `field`, from
its type to `target.type` (string, unix, Date, Time or Timestamp), the schema with it.

Date patterns (`format`) are SimpleDateFormat's, in UTC, with the letters
engine/connect/date_format.py reads; `format` is required to write a string and to read one.
`unix.precision` (milliseconds; seconds, microseconds, nanoseconds) reads and writes unix time.
Gap: an instant is held in milliseconds, as Java's Date, so unix micro- and nanoseconds lose
their finer digits.
"""
from __future__ import annotations

from typing import Any

from engine.connect.api import DataError
from engine.connect.config_def import STRING
from engine.connect.date_format import (DAY_MS, TIMESTAMP_TYPES, clock, is_int, logical_millis, millis, moment,
                                        schema_timestamp_type, timestamp_schema, value_timestamp_type)
from engine.connect.transforms.base import (Transform, TransformConfigError, props_boolean, props_choice,
                                            props_date_format)
from engine.connect.transforms.records import REPLACE_NULL, as_map, field_value, part, struct_fields, with_part


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
            REPLACE_NULL)

    def configure(self, props):
        super().configure(props)
        self.field = str(props.get("field") or "").strip()
        self.target = props_choice(props, "target.type", TIMESTAMP_TYPES)
        self.precision = _UNIX_PRECISIONS[props_choice(props, "unix.precision", tuple(_UNIX_PRECISIONS), "milliseconds")]
        self.format = props_date_format(props, "format")
        if self.target == "string" and self.format is None:
            raise TransformConfigError(_FORMAT_REQUIRED)
        self.replace_null = props_boolean(props, "replace.null.with.default", True)

    def apply(self, record):
        schema, value = part(record, self.which)
        if schema is None:
            return with_part(record, self.which, None, self._schemaless(value))
        if not self.field:
            converted = self._convert(value, schema_timestamp_type(schema), typed=True)
            return with_part(record, self.which, timestamp_schema(self.target, bool(schema.get("optional"))),
                              converted)
        fields = struct_fields(schema)
        new_schema = {**schema, "fields": [
            {"field": f["field"], **timestamp_schema(self.target, bool(f.get("optional")))}
            if f["field"] == self.field else f for f in fields]}
        if schema.get("default") is not None:
            new_schema["default"] = self._struct(schema["default"], fields)
        return with_part(record, self.which, new_schema, self._struct(value, fields))

    def _schemaless(self, value: Any) -> Any:
        if value is None or not self.field:
            return self._convert(value, None, typed=False)
        updated = dict(as_map(value, _CONVERTING))
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
            found = field_value(value, f, self.replace_null)
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
