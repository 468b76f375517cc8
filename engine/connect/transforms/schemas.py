"""SetSchemaMetadata (`$Key`, `$Value`): the key's or value's schema gets a `schema.name` and/or
a `schema.version`; its type and fields stay, and a struct's null fields read as their defaults
when `replace.null.with.default` (true) says so.

It needs the converter's schemas: a key/value without one fails, as in Kafka (a null one
without a schema passes untouched).
"""
from __future__ import annotations

from engine.connect.api import DataError
from engine.connect.config_def import INT
from engine.connect.transforms.base import Transform, TransformConfigError, props_boolean, props_int
from engine.connect.transforms.records import REPLACE_NULL, field_value, part, with_part


class SetSchemaMetadata(Transform):
    """Kafka's SetSchemaMetadata: the key's or value's schema gets `schema.name` and/or
    `schema.version`; its type and fields stay. A record with a key/value but no schema for it
    fails, as in Kafka; a null key/value without one passes."""

    keys = (("schema.name", "Schema name to set."), ("schema.version", "Schema version to set.", INT), REPLACE_NULL)

    def configure(self, props):
        super().configure(props)
        self.name = str(props.get("schema.name") or "").strip() or None
        self.version = props_int(props, "schema.version")
        if self.name is None and self.version is None:
            raise TransformConfigError("Neither schema name nor version configured")
        self.replace_null = props_boolean(props, "replace.null.with.default", True)

    def apply(self, record):
        schema, value = part(record, self.which)
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
            value = {f["field"]: field_value(value, f, self.replace_null) for f in schema.get("fields") or []}
        return with_part(record, self.which, updated, value)
