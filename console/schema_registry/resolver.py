"""Schema ids to schemas, through a cluster's registry, and records in Confluent's framing.

A schema id names one schema forever, so what the registry answers for an id is cached for
the life of the process (per registry URL, at most CACHE_SIZE ids): a page of 500 records
framed with one id costs one registry call, once. A registry that does not answer is not asked
again for UNREACHABLE_SECONDS: a page of binary values whose first byte happens to be 0 (each
"framed" with another id) costs one failed call, not one per record. Schemas are parsed with the registry's own
parsers (engine/schema_registry/schemas: fastavro, protoc, jsonschema), references included.

Framing: magic byte 0, the 4-byte big-endian schema id, then for Protobuf the message indexes
(a zigzag varint count, then the indexes; a lone 0 stands for [0], the file's first message),
then the payload.
"""
from __future__ import annotations

import io
import json
import struct
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property

import fastavro
import orjson
from google.protobuf import json_format, message_factory
from kafka.record.util import decode_varint, encode_varint

from console.schema_registry.client import RegistryClient, RegistryError, RegistryUnreachable
from engine.schema_registry.schemas import InvalidSchema, ParsedSchema, Reference, SchemaType, parse

MAGIC = 0
CACHE_SIZE = 2000
UNREACHABLE_SECONDS = 15.0


@dataclass(eq=False)
class ResolvedSchema:
    schema_id: int
    subject: str
    parsed: ParsedSchema
    subjects: tuple[str, ...] = ()      # every subject the registry keeps this schema id under
    message_classes: dict = field(default_factory=dict, repr=False)   # Protobuf: indexes -> class

    @cached_property
    def avro_reader(self):
        """fastavro's parsed schema, named types of the references included (parsed once)."""
        named: dict = {}
        for dependency in self.parsed.dependencies.values():
            named.update(dependency.model.named)
        return fastavro.parse_schema(json.loads(self.parsed.text), named_schemas=named)

    @property
    def schema_type(self) -> str:
        return self.parsed.schema_type.value

    def topic_subject(self, topic: str) -> str | None:
        """One schema may serve several subjects: the topic's own (TopicNameStrategy,
        TopicRecordNameStrategy) when it is one of them."""
        for candidate in (f"{topic}-value", f"{topic}-key"):
            if candidate in self.subjects:
                return candidate
        return next((s for s in self.subjects if s.startswith(f"{topic}-")), None)


class _Cache:
    def __init__(self) -> None:
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > CACHE_SIZE:
                self._items.popitem(last=False)


_BY_ID = _Cache()
_ASKED_FOR_TOPIC = _Cache()   # (url, id, topic) whose subjects were asked again once: the schema's
                              # subjects grow when another subject registers the same schema
_BY_VERSION = _Cache()


class _Unreachable:
    """Registries that did not answer lately: URL -> (when, the error), kept UNREACHABLE_SECONDS."""

    def __init__(self) -> None:
        self._failures: dict[str, tuple[float, RegistryUnreachable]] = {}
        self._lock = threading.Lock()

    def check(self, url: str) -> None:
        """Raise the registry's last failure while it is recent."""
        with self._lock:
            found = self._failures.get(url)
            if found is not None and time.monotonic() - found[0] >= UNREACHABLE_SECONDS:
                del self._failures[url]
                found = None
        if found is not None:
            raise found[1]

    def remember(self, url: str, error: RegistryUnreachable) -> None:
        with self._lock:
            self._failures[url] = (time.monotonic(), error)

    def clear(self) -> None:
        with self._lock:
            self._failures.clear()


UNREACHABLE = _Unreachable()


def _ask(client: RegistryClient, call):
    """`call()` against the registry, unless it did not answer a moment ago."""
    UNREACHABLE.check(client.url)
    try:
        return call()
    except RegistryUnreachable as exc:
        UNREACHABLE.remember(client.url, exc)
        raise


def framed_schema_id(data: bytes | None) -> int | None:
    if data is not None and len(data) >= 5 and data[0] == MAGIC:
        return struct.unpack_from(">I", data, 1)[0]
    return None


