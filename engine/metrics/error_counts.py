"""The error codes one response carries, as Kafka counts them for ErrorsPerSec.

Kafka marks `kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=R,error=E` with each
response's `errorCounts()`: every partition of a Produce, the top level and every partition
of a Fetch, every topic of a CreateTopics, every topic and partition of a Metadata, NONE
included. The engine reads the same from the response's schema: every field named
`error_code` in the version answered, at the top and inside its arrays of structs, one count
per item. That is Kafka's choice for every API the engine answers except those in
`KAFKA_LEVELS`, which lists the levels Kafka counts for them instead:

- Fetch, DescribeLogDirs, ElectLeaders: the top level at every version (NONE where the
  version has no top-level code: Kafka reads its data object's default);
- Metadata: topics and partitions, never the top level (v13+);
- AddPartitionsToTxn: the partitions' `partition_error_code`, and the top level (v4+);
- DeleteAcls: the filter results, not the ACLs matched;
- DescribeUserScramCredentials: the results, not the top level;
- DescribeShareGroupOffsets: the partitions, and a group only when it failed;
- AlterShareGroupOffsets, DeleteShareGroupOffsets: the partitions, not the top level.

Where the engine differs from Kafka: OffsetFetch v1 has no top-level code; Kafka counts one
there, taken from its partitions.

A Produce with acks=0 is answered with nothing and counts nothing when it succeeded; when a
partition failed, the connection is closed and its partitions' codes are counted, as in Kafka
(dispatch.SilentClose).

Cost, on the event loop: the levels are worked out once per response class and version, then
read with `attrgetter` over the items; a 1,000-partition Produce or Fetch response object
takes about 0.03 ms (0.05 ms with the tally in stats.py). Fetch's zero-copy answer carries
the codes its handler put in it. Another answer the handler encoded itself is decoded to be
read (a zero-copy frame without codes: about 0.6-0.8 ms per 1,000 partitions); a body cached per metadata image once, its codes kept
while the body lives (about 30 ms for an all-topics Metadata answer of 20,000 partitions,
whose building and encoding take about 0.2 s).
"""
from __future__ import annotations

import weakref
from operator import attrgetter
from typing import Any, NamedTuple

from kafka.protocol.api_message import ApiMessage

from engine.protocol.response_frames import body_offset

NONE = 0


class Level(NamedTuple):
    """One level Kafka counts: a dotted path through the response to an error code field."""
    path: str
    every_version: bool = False       # counted at every version, NONE where the version has none
    errors_only: bool = False         # counted only when not NONE


KAFKA_LEVELS: dict[int, tuple[Level, ...]] = {
    1: (Level("error_code", every_version=True),                                    # Fetch
        Level("responses.partitions.error_code")),
    3: (Level("topics.error_code"), Level("topics.partitions.error_code")),          # Metadata
    24: (Level("error_code"),                                                       # AddPartitionsToTxn
         Level("results_by_transaction.topic_results.results_by_partition.partition_error_code"),
         Level("results_by_topic_v3_and_below.results_by_partition.partition_error_code")),
    31: (Level("filter_results.error_code"),),                                      # DeleteAcls
    35: (Level("error_code", every_version=True), Level("results.error_code")),     # DescribeLogDirs
    43: (Level("error_code", every_version=True),                                   # ElectLeaders
         Level("replica_election_results.partition_result.error_code")),
    50: (Level("results.error_code"),),                                             # DescribeUserScramCredentials
    90: (Level("groups.error_code", errors_only=True),                              # DescribeShareGroupOffsets
         Level("groups.topics.partitions.error_code")),
    91: (Level("responses.partitions.error_code"),),                                # AlterShareGroupOffsets
    92: (Level("responses.partitions.error_code"),),                                # DeleteShareGroupOffsets
}


class _Step(NamedTuple):
    get: attrgetter
    name: str
    index: int | None                 # its place in a tuple item (untagged fields of the version)
    is_array: bool


class _Path(NamedTuple):
    steps: tuple[_Step, ...]          # the arrays and structs down to the code's struct
    code: _Step
    errors_only: bool


def error_codes(api_key: int, response_class: type[ApiMessage], api_version: int, response: Any) -> list[int]:
    """The error codes `response` carries, one per level item Kafka counts (NONE included)."""
    if response is None:
        return []
    if isinstance(response, ApiMessage):
        return _codes_of(response, _paths(api_key, response_class, api_version))
    read = _READERS.get(type(response)) or _reader(type(response))
    return read(api_key, response_class, api_version, response)


def _codes_of(message: ApiMessage, paths: tuple[_Path, ...]) -> list[int]:
    if len(paths) == 1 and not paths[0].steps and not paths[0].errors_only:     # most APIs: one top-level code
        return [_field(message, paths[0].code)]
    codes: list[int] = []
    for path in paths:
        items = [message]
        for step in path.steps:
            items = _children(items, step)
        found = _values(items, path.code)
        codes += [c for c in found if c != NONE] if path.errors_only else found
    return codes


