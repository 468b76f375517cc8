"""Turning a record's key, value or header bytes into text for a person, per format.

`Deserializers.for_topic(settings)` builds one reader per topic; `decode(data, fmt)` never
raises: bytes that do not decode come back as hex with the decoder's error beside them.

Formats: auto, string, json (pretty-printed), avro (Confluent's framing, magic 0 + 4-byte
schema id, resolved against the console's registered schemas; otherwise the topic's own
schema), protobuf (the topic's FileDescriptorSet and message type, plain or in Confluent's
framing), msgpack, hex, base64.

auto reads Confluent's wire format first: a magic byte 0 and a 4-byte schema id in front of the
payload. With the id registered in the console it decodes the payload as Avro and says so in
the note ("Confluent wire format, schema id 7 (orders-value)"); else, when the cluster has a
schema registry (`registry`: an id -> schema resolver, console/schema_registry/resolver.py),
the registry's schema decodes it, Avro, Protobuf (with its message indexes) or JSON Schema.
Any binary value may start with a zero byte, so auto takes the framing only when it holds up:
an id no schema can have (0, or past a Java int), an id nobody knows, or a registry that does
not answer, and the value is read as not framed (the next decoder: JSON, text, hex), with a
muted note saying what it may be. A registry's failure is kept (`registry_failure`) for the
page to say once. Chosen explicitly (avro, protobuf), the framing is taken at its word and a
failure is the record's error.

Otherwise JSON if it parses, UTF-8 text if it is valid and printable, else hex: a key of a few
binary bytes shows as hex, never as a blank or a lone control character. Hex is shown in byte
pairs, 16 to a line (`Decoded.display`); its text stays one run, as exports and copies take it.

Decoders live in one registry (`DECODERS`, filled by `@decoder("name")`): a new format (a schema
registry's, say) is one decorated method, and `models.FORMATS` lists what the pages offer.
"""
from __future__ import annotations

import base64
import io
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import fastavro
import msgpack
import orjson
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from kafka.record.util import decode_varint

from console.schema_registry import resolver as schema_resolver
from console.schema_registry.client import RegistryError, RegistryNotFound, RegistryUnreachable

CONFLUENT_MAGIC = 0
MAX_SCHEMA_ID = 2 ** 31 - 1        # the registry's ids are Java ints, from 1
HEX_BYTES_PER_LINE = 16


def group_hex(text: str) -> str:
    """`000102…` as `00 01 02 …`, HEX_BYTES_PER_LINE bytes to a line."""
    pairs = [text[i:i + 2] for i in range(0, len(text), 2)]
    return "\n".join(" ".join(pairs[i:i + HEX_BYTES_PER_LINE]) for i in range(0, len(pairs), HEX_BYTES_PER_LINE))


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str | None                 # None: the field is null
    format: str                      # the format that produced `text` (auto resolves to json/string/hex)
    error: str | None = None         # the decoder's complaint; `text` is then the raw bytes in hex
    note: str = ""                   # what a person should know about how it was read (framing, masking)
    schema_id: int | None = None     # Confluent's framing: the schema id in front of the payload
    subject: str = ""                # ... and the subject the registry keeps that schema under

    @property
    def display(self) -> str | None:
        """The text as a page shows it: hex in byte pairs, 16 to a line."""
        if self.format == "hex" and self.text:
            return group_hex(self.text)
        return self.text


class DecodeError(ValueError):
    pass


def _json_default(value):
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    return str(value)


def to_json_text(value, *, pretty: bool = False) -> str:
    """JSON text of a decoded Avro/MessagePack value (bytes as base64, others via str)."""
    option = orjson.OPT_INDENT_2 if pretty else 0
    try:
        return orjson.dumps(value, default=_json_default, option=option | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value, default=_json_default, indent=2 if pretty else None)


def parse_avro_schema(text: str):
    """A parsed fastavro schema; DecodeError with fastavro's reason when it is not one."""
    try:
        return fastavro.parse_schema(json.loads(text))
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as exc:
        raise DecodeError(f"Not a valid Avro schema: {exc}") from exc


