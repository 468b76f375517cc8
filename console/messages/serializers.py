"""Turning what a person typed into record bytes, for the produce form.

string (UTF-8 as typed), json (validated, kept as typed), avro (the text is JSON, written with
the topic's schema; or with a schema registered in the console, in Confluent's framing),
msgpack (the text is JSON), protobuf (the text is JSON, written as the topic's message type).
Every failure is an InvalidInput with the reason.
"""
from __future__ import annotations

import io
import json
import struct

import fastavro
import msgpack
from google.protobuf import json_format

from console.errors import InvalidInput
from console.messages.deserializers import CONFLUENT_MAGIC, DecodeError, parse_avro_schema, protobuf_message_class

SERIALIZERS = ["string", "json", "avro", "msgpack", "protobuf"]


def serialize(text: str | None, fmt: str, *, what: str, avro_schema: str = "", registered_schema: tuple[int, str] | None = None,
              protobuf_descriptor_set: bytes = b"", protobuf_message_type: str = "") -> bytes | None:
    """`what` names the field in error messages ("value", "key"). None stays None (a null field)."""
    if text is None:
        return None
    if fmt == "string":
        return text.encode("utf-8")
    if fmt not in SERIALIZERS:
        raise InvalidInput(f"Unknown serializer {fmt!r}: use one of {', '.join(SERIALIZERS)}.")
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"The {what} is not valid JSON: {exc}.") from exc
    if fmt == "json":
        return text.encode("utf-8")
    if fmt == "msgpack":
        return msgpack.packb(parsed, use_bin_type=True)
    try:
        if fmt == "avro":
            return _avro(parsed, avro_schema, registered_schema)
        return _protobuf(parsed, protobuf_descriptor_set, protobuf_message_type)
    except DecodeError as exc:
        raise InvalidInput(f"The {what}: {exc}") from exc
    except (ValueError, TypeError, KeyError, AttributeError, json_format.ParseError) as exc:
        raise InvalidInput(f"The {what} does not fit the {fmt} schema: {exc}") from exc


def _avro(parsed, avro_schema: str, registered_schema: tuple[int, str] | None) -> bytes:
    out = io.BytesIO()
    if registered_schema is not None:
        schema_id, schema_text = registered_schema
        out.write(struct.pack(">bI", CONFLUENT_MAGIC, schema_id))
        schema = parse_avro_schema(schema_text)
    elif avro_schema:
        schema = parse_avro_schema(avro_schema)
    else:
        raise DecodeError("the topic has no Avro schema attached, and no registered schema was chosen.")
    fastavro.schemaless_writer(out, schema, parsed, strict=True)
    return out.getvalue()


def _protobuf(parsed, descriptor_set: bytes, message_type: str) -> bytes:
    if not descriptor_set or not message_type:
        raise DecodeError("the topic has no Protobuf descriptor set and message type.")
    message = protobuf_message_class(descriptor_set, message_type)()
    json_format.ParseDict(parsed, message)
    return message.SerializeToString()
