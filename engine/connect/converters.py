"""Converters between Connect data (a schema and a value) and the bytes in Kafka, with
Kafka Connect's class names and configs:

- `org.apache.kafka.connect.json.JsonConverter`: JSON; with `schemas.enable=true` (the
  default) each value is the envelope `{"schema": ..., "payload": ...}`; bytes travel as
  base64, as Connect's bytes schema does.
- `org.apache.kafka.connect.storage.StringConverter`: text in `converter.encoding` (UTF-8).
- `org.apache.kafka.connect.converters.ByteArrayConverter`: bytes as they are.

A connector or the worker names them in `key.converter`/`value.converter`, with their
settings under that prefix (`value.converter.schemas.enable=false`).
"""
from __future__ import annotations

import base64
import json
from typing import Any

from engine.connect.api import DataError

JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
BYTE_ARRAY = "org.apache.kafka.connect.converters.ByteArrayConverter"

_SCHEMAS_ERROR = ('JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain '
                  'additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false '
                  'in your converter configuration.')


class Converter:
    def configure(self, configs: dict[str, str], is_key: bool) -> None:
        self.is_key = is_key

    def from_connect(self, topic: str, schema: dict | None, value: Any) -> bytes | None:
        raise NotImplementedError

    def to_connect(self, topic: str, data: bytes | None) -> tuple[dict | None, Any]:
        raise NotImplementedError


class JsonConverter(Converter):
    schemas_enable = True

    def configure(self, configs: dict[str, str], is_key: bool) -> None:
        super().configure(configs, is_key)
        text = str(configs.get("schemas.enable", "true")).strip().lower()
        if text not in ("true", "false"):
            raise DataError(f"Invalid value {configs.get('schemas.enable')} for configuration schemas.enable: "
                            "Expected value to be either true or false")
        self.schemas_enable = text == "true"

    def from_connect(self, topic: str, schema: dict | None, value: Any) -> bytes | None:
        if value is None and schema is None:
            return None
        payload = _json_payload(value)
        document = {"schema": schema, "payload": payload} if self.schemas_enable else payload
        return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()

    def to_connect(self, topic: str, data: bytes | None) -> tuple[dict | None, Any]:
        if data is None:
            return None, None
        try:
            document = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"Converting byte[] to Kafka Connect data failed due to serialization error: {exc}") \
                from None
        if not self.schemas_enable:
            return None, document
        if not isinstance(document, dict) or set(document) != {"schema", "payload"}:
            raise DataError(_SCHEMAS_ERROR)
        schema = document["schema"]
        return schema, _from_payload(schema, document["payload"])


def _json_payload(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, dict):
        return {str(k): _json_payload(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_payload(v) for v in value]
    return value


def _from_payload(schema: dict | None, payload: Any) -> Any:
    if schema and schema.get("type") == "bytes" and isinstance(payload, str):
        try:
            return base64.b64decode(payload, validate=True)
        except ValueError:
            raise DataError("Invalid bytes field: not base64") from None
    return payload


class StringConverter(Converter):
    encoding = "utf-8"

    def configure(self, configs: dict[str, str], is_key: bool) -> None:
        super().configure(configs, is_key)
        self.encoding = configs.get("converter.encoding") or configs.get("encoding") or "utf-8"

    def from_connect(self, topic: str, schema: dict | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode(self.encoding, errors="replace")
        return str(value).encode(self.encoding)

    def to_connect(self, topic: str, data: bytes | None) -> tuple[dict | None, Any]:
        if data is None:
            return {"type": "string", "optional": True}, None
        return {"type": "string", "optional": True}, data.decode(self.encoding, errors="replace")


class ByteArrayConverter(Converter):
    def from_connect(self, topic: str, schema: dict | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise DataError(f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}")

    def to_connect(self, topic: str, data: bytes | None) -> tuple[dict | None, Any]:
        return {"type": "bytes", "optional": True}, data


CONVERTERS = {JSON: JsonConverter, STRING: StringConverter, BYTE_ARRAY: ByteArrayConverter}


def converter_class(name: str) -> type[Converter] | None:
    """By Kafka's class name, its simple name, or this module's class path."""
    name = (name or "").strip()
    for full, cls in CONVERTERS.items():
        if name in (full, full.rsplit(".", 1)[1], f"{cls.__module__}.{cls.__name__}"):
            return cls
    return None


def build(name: str, configs: dict[str, str], *, is_key: bool) -> Converter:
    cls = converter_class(name)
    if cls is None:
        raise DataError(f"Failed to find any class that implements Converter and which name matches {name}, "
                        f"available converters are: {', '.join(CONVERTERS)}")
    converter = cls()
    converter.configure(configs, is_key)
    return converter


def prefixed(props: dict[str, str], prefix: str) -> dict[str, str]:
    """The settings under `prefix.` with the prefix removed (Kafka's originalsWithPrefix)."""
    start = prefix + "."
    return {k[len(start):]: v for k, v in props.items() if k.startswith(start)}