def protobuf_message_class(descriptor_set: bytes, message_type: str):
    """The message class named `message_type` in a serialized FileDescriptorSet."""
    try:
        files = descriptor_pb2.FileDescriptorSet.FromString(bytes(descriptor_set))
        pool = descriptor_pool.DescriptorPool()
        for file in files.file:
            pool.Add(file)
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(message_type))
    except Exception as exc:  # noqa: BLE001 - protobuf raises TypeError, KeyError, DecodeError...
        raise DecodeError(f"Cannot use message type {message_type!r} from the descriptor set: {exc}") from exc


def protobuf_message_types(descriptor_set: bytes) -> list[str]:
    """Every message type (full name) a FileDescriptorSet defines, nested ones included."""
    try:
        files = descriptor_pb2.FileDescriptorSet.FromString(bytes(descriptor_set))
    except Exception as exc:  # noqa: BLE001
        raise DecodeError(f"Not a FileDescriptorSet: {exc}") from exc
    names = []

    def walk(prefix: str, messages) -> None:
        for m in messages:
            names.append(f"{prefix}{m.name}")
            walk(f"{prefix}{m.name}.", m.nested_type)
    for file in files.file:
        walk(f"{file.package}." if file.package else "", file.message_type)
    return names


DECODERS: dict[str, Callable] = {}


def decoder(name: str):
    """Register a Deserializers method as the decoder of format `name`."""
    def register(method):
        DECODERS[name] = method
        return method
    return register


def confluent_schema_id(data: bytes) -> int | None:
    """The schema id of a value in Confluent's wire format (magic 0, 4-byte big-endian id, then
    at least one byte of payload), or None."""
    if len(data) > 5 and data[0] == CONFLUENT_MAGIC:
        return struct.unpack_from(">I", data, 1)[0]
    return None


def plausible_schema_id(schema_id: int) -> bool:
    return 0 < schema_id <= MAX_SCHEMA_ID


class NotFramed(Exception):
    """What looked like Confluent's framing does not hold up; the reason is a note for a person."""


def _printable(text: str) -> bool:
    """Text a person can read: no control characters other than tab and line breaks."""
    return text.isprintable() or all(c.isprintable() or c in "\t\n\r" for c in text)


