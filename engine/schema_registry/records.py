"""The records of `_schemas`, in Confluent Schema Registry's key and value JSON formats.

Keys (compaction keeps the last value per key, so a key must be byte-identical to the one
Confluent's registry writes for the same thing; Jackson writes these properties in this order):
    {"keytype":"SCHEMA","subject":S,"version":V,"magic":1}    one subject version
    {"keytype":"CONFIG","subject":S|null,"magic":0}          compatibility level (null: global)
    {"keytype":"MODE","subject":S|null,"magic":0}            READWRITE / READONLY / IMPORT
    {"keytype":"DELETE_SUBJECT","subject":S,"magic":0}       soft delete of a subject's versions
    {"keytype":"CLEAR_SUBJECT","subject":S,"magic":0}        hard delete of a subject's soft-deleted versions
    {"keytype":"NOOP","magic":0}                             a marker, no state
Values:
    SCHEMA   {"subject","version","id","schemaType" (absent for AVRO),"references" (if any),"schema","deleted"}
    CONFIG   {"compatibilityLevel": LEVEL}
    MODE     {"mode": MODE}
    DELETE_SUBJECT {"subject", "version"}: every version up to `version` is soft deleted
A null value (tombstone) deletes: a SCHEMA key's tombstone is the hard delete of that version,
a CONFIG or MODE tombstone removes the subject's setting.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SCHEMA, CONFIG, MODE, DELETE_SUBJECT, CLEAR_SUBJECT, NOOP = (
    "SCHEMA", "CONFIG", "MODE", "DELETE_SUBJECT", "CLEAR_SUBJECT", "NOOP")


def _dump(value: dict) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def schema_key(subject: str, version: int) -> bytes:
    return _dump({"keytype": SCHEMA, "subject": subject, "version": version, "magic": 1})


def config_key(subject: str | None) -> bytes:
    return _dump({"keytype": CONFIG, "subject": subject, "magic": 0})


def mode_key(subject: str | None) -> bytes:
    return _dump({"keytype": MODE, "subject": subject, "magic": 0})


def delete_subject_key(subject: str) -> bytes:
    return _dump({"keytype": DELETE_SUBJECT, "subject": subject, "magic": 0})


def noop_key() -> bytes:
    return _dump({"keytype": NOOP, "magic": 0})


def schema_value(*, subject: str, version: int, schema_id: int, schema_type: str, references: list[dict],
                 schema: str, deleted: bool) -> bytes:
    value: dict[str, Any] = {"subject": subject, "version": version, "id": schema_id}
    if schema_type != "AVRO":
        value["schemaType"] = schema_type
    if references:
        value["references"] = references
    value["schema"] = schema
    value["deleted"] = deleted
    return _dump(value)


def config_value(level: str) -> bytes:
    return _dump({"compatibilityLevel": level})


def mode_value(mode: str) -> bytes:
    return _dump({"mode": mode})


def delete_subject_value(subject: str, version: int) -> bytes:
    return _dump({"subject": subject, "version": version})


@dataclass(frozen=True)
class Record:
    """One decoded `_schemas` record; `value` is None for a tombstone."""
    offset: int
    keytype: str
    key: dict
    value: dict | None


class UnreadableRecord(ValueError):
    """A record whose key or value is not Confluent's JSON: logged and skipped, as Karapace does."""


def decode(offset: int, key: bytes | None, value: bytes | None) -> Record:
    try:
        key_json = json.loads(key) if key else None
        value_json = json.loads(value) if value else None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UnreadableRecord(f"offset {offset}: not JSON ({exc})") from None
    if not isinstance(key_json, dict) or not isinstance(key_json.get("keytype"), str):
        raise UnreadableRecord(f"offset {offset}: the key has no keytype")
    if value_json is not None and not isinstance(value_json, dict):
        raise UnreadableRecord(f"offset {offset}: the value is not a JSON object")
    return Record(offset, key_json["keytype"], key_json, value_json)