def resolve_id(client: RegistryClient, schema_id: int) -> ResolvedSchema:
    key = (client.url, schema_id)
    found = _BY_ID.get(key)
    if found is None:
        answer = _ask(client, lambda: client.schema(schema_id))
        subjects = tuple(dict.fromkeys(u["subject"] for u in _ask(client, lambda: client.schema_versions(schema_id))))
        found = ResolvedSchema(schema_id, subjects[0] if subjects else "", _parse(client, answer), subjects)
        _BY_ID.put(key, found)
    return found


def subject_for(client: RegistryClient, resolved: ResolvedSchema, topic: str) -> str:
    """The subject to show for a record of `topic` framed with this id."""
    found = resolved.topic_subject(topic)
    if found is None and _ASKED_FOR_TOPIC.get((client.url, resolved.schema_id, topic)) is None:
        _ASKED_FOR_TOPIC.put((client.url, resolved.schema_id, topic), True)
        subjects = tuple(dict.fromkeys(u["subject"] for u in _ask(client, lambda: client.schema_versions(
            resolved.schema_id))))
        resolved.subjects = subjects
        _BY_ID.put((client.url, resolved.schema_id), resolved)
        found = resolved.topic_subject(topic)
    return found or resolved.subject


def resolve_version(client: RegistryClient, subject: str, version: int | str) -> ResolvedSchema:
    """A subject's version (`latest` is asked each time: it moves; numbered versions are cached)."""
    found = _cached_version(client, subject, version)
    if found is None:
        answer = client.version(subject, version)
        found = _version_resolved(client, subject, version, answer, _parse(client, answer))
    return found


def _movable(version: int | str) -> bool:
    return version in ("latest", -1)


def _cached_version(client: RegistryClient, subject: str, version: int | str) -> ResolvedSchema | None:
    return None if _movable(version) else _BY_VERSION.get((client.url, subject, version))


def _version_resolved(client: RegistryClient, subject: str, version: int | str, answer: dict,
                      parsed: ParsedSchema) -> ResolvedSchema:
    found = ResolvedSchema(answer["id"], subject, parsed)
    if not _movable(version):
        _BY_VERSION.put((client.url, subject, version), found)
    return found


def _parse(client: RegistryClient, answer: dict) -> ParsedSchema:
    """The schema of a registry answer, its references parsed first. The reference graph is
    walked depth first with a stack, not recursion: a chain of a thousand references is legal,
    and an external registry answering a cycle gets a sentence, not a RecursionError."""
    top = ("", -1)
    answers = {top: answer}
    parsed: dict[tuple[str, int | str], ParsedSchema] = {}
    stack = [top]
    while stack:
        key = stack[-1]
        references = _references(answers[key])
        following = _first_unparsed(client, references, parsed)
        if following is not None:
            if following in stack:
                raise RegistryError(f"The registry's schema references form a cycle through subject "
                                    f"{following[0]} version {following[1]}")
            answers[following] = client.version(*following)
            stack.append(following)
            continue
        stack.pop()
        parsed[key] = _parse_one(answers[key], references, {r.name: parsed[(r.subject, r.version)]
                                                             for r in references})
        if key != top:
            _version_resolved(client, key[0], key[1], answers[key], parsed[key])
    return parsed[top]


def _first_unparsed(client: RegistryClient, references: tuple[Reference, ...],
                    parsed: dict) -> tuple[str, int | str] | None:
    for reference in references:
        key = (reference.subject, reference.version)
        if key in parsed:
            continue
        cached = _cached_version(client, *key)
        if cached is None:
            return key
        parsed[key] = cached.parsed
    return None


def _references(answer: dict) -> tuple[Reference, ...]:
    try:
        return tuple(Reference.from_json(r) for r in answer.get("references") or [])
    except InvalidSchema as exc:
        raise RegistryError(f"The registry's schema does not parse here: {exc}") from None


def _parse_one(answer: dict, references: tuple[Reference, ...], dependencies: dict) -> ParsedSchema:
    try:
        return parse(SchemaType.parse(answer.get("schemaType")), answer["schema"], references, dependencies)
    except InvalidSchema as exc:
        raise RegistryError(f"The registry's schema does not parse here: {exc}") from None