class Deserializers:
    """The readers of one topic. Cheap to build; parsed schemas are cached on first use."""

    def __init__(self, *, avro_schema: str = "", registered_schemas: dict[int, str] | None = None,
                 protobuf_descriptor_set: bytes = b"", protobuf_message_type: str = "",
                 subjects: dict[int, str] | None = None, registry: Callable | None = None) -> None:
        self._avro_schema_text = avro_schema
        self._registry = registry
        self._resolved: dict[int, tuple] = {}      # schema id -> (resolved schema, subject), per reader
        self._registered = registered_schemas or {}
        self._subjects = subjects or {}
        self._parsed_registered: dict[int, object] = {}
        self._descriptor_set = protobuf_descriptor_set
        self._message_type = protobuf_message_type
        self.registry_failure = ""                  # the registry's first failure, for the page to say once

    @property
    def resolves_through_registry(self) -> bool:
        return self._registry is not None

    @property
    def resolves_schema_ids(self) -> bool:
        return self._registry is not None or bool(self._registered)

    def decode(self, data: bytes | None, fmt: str) -> Decoded:
        if data is None:
            return Decoded(None, fmt)
        read = DECODERS.get(fmt)
        if read is None:
            return Decoded(data.hex(), "hex", f"Unknown format {fmt!r}.")
        try:
            return read(self, data)
        except Exception as exc:  # noqa: BLE001 - a record must never fail the page, whatever the decoder raises
            return Decoded(data.hex(), "hex", f"{fmt}: {exc}" if str(exc) else f"{fmt}: {type(exc).__name__}")

    # --- formats ----------------------------------------------------------------------------

    @decoder("auto")
    def _auto(self, data: bytes) -> Decoded:
        schema_id = confluent_schema_id(data)
        if schema_id is not None and plausible_schema_id(schema_id):
            try:
                return self._confluent(data, schema_id)
            except NotFramed as exc:
                return self._plain(data, note=str(exc))
        return self._plain(data)

    def _plain(self, data: bytes, note: str = "") -> Decoded:
        """JSON, printable text, else hex; `note`: why a value that looked framed is read so."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return Decoded(data.hex(), "hex", note=note)
        if not _printable(text):
            return Decoded(data.hex(), "hex", note=note or "binary: control characters, shown as hex")
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError:
            return Decoded(text, "string", note=note)
        return Decoded(text, "json", note=note)

    def _confluent(self, data: bytes, schema_id: int) -> Decoded:
        """auto's reading of a value that starts as the framing does; NotFramed when it is not one."""
        if schema_id not in self._registered and self._registry is not None:
            return self._from_registry(data, schema_id, explicit=False)
        subject = f" ({self._subjects[schema_id]})" if schema_id in self._subjects else ""
        framing = f"Confluent wire format, schema id {schema_id}{subject}"
        if schema_id not in self._registered:
            raise NotFramed(f"binary, shown as hex: it starts as Confluent's wire format does (schema id "
                            f"{schema_id}), but no schema registered in the console has that id")
        try:
            decoded = self._avro(data)
        except Exception as exc:  # noqa: BLE001 - shown beside the bytes, as any decoder's error
            return Decoded(data.hex(), "hex", f"avro: {exc}", note=framing)
        return Decoded(decoded.text, decoded.format, note=f"{framing}, read as Avro", schema_id=schema_id,
                       subject=decoded.subject)

    def _lookup(self, schema_id: int) -> tuple:
        """The registry's schema for an id, asked once per reader (an unknown id too: its error
        is kept, so a page of records with that id costs one request)."""
        found = self._resolved.get(schema_id)
        if found is None:
            try:
                found = self._registry(schema_id)
            except Exception as exc:  # noqa: BLE001 - kept and raised again for each record with this id
                found = exc
            self._resolved[schema_id] = found
        if isinstance(found, Exception):
            raise found
        return found

    def framed_value(self, data: bytes):
        """A value in Confluent's framing decoded to Python data through the registry (for
        search filters: no JSON text made); raises when it cannot be."""
        resolved, _ = self._lookup(struct.unpack_from(">I", data, 1)[0])
        return schema_resolver.decode(resolved, data)

    def _from_registry(self, data: bytes, schema_id: int, *, explicit: bool = True) -> Decoded:
        """Decode with the schema the cluster's registry keeps under the framed id. Not
        `explicit` (auto): an id the registry does not know, or a registry that does not
        answer, raise NotFramed."""
        framing = f"Confluent wire format, schema id {schema_id}"
        try:
            resolved, subject = self._lookup(schema_id)
        except RegistryNotFound as exc:
            if not explicit:
                raise NotFramed(f"binary, shown as hex: it starts as Confluent's wire format does (schema id "
                                f"{schema_id}), but the schema registry has no schema with that id") from None
            return Decoded(data.hex(), "hex", f"schema id {schema_id}: {exc}", note=framing, schema_id=schema_id)
        except RegistryError as exc:
            if not (isinstance(exc, RegistryUnreachable) or exc.status is not None):
                # the registry answered, with a schema that does not load here: the record's error
                return Decoded(data.hex(), "hex", f"schema id {schema_id}: {exc}", note=framing, schema_id=schema_id)
            self.registry_failure = self.registry_failure or str(exc)
            if not explicit:
                raise NotFramed(f"binary, shown as hex: it may be in Confluent's wire format (schema id "
                                f"{schema_id}), which the schema registry could not be asked about") from None
            return Decoded(data.hex(), "hex", f"schema id {schema_id}: {exc}", note=framing, schema_id=schema_id)
        except Exception as exc:  # noqa: BLE001 - the registry's schema does not load: shown beside the bytes
            return Decoded(data.hex(), "hex", f"schema id {schema_id}: {exc}", note=framing, schema_id=schema_id)
        try:
            value = schema_resolver.decode(resolved, data)
        except Exception as exc:  # noqa: BLE001 - the decoder's complaint, shown beside the bytes
            return Decoded(data.hex(), "hex", f"schema id {schema_id}: {exc}", note=framing, schema_id=schema_id,
                           subject=subject)
        kind = resolved.schema_type.lower()
        return Decoded(to_json_text(value, pretty=True), "json" if kind == "json" else kind,
                       note=f"{framing} ({subject}), read as {resolved.schema_type} with the schema registry's schema",
                       schema_id=schema_id, subject=subject)

    @decoder("string")
    def _string(self, data: bytes) -> Decoded:
        return Decoded(data.decode("utf-8"), "string")

    @decoder("json")
    def _json(self, data: bytes) -> Decoded:
        return Decoded(orjson.dumps(orjson.loads(data), option=orjson.OPT_INDENT_2).decode(), "json")

    @decoder("avro")
    def _avro(self, data: bytes) -> Decoded:
        if len(data) >= 5 and data[0] == CONFLUENT_MAGIC:
            (schema_id,) = struct.unpack_from(">I", data, 1)
            if schema_id not in self._registered and self._registry is not None and not self._avro_schema_text:
                return self._from_registry(data, schema_id)
            if schema_id in self._registered:
                value = fastavro.schemaless_reader(io.BytesIO(data[5:]), self._registered_schema(schema_id))
                subject = self._subjects.get(schema_id, "")
                return Decoded(to_json_text(value, pretty=True), "avro",
                               note=f"Confluent wire format, schema id {schema_id}{f' ({subject})' if subject else ''}"
                                    ", read as Avro with the console's local schema",
                               schema_id=schema_id, subject=subject)
            if not self._avro_schema_text:
                raise DecodeError(f"Confluent schema id {schema_id} is not registered in the console.")
        if not self._avro_schema_text:
            raise DecodeError("The topic has no Avro schema attached.")
        reader = io.BytesIO(data)
        value = fastavro.schemaless_reader(reader, self._avro_schema)
        if reader.tell() != len(data):
            raise DecodeError(f"{len(data) - reader.tell()} bytes left after the Avro record.")
        return Decoded(to_json_text(value, pretty=True), "avro")

    @decoder("protobuf")
    def _protobuf(self, data: bytes) -> Decoded:
        if data[:1] == b"\x00" and len(data) > 5 and self._registry is not None and not self._descriptor_set:
            return self._from_registry(data, struct.unpack_from(">I", data, 1)[0])
        if not self._descriptor_set or not self._message_type:
            raise DecodeError("The topic has no Protobuf descriptor set and message type.")
        if data[:1] == b"\x00":
            # Field number 0 does not exist, so a leading zero byte is Confluent's framing:
            # magic 0, a 4-byte schema id, then the message indexes (the topic's type is used).
            data = _skip_message_indexes(data, 5)
        message = self._protobuf_class.FromString(data)
        as_dict = json_format.MessageToDict(message, preserving_proto_field_name=True)
        return Decoded(to_json_text(as_dict, pretty=True), "protobuf")

    @decoder("msgpack")
    def _msgpack(self, data: bytes) -> Decoded:
        value = msgpack.unpackb(data, raw=False, strict_map_key=False)
        return Decoded(to_json_text(value, pretty=True), "msgpack")

    @decoder("hex")
    def _hex(self, data: bytes) -> Decoded:
        return Decoded(data.hex(), "hex")

    @decoder("base64")
    def _base64(self, data: bytes) -> Decoded:
        return Decoded(base64.b64encode(data).decode(), "base64")

    # --- cached schemas ---------------------------------------------------------------------

    @cached_property
    def _avro_schema(self):
        return parse_avro_schema(self._avro_schema_text)

    def _registered_schema(self, schema_id: int):
        if schema_id not in self._parsed_registered:
            self._parsed_registered[schema_id] = parse_avro_schema(self._registered[schema_id])
        return self._parsed_registered[schema_id]

    @cached_property
    def _protobuf_class(self):
        return protobuf_message_class(self._descriptor_set, self._message_type)


def _skip_message_indexes(data: bytes, pos: int) -> bytes:
    """Confluent's Protobuf message indexes: a zigzag varint count, then that many indexes
    (a lone 0 byte stands for [0], the first message type)."""
    count, pos = decode_varint(data, pos)
    for _ in range(count):
        _, pos = decode_varint(data, pos)
    return data[pos:]

