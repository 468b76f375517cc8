"""What every schema format gives the registry: a parsed schema with its canonical form.

A `ParsedSchema` carries
- `text`: what the registry stores and returns (the schema as given, without insignificant
  whitespace; with `normalize=true`, its normalized form);
- `canonical`: the form two schemas are compared by: equal canonical forms (and equal
  references) are one schema, which keeps one id across subjects;
- `references` and the parsed `dependencies` they resolved to;
- `model`: the format's own parsed object, for compatibility checks and decoding.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class SchemaType(str, Enum):
    AVRO = "AVRO"
    PROTOBUF = "PROTOBUF"
    JSON = "JSON"

    @classmethod
    def parse(cls, value: str | None) -> "SchemaType":
        """Confluent's schemaType field: absent means AVRO; the name is case-insensitive."""
        if value is None or value == "":
            return cls.AVRO
        try:
            return cls(str(value).upper())
        except ValueError:
            raise InvalidSchema(f"Invalid schema type {value}: expected one of AVRO, PROTOBUF, JSON") from None


class InvalidSchema(ValueError):
    """The schema does not parse, or a reference does not resolve: Confluent's 42201."""


@dataclass(frozen=True)
class Reference:
    """A schema reference: `name` is how the schema names it (an Avro full name, a .proto
    import path, a JSON Schema $ref URI); `subject` and `version` locate it in the registry."""
    name: str
    subject: str
    version: int

    def to_json(self) -> dict:
        return {"name": self.name, "subject": self.subject, "version": self.version}

    @classmethod
    def from_json(cls, value: Any) -> "Reference":
        if not isinstance(value, dict):
            raise InvalidSchema("A reference must be an object with name, subject and version")
        name, subject, version = value.get("name"), value.get("subject"), value.get("version", -1)
        if not isinstance(name, str) or not name or not isinstance(subject, str) or not subject:
            raise InvalidSchema("A reference needs a name and a subject")
        if isinstance(version, bool) or not isinstance(version, int):
            raise InvalidSchema(f"Invalid reference version {version!r}")
        return cls(name, subject, version)


@dataclass
class ParsedSchema:
    schema_type: SchemaType
    text: str
    canonical: str
    references: tuple[Reference, ...] = ()
    dependencies: dict[str, "ParsedSchema"] = field(default_factory=dict)
    model: Any = None

    @property
    def identity(self) -> tuple:
        """What makes two registered schemas the same schema (and so the same id)."""
        return (self.schema_type.value, self.canonical, self.references)


def in_dependency_order(dependencies: dict[str, ParsedSchema]) -> list[tuple[str, ParsedSchema]]:
    """Every (reference name, schema) reachable from `dependencies`, each after the ones it
    references, each pair once. Iterative and memoized: a chain of a thousand references needs
    no deeper call stack, and a schema reached along two paths (two references that both
    reference a third, repeated level after level) is visited once, so twenty such levels are
    forty visits rather than a million."""
    ordered: list[tuple[str, ParsedSchema]] = []
    entered: set[tuple[str, int]] = set()
    stack = [(name, schema, False) for name, schema in reversed(list(dependencies.items()))]
    while stack:
        name, schema, finished = stack.pop()
        if finished:
            ordered.append((name, schema))
            continue
        if (name, id(schema)) in entered:
            continue
        entered.add((name, id(schema)))
        stack.append((name, schema, True))
        stack.extend((inner_name, inner, False) for inner_name, inner in reversed(list(schema.dependencies.items()))
                     if (inner_name, id(inner)) not in entered)
    return ordered
