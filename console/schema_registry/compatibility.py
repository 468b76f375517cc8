"""The registry's compatibility verdict as sentences a person reads.

Confluent's registry (and ours, engine/schema_registry/compatibility) answers a verbose check
with strings in its own notation, one per line:

    {errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'total' at path
     '/fields/2' in the new schema has no default value and is missing in the old schema',
     additionalInfo:'total'}
    {oldSchemaVersion: 1}
    {oldSchema: '{"type":"record",...}'}
    {compatibility: 'BACKWARD'}            (Confluent 7.x: {validateFields: 'false', compatibility: 'BACKWARD'})

Avro's use single quotes (and the description quotes inside them, unescaped), Protobuf's and
JSON Schema's double quotes. `parse_verdict` turns them into problems (the error type in words,
the description, the field), the version checked against and the level; a line it does not
recognise stays as it is, and the raw lines are kept for the page's "as the registry said".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Confluent's error types in words; others are spelt out from their name.
ERROR_TYPES = {
    # Avro (SchemaCompatibility.SchemaIncompatibilityType)
    "READER_FIELD_MISSING_DEFAULT_VALUE": "A field without a default value",
    "TYPE_MISMATCH": "A field's type changed",
    "NAME_MISMATCH": "The record's name changed",
    "FIXED_SIZE_MISMATCH": "A fixed type's size changed",
    "MISSING_ENUM_SYMBOLS": "Enum symbols removed",
    "MISSING_UNION_BRANCH": "A union branch removed",
    # Protobuf
    "MESSAGE_REMOVED": "A message removed",
    "FIELD_KIND_CHANGED": "A field's kind changed",
    "FIELD_SCALAR_KIND_CHANGED": "A scalar field's type changed",
    "FIELD_NAMED_TYPE_CHANGED": "A message field's type changed",
    "REQUIRED_FIELD_ADDED": "A required field added",
    "REQUIRED_FIELD_REMOVED": "A required field removed",
    "ONEOF_FIELD_REMOVED": "A oneof field removed",
    "PACKAGE_CHANGED": "The package changed",
    # JSON Schema
    "TYPE_CHANGED": "A type changed",
    "TYPE_NARROWED": "A type narrowed",
    "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL": "A property removed from a closed content model",
    "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL": "A property added to an open content model",
    "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL": "A required property added",
    "ADDITIONAL_PROPERTIES_REMOVED": "Additional properties no longer allowed",
    "ENUM_ARRAY_NARROWED": "Enum values removed",
}

_ERROR = re.compile(r"""^\{\s*errorType:\s*(['"])(?P<type>[A-Za-z0-9_]+)\1\s*,\s*description:\s*(['"])(?P<desc>.*?)\3\s*
                        (?:,\s*additionalInfo:\s*(['"])(?P<info>.*?)\5\s*)?\}$""", re.S | re.X)
_OLD_VERSION = re.compile(r"^\{\s*oldSchemaVersion:\s*(\d+)\s*\}$")
_OLD_SCHEMA = re.compile(r"^\{\s*oldSchema:\s*(.*)\}$", re.S)
_LEVEL = re.compile(r"^\{[^{}]*\bcompatibility:\s*'([A-Z_]+)'[^{}]*\}$")
_PATH = re.compile(r"""path:?\s*'([^']*)'""")
_JSON_PATH = re.compile(r"""(?:jsonPath='([^']*)'|at (#\S*))""")


@dataclass(frozen=True)
class Problem:
    error_type: str          # Confluent's name, READER_FIELD_MISSING_DEFAULT_VALUE
    words: str               # the same in words
    description: str
    field: str = ""          # the field it is about (Avro's additionalInfo), when said
    path: str = ""           # where in the schema, when said


@dataclass
class Verdict:
    is_compatible: bool
    problems: list[Problem] = field(default_factory=list)
    old_version: int | None = None       # the version the registry checked against (the first that failed)
    old_schema: str = ""
    level: str = ""
    notes: list[str] = field(default_factory=list)   # lines in no known notation, as they are
    raw: list[str] = field(default_factory=list)     # every line as the registry sent it


def words_for(error_type: str) -> str:
    return ERROR_TYPES.get(error_type) or error_type.replace("_", " ").lower().capitalize()


def parse_problem(line: str) -> Problem | None:
    found = _ERROR.match(line.strip())
    if found is None:
        return None
    description = found["desc"].strip().rstrip(".")
    path = _PATH.search(description) or _JSON_PATH.search(description)
    return Problem(error_type=found["type"], words=words_for(found["type"]), description=description,
                   field=(found["info"] or "").strip(), path=next((g for g in path.groups() if g), "") if path else "")


def parse_verdict(answer: dict) -> Verdict:
    """The registry's verbose answer ({"is_compatible": bool, "messages": [str]}) read out."""
    lines = [str(m) for m in answer.get("messages") or []]
    verdict = Verdict(is_compatible=bool(answer.get("is_compatible")), raw=lines)
    for line in lines:
        text = line.strip()
        problem = parse_problem(text)
        if problem is not None:
            verdict.problems.append(problem)
        elif match := _OLD_VERSION.match(text):
            verdict.old_version = int(match[1])
        elif match := _OLD_SCHEMA.match(text):
            verdict.old_schema = match[1].strip().strip("'")
        elif match := _LEVEL.match(text):
            verdict.level = match[1]
        else:
            verdict.notes.append(text)
    return verdict
