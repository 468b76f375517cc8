"""Compatibility levels: which earlier versions a new schema is checked against, and how.

- BACKWARD: the new schema reads data written with the latest version;
- FORWARD: the latest version reads data written with the new schema;
- FULL: both; the *_TRANSITIVE levels check every live version, not only the latest;
- NONE: no check.

Messages follow Confluent's: one entry per incompatibility, then the old schema's version,
the old schema, and the level, e.g. `{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', ...}`,
`{oldSchemaVersion: 1}`, `{oldSchema: '...'}`, `{compatibility: 'BACKWARD'}`.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.schema_registry.compatibility import avro, json_schema, protobuf
from engine.schema_registry.schemas.base import ParsedSchema, SchemaType

LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE")
DEFAULT_LEVEL = "BACKWARD"
CHECKERS = {SchemaType.AVRO: avro.check, SchemaType.PROTOBUF: protobuf.check, SchemaType.JSON: json_schema.check}
MAX_SCHEMA_IN_MESSAGE = 2000


@dataclass(frozen=True)
class PreviousVersion:
    version: int
    schema: ParsedSchema


def check(level: str, new: ParsedSchema, previous: list[PreviousVersion]) -> list[str]:
    """Confluent's messages for each reason `new` breaks `level` (empty: compatible).

    `previous` holds the subject's live versions, oldest first."""
    if level == "NONE" or not previous:
        return []
    against = previous if level.endswith("_TRANSITIVE") else previous[-1:]
    base = level.removesuffix("_TRANSITIVE")
    # Newest first, as Confluent's validator walks them: the first failing version is reported.
    for old in reversed(against):
        messages = _one(base, new, old)
        if messages:
            return messages + [f"{{compatibility: '{level}'}}"]
    return []


def _one(base: str, new: ParsedSchema, old: PreviousVersion) -> list[str]:
    if new.schema_type is not old.schema.schema_type:
        return ["Incompatible because of different schema type"]
    checker = CHECKERS[new.schema_type]
    messages: list[str] = []
    if base in ("BACKWARD", "FULL"):
        messages += [i.message("new", "old") for i in checker(new.model, old.schema.model)]
    if base in ("FORWARD", "FULL"):
        messages += [i.message("old", "new") for i in checker(old.schema.model, new.model)]
    if messages:
        text = old.schema.text
        if len(text) > MAX_SCHEMA_IN_MESSAGE:
            text = f"<truncated> '{text[:MAX_SCHEMA_IN_MESSAGE]}...'"
            messages += [f"{{oldSchemaVersion: {old.version}}}", f"{{oldSchema: {text}}}"]
        else:
            messages += [f"{{oldSchemaVersion: {old.version}}}", f"{{oldSchema: '{text}'}}"]
    return messages
