"""Checking what a request carries: subject names, versions, schema bodies, levels, modes.

Every check raises Confluent's error for what is wrong, before anything is looked up or
written: a bad subject is 42208, a bad version 42202, an unparseable schema 42201, a bad
level 42203, a bad mode 42204.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.schema_registry import errors
from engine.schema_registry.compatibility import LEVELS
from engine.schema_registry.schemas import InvalidSchema, Reference, SchemaType

LATEST = -1
MAX_VERSION = 2 ** 31 - 1
MAX_SUBJECT_LENGTH = 1024
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")


def subject(name: str) -> str:
    if not name or len(name) > MAX_SUBJECT_LENGTH or any(ord(c) < 0x20 or ord(c) == 0x7f for c in name) \
            or name in ("__GLOBAL", "__EMPTY"):
        raise errors.invalid_subject(name[:200])
    return name


def version(text: str) -> int:
    """A version id from a path: 1..2^31-1, or "latest" / -1 (LATEST)."""
    if text == "latest" or text == "-1":
        return LATEST
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise errors.invalid_version(str(text)[:100]) from None
    if not 1 <= value <= MAX_VERSION:
        raise errors.invalid_version(str(text)[:100])
    return value


def whole_number(name: str, value: str | None, default: int) -> int:
    """An integer query parameter (`offset`, `limit`); a readable 400 otherwise."""
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise errors.RegistryError(400, 400, f"The query parameter {name} must be a whole number, "
                                             f"not {value[:40]!r}") from None


def flag(value: str | None) -> bool:
    """A boolean query parameter: Jersey's rules (true in any case is true, anything else false)."""
    return value is not None and value.strip().lower() == "true"


@dataclass(frozen=True)
class SchemaRequest:
    schema_type: SchemaType
    schema: str
    references: tuple[Reference, ...]
    schema_id: int | None = None
    version: int | None = None


def schema_request(body: object) -> SchemaRequest:
    if not isinstance(body, dict):
        raise errors.invalid_schema("The request body must be a JSON object with a \"schema\" field")
    text = body.get("schema")
    if not isinstance(text, str) or not text.strip():
        raise errors.invalid_schema("Empty schema")
    try:
        schema_type = SchemaType.parse(body.get("schemaType"))
        refs = body.get("references") or []
        if not isinstance(refs, list):
            raise InvalidSchema("references must be a list")
        references = tuple(Reference.from_json(r) for r in refs)
    except InvalidSchema as exc:
        raise errors.invalid_schema(str(exc)) from None
    if len({r.name for r in references}) != len(references):
        raise errors.invalid_schema("Two references have the same name")
    schema_id, version_number = body.get("id"), body.get("version")
    for name, value in (("id", schema_id), ("version", version_number)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < -1):
            raise errors.invalid_schema(f"Invalid {name} {value!r}")
    return SchemaRequest(schema_type, text, references,
                         None if schema_id in (None, -1, 0) else schema_id,
                         None if version_number in (None, -1, 0) else version_number)


def level(body: object) -> str:
    value = body.get("compatibility", body.get("compatibilityLevel")) if isinstance(body, dict) else None
    if not isinstance(value, str) or value.upper() not in LEVELS:
        raise errors.invalid_compatibility_level()
    return value.upper()


def mode(body: object) -> str:
    value = body.get("mode") if isinstance(body, dict) else None
    if not isinstance(value, str) or value.upper() not in MODES:
        raise errors.invalid_mode()
    return value.upper()
