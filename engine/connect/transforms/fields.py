"""The transforms of a key's or value's fields (each `$Key` and `$Value`), and ValueToKey:

- InsertField: the record's topic, partition, offset (sink records only; a source record fails)
  and timestamp, and a static string, under the field names configured. Kafka's `!` (required)
  and `?` (optional) suffixes on a name are dropped: the inserted field's schema is fixed (the
  topic required, the others optional).
- ReplaceField: `exclude` (Kafka's older `blacklist`), `include` (`whitelist`) and `renames`
  (`old:new,...`), the schema's fields with them.
- MaskField: `fields` set to `replacement`, or to their type's empty value (a struct field's by
  its schema type, a map's by its Python type). Gaps: the replacement stays a string whatever
  the field's type, and a value of another type (a list, a map) masks to None, where Kafka
  converts the one and empties or refuses the other.
- ExtractField: the key/value becomes its `field`, with the field's schema.
- HoistField: the key/value becomes a struct/map of one `field`.
- Flatten: nested structs/maps become top-level fields named by their path joined with
  `delimiter` (`.`); a field under an optional struct becomes optional.
- Cast: `spec` casts fields (`field:type,...`) or the whole key/value (one type) to int8 ...
  int64, float32, float64, boolean or string, the schema's types with them; the two forms
  cannot be mixed. A value Python cannot convert fails the record.
- ValueToKey: the key becomes a struct/map of the value's `fields`.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from engine.connect.api import DataError
from engine.connect.config_def import LIST, STRING
from engine.connect.transforms.base import Transform, TransformConfigError, props_list
from engine.connect.transforms.records import as_map, part, struct_fields, with_part


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
        schema, value = part(record, self.which)
        values = {
            "topic": ({"type": "string", "optional": False}, record.topic),
            "partition": ({"type": "int32", "optional": True},
                          getattr(record, "kafka_partition", getattr(record, "partition", None))),
            "offset": ({"type": "int64", "optional": True}, getattr(record, "kafka_offset", None)),
            "timestamp": ({"type": "int64", "optional": True, "name": "org.apache.kafka.connect.data.Timestamp"},
                          record.timestamp),
            "static": ({"type": "string", "optional": True}, self.static_value),
        }
        fields = struct_fields(schema)
        updated = dict(as_map(value, "field insertion")) if fields is None else dict(value or {})
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
        return with_part(record, self.which, new_schema, updated)


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
        self.exclude = set(props_list(props, "exclude") or props_list(props, "blacklist"))
        self.include = set(props_list(props, "include") or props_list(props, "whitelist"))
        self.renames = {}
        for pair in props_list(props, "renames"):
            old, sep, new = pair.partition(":")
            if not sep or not old.strip() or not new.strip():
                raise TransformConfigError(f"Invalid rename mapping: {pair} (use old:new)")
            self.renames[old.strip()] = new.strip()

    def _kept(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def apply(self, record):
        schema, value = part(record, self.which)
        fields = struct_fields(schema)
        if value is None:
            return record
        source = as_map(value, "field replacement") if fields is None else value
        updated = {self.renames.get(k, k): v for k, v in source.items() if self._kept(k)}
        new_schema = None if fields is None else {**schema, "fields": [
            {**f, "field": self.renames.get(f["field"], f["field"])} for f in fields if self._kept(f["field"])]}
        return with_part(record, self.which, new_schema, updated)


_MASKED = {"string": "", "int8": 0, "int16": 0, "int32": 0, "int64": 0, "float": 0.0, "double": 0.0,
           "boolean": False, "bytes": b""}


class MaskField(Transform):
    keys = (("fields", "Names of fields to mask.", LIST, True),
            ("replacement", "Custom value replacement, that will be applied to all 'fields' values."))

    def configure(self, props):
        super().configure(props)
        self.fields = set(props_list(props, "fields"))
        self.replacement = props.get("replacement")

    def _mask(self, current: Any, field_type: str | None) -> Any:
        if self.replacement is not None:
            return self.replacement
        if field_type in _MASKED:
            return _MASKED[field_type]
        return {str: "", bool: False, int: 0, float: 0.0, bytes: b""}.get(type(current), None)

    def apply(self, record):
        schema, value = part(record, self.which)
        if value is None:
            return record
        fields = struct_fields(schema)
        types = {} if fields is None else {f["field"]: f.get("type") for f in fields}
        source = as_map(value, "masking") if fields is None else value
        updated = {k: (self._mask(v, types.get(k)) if k in self.fields else v) for k, v in source.items()}
        return with_part(record, self.which, schema, updated)


class _OneField(Transform):
    """A transform of one named field (`field`, required in its `keys`)."""

    def configure(self, props):
        super().configure(props)
        self.field = str(props["field"]).strip()


class ExtractField(_OneField):
    keys = (("field", "Field name to extract.", STRING, True),)

    def apply(self, record):
        schema, value = part(record, self.which)
        fields = struct_fields(schema)
        if value is None:
            return record
        source = as_map(value, "field extraction") if fields is None else value
        field_schema = None if fields is None else next((f for f in fields if f["field"] == self.field), None)
        if fields is not None and field_schema is None:
            raise DataError(f"{self.field} is not a valid field name")
        extracted = {k: v for k, v in (field_schema or {}).items() if k != "field"} or None
        return with_part(record, self.which, extracted, source.get(self.field))


class HoistField(_OneField):
    keys = (("field", "Field name for the single field that will be created in the resulting Struct or Map.",
             STRING, True),)

    def apply(self, record):
        schema, value = part(record, self.which)
        new_schema = None if schema is None else {"type": "struct", "optional": False,
                                                  "fields": [{"field": self.field, **schema}]}
        return with_part(record, self.which, new_schema, {self.field: value})


class ValueToKey(Transform):
    keys = (("fields", "Field names on the record value to extract as the record key.", LIST, True),)

    def configure(self, props):
        super().configure(props)
        self.fields = props_list(props, "fields")

    def apply(self, record):
        fields = struct_fields(record.value_schema)
        source = as_map(record.value, "copying fields from value to key") if fields is None else record.value
        key = {name: source.get(name) for name in self.fields}
        key_schema = None
        if fields is not None:
            by_name = {f["field"]: f for f in fields}
            missing = [n for n in self.fields if n not in by_name]
            if missing:
                raise DataError(f"Field does not exist: {missing[0]}")
            key_schema = {"type": "struct", "optional": False, "fields": [by_name[n] for n in self.fields]}
        return dataclasses.replace(record, key_schema=key_schema, key=key)


class Flatten(Transform):
    keys = (("delimiter", "Delimiter to insert between field names from the input record when generating field "
             "names for the output record"),)

    def configure(self, props):
        super().configure(props)
        self.delimiter = props.get("delimiter") or "."

    def apply(self, record):
        schema, value = part(record, self.which)
        if value is None:
            return record
        fields = struct_fields(schema)
        flat: dict = {}
        self._flatten(as_map(value, "flattening") if fields is None else value, "", flat)
        new_schema = None
        if fields is not None:
            flat_fields: list[dict] = []
            self._flatten_schema(fields, "", False, flat_fields)
            new_schema = {**schema, "fields": flat_fields}
        return with_part(record, self.which, new_schema, flat)

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
        for item in props_list(props, "spec"):
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
        schema, value = part(record, self.which)
        if self.whole:
            new_schema = None if schema is None else {**schema, "type": _SCHEMA_TYPES.get(self.whole, self.whole)}
            return with_part(record, self.which, new_schema, self._cast(value, self.whole))
        if value is None:
            return record
        fields = struct_fields(schema)
        source = as_map(value, "casting") if fields is None else value
        updated = {k: (self._cast(v, self.casts[k]) if k in self.casts else v) for k, v in source.items()}
        new_schema = None if fields is None else {**schema, "fields": [
            {**f, "type": _SCHEMA_TYPES.get(self.casts[f["field"]], self.casts[f["field"]])}
            if f["field"] in self.casts else f for f in fields]}
        return with_part(record, self.which, new_schema, updated)