# -- reading -------------------------------------------------------------------------------

def decode(resolved: ResolvedSchema, data: bytes):
    """The value of a framed record as plain Python data (dicts, lists, strings, numbers)."""
    payload = memoryview(data)[5:]
    kind = resolved.parsed.schema_type
    if kind is SchemaType.AVRO:
        reader = io.BytesIO(payload)
        value = fastavro.schemaless_reader(reader, resolved.avro_reader)
        if reader.tell() != len(payload):
            raise ValueError(f"{len(payload) - reader.tell()} bytes left after the Avro record")
        return value
    if kind is SchemaType.PROTOBUF:
        indexes, position = _message_indexes(data, 5)
        message = _message_class(resolved, indexes).FromString(bytes(data[position:]))
        return json_format.MessageToDict(message, preserving_proto_field_name=True)
    return orjson.loads(payload)


def _message_indexes(data: bytes, position: int) -> tuple[list[int], int]:
    count, position = decode_varint(data, position)
    if count == 0:
        return [0], position
    if not 0 < count <= 64:
        raise ValueError(f"{count} message indexes: not Confluent's Protobuf framing")
    indexes = []
    for _ in range(count):
        index, position = decode_varint(data, position)
        indexes.append(index)
    return indexes, position


def message_name(resolved: ResolvedSchema, indexes: list[int]) -> str:
    file = resolved.parsed.model.file
    scope, messages = (f"{file.package}." if file.package else ""), file.message_type
    name = ""
    for index in indexes:
        if not 0 <= index < len(messages):
            raise ValueError(f"message index {index} is not in the schema")
        name = scope + messages[index].name
        scope, messages = name + ".", messages[index].nested_type
    return name


def _message_class(resolved: ResolvedSchema, indexes: list[int]):
    key = tuple(indexes)
    cls = resolved.message_classes.get(key)
    if cls is None:
        pool = resolved.parsed.model.pool()
        cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(message_name(resolved, indexes)))
        resolved.message_classes[key] = cls
    return cls


# -- writing -------------------------------------------------------------------------------

def encode(resolved: ResolvedSchema, value, message_type: str = "") -> bytes:
    """`value` (JSON data) in Confluent's framing with the resolved schema; ValueError if it does not fit."""
    head = struct.pack(">bI", MAGIC, resolved.schema_id)
    kind = resolved.parsed.schema_type
    if kind is SchemaType.AVRO:
        out = io.BytesIO()
        out.write(head)
        fastavro.schemaless_writer(out, resolved.avro_reader, value, strict=True)
        return out.getvalue()
    if kind is SchemaType.PROTOBUF:
        indexes = _indexes_of(resolved, message_type)
        message = _message_class(resolved, indexes)()
        json_format.ParseDict(value, message)
        prefix = b"\x00" if indexes == [0] else _varints([len(indexes), *indexes])
        return head + prefix + message.SerializeToString()
    errors = sorted(resolved.parsed.model.validator().iter_errors(value), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path)
        raise ValueError(f"{errors[0].message}" + (f" at /{where}" if where else ""))
    return head + json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _indexes_of(resolved: ResolvedSchema, message_type: str) -> list[int]:
    names = resolved.parsed.model.message_names()
    if not names:
        raise ValueError("the schema defines no message")
    wanted = message_type or names[0]
    file = resolved.parsed.model.file
    scope, messages = (f"{file.package}." if file.package else ""), file.message_type
    indexes: list[int] = []
    while True:
        for index, message in enumerate(messages):
            name = scope + message.name
            if wanted == name or wanted.startswith(name + "."):
                indexes.append(index)
                if wanted == name:
                    return indexes
                scope, messages = name + ".", message.nested_type
                break
        else:
            raise ValueError(f"the schema has no message {wanted!r} (it has {', '.join(names)})")


def _varints(values: list[int]) -> bytes:
    out = bytearray()
    for value in values:
        encode_varint(value, out.append)
    return bytes(out)