def _children(items: list, step: _Step) -> list:
    try:      # the common case, items that are response objects: one C-level getattr each
        values = list(map(step.get, items))
    except AttributeError:            # tuples or dicts, as the encoder also takes them
        values = [_field(item, step) for item in items]
    if not step.is_array:
        return [v for v in values if v is not None]
    children: list = []
    for value in values:
        if value is not None:
            children += value
    return children


def _values(items: list, step: _Step) -> list[int]:
    try:
        return list(map(step.get, items))
    except AttributeError:
        return [_field(item, step) for item in items]


def _field(item, step: _Step):
    if isinstance(item, tuple):
        return item[step.index] if step.index is not None and step.index < len(item) else None
    if isinstance(item, dict):
        return item.get(step.name)
    return getattr(item, step.name, None)


# --- which fields to read, per response class and version ----------------------------------
_PATHS: dict[tuple[int, type, int], tuple[_Path, ...]] = {}


def _paths(api_key: int, response_class: type[ApiMessage], api_version: int) -> tuple[_Path, ...]:
    key = (api_key, response_class, api_version)
    paths = _PATHS.get(key)
    if paths is None:
        struct = response_class._struct
        levels = KAFKA_LEVELS.get(api_key)
        if levels is None:
            paths = tuple(_error_code_paths(struct, api_version, ()))
        else:
            paths = tuple(p for p in (_level_path(struct, api_version, level) for level in levels) if p is not None)
        paths = _PATHS[key] = paths
    return paths


def _error_code_paths(struct, version: int, steps: tuple[_Step, ...]):
    """Every `error_code` field of the version, at any depth of structs and arrays of structs."""
    for field in struct.fields.values():
        if not field.for_version_q(version):
            continue
        if field.name == "error_code":
            yield _Path(steps, _step(struct, field, version), errors_only=False)
        elif field.is_struct_array() or field.is_struct():
            inner = field.array_of if field.is_struct_array() else field
            yield from _error_code_paths(inner, version, steps + (_step(struct, field, version),))


def _level_path(struct, version: int, level: Level) -> _Path | None:
    """`level` as a path, or None when the version has no such field (unless counted at every version)."""
    steps = []
    names = level.path.split(".")
    for i, name in enumerate(names):
        field = struct.fields[name]
        if not field.for_version_q(version) and not (level.every_version and len(names) == 1):
            return None
        steps.append(_step(struct, field, version))
        if i < len(names) - 1:
            struct = field.array_of if field.is_struct_array() else field
    return _Path(tuple(steps[:-1]), steps[-1], level.errors_only)


def _step(struct, field, version: int) -> _Step:
    untagged = struct.untagged_fields(version)
    index = next((i for i, f in enumerate(untagged) if f is field), None)
    return _Step(attrgetter(field.name), field.name, index, field.is_struct_array())


# --- answers the handler encoded itself ------------------------------------------------------
def _reader(kind: type):
    """How to read a response of a type that is not a message, recognised by its fields:
    EncodeOffLoop (`response`), EncodedBody (`body`, `flexible`) and ZeroCopyResponse (`frame`,
    `markers`) of engine/protocol/dispatch.py."""
    fields = set(getattr(kind, "__dataclass_fields__", ()))
    if "response" in fields:
        reader = _wrapped
    elif {"body", "flexible"} <= fields:
        reader = _encoded_body
    elif {"frame", "markers"} <= fields:
        reader = _framed
    else:
        raise TypeError(f"cannot count the error codes of a {kind.__name__}")
    _READERS[kind] = reader
    return reader


def _wrapped(api_key, response_class, api_version, response) -> list[int]:
    return error_codes(api_key, response_class, api_version, response.response)


# A body cached per metadata image is answered many times: its codes are kept, by the body's
# identity (its bytes are a bytearray, so it has no hash), while it lives.
_BODY_CODES: dict[int, tuple[weakref.ref, list[int]]] = {}


def _encoded_body(api_key, response_class, api_version, encoded) -> list[int]:
    key = id(encoded)
    kept = _BODY_CODES.get(key)
    if kept is not None and kept[0]() is encoded:
        return kept[1]
    message = response_class.decode(encoded.body, version=api_version)
    codes = _codes_of(message, _paths(api_key, response_class, api_version))
    _BODY_CODES[key] = (weakref.ref(encoded, lambda _, key=key: _BODY_CODES.pop(key, None)), codes)
    return codes


def _framed(api_key, response_class, api_version, response) -> list[int]:
    """A framed response: the codes its handler noted (Fetch does), else read back from its
    size, its header (the correlation id, then in flexible versions the tagged fields), and
    the body."""
    if getattr(response, "error_codes", None) is not None:
        return response.error_codes
    frame = memoryview(response.frame)
    pos = body_offset(frame, flexible=response_class.flexible_version_q(api_version))
    message = response_class.decode(frame[pos:], version=api_version)
    return _codes_of(message, _paths(api_key, response_class, api_version))


_READERS: dict[type, Any] = {}
