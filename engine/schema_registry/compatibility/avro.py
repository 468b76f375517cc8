"""Avro compatibility: can data written with one schema be read with another?

The rules are the specification's schema resolution ("Schema Resolution", Avro 1.11):
- the same primitive, or a promotion: int to long, float or double; long to float or
  double; float to double; string to bytes and bytes to string;
- records match by unqualified name (or a reader alias); each reader field takes the
  writer's field of the same name (or an alias), else it needs a default; writer fields
  the reader lacks are skipped;
- enums match by name, and every writer symbol must be a reader symbol unless the reader
  has a default symbol; fixed types match by name and size;
- arrays and maps by their items and values;
- a writer union needs each branch readable; a reader union needs one branch that reads the
  writer's type.

Each incompatibility is reported as Confluent's registry does
(io.confluent.kafka.schemaregistry.avro.Difference): its type, a sentence with "%s" left for
"new"/"old" (which side is the reader depends on the direction checked), and the location
as a JSON-pointer-like path from the reader schema's root.

A pair of named types is checked once, as Avro's own ReaderWriterCompatibilityChecker
memoizes pairs: its incompatibilities are reported where the pair is first met, and a later
meeting stands for them with the first one. A record that uses another record in two fields,
nested twenty deep, is then twenty checks, not a million, and the registry is not held up.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.schema_registry.schemas.avro import PRIMITIVES, AvroModel

PROMOTIONS = {
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "string": {"bytes"},
    "bytes": {"string"},
}


@dataclass(frozen=True)
class Incompatibility:
    kind: str
    location: str
    detail: str

    def message(self, reader: str, writer: str) -> str:
        text = {
            "FIXED_SIZE_MISMATCH": f"The size of FIXED type field at path '{self.location}' in the {reader} schema "
                                   f"does not match with the {writer} schema",
            "TYPE_MISMATCH": f"The type (path '{self.location}') of a field in the {reader} schema does not match "
                             f"with the {writer} schema",
            "NAME_MISMATCH": f"The name of the schema has changed (path '{self.location}')",
            "MISSING_ENUM_SYMBOLS": f"The {reader} schema is missing enum symbols '{self.detail}' at path "
                                    f"'{self.location}' in the {writer} schema",
            "MISSING_UNION_BRANCH": f"The {reader} schema is missing a type inside a union field at path "
                                    f"'{self.location}' in the {writer} schema",
            "READER_FIELD_MISSING_DEFAULT_VALUE": f"The field '{self.detail}' at path '{self.location}' in the "
                                                  f"{reader} schema has no default value and is missing in the "
                                                  f"{writer} schema",
        }[self.kind]
        return f"{{errorType:'{self.kind}', description:'{text}', additionalInfo:'{self.detail}'}}"


def check(reader: AvroModel, writer: AvroModel) -> list[Incompatibility]:
    """Every reason `reader` cannot read what `writer` wrote (empty: compatible)."""
    found = _Checker(reader, writer).check(reader.parsed, writer.parsed, "/")
    return list({id(i): i for i in found}.values())      # a memoized pair's first one, once


class _Checker:
    def __init__(self, reader: AvroModel, writer: AvroModel) -> None:
        self.reader = reader
        self.writer = writer
        self.in_progress: set[tuple[str, str]] = set()   # recursive types: a pair being checked is assumed fine
        self.checked: dict[tuple[str, str], list[Incompatibility]] = {}

    def check(self, reader: Any, writer: Any, path: str) -> list[Incompatibility]:
        reader, writer = self.reader.resolve(reader), self.writer.resolve(writer)
        pair = (_name(reader), _name(writer))
        if pair[0] and pair[1]:
            if pair in self.checked:
                return self.checked[pair][:1]
            if pair in self.in_progress:
                return []
            self.in_progress.add(pair)
            try:
                found = self.checked[pair] = self._check(reader, writer, path)
                return found
            finally:
                self.in_progress.discard(pair)
        return self._check(reader, writer, path)

    def _check(self, reader: Any, writer: Any, path: str) -> list[Incompatibility]:
        writer_kind, reader_kind = _kind(writer), _kind(reader)
        if writer_kind == "union":
            found: list[Incompatibility] = []
            for branch in writer:
                found += self.check(reader, branch, path)
            return found
        if reader_kind == "union":
            for branch in reader:
                if not self.check(branch, writer, path):
                    return []
            return [Incompatibility("MISSING_UNION_BRANCH", path, f"reader union lacking writer type: {writer_kind.upper()}")]
        if reader_kind == writer_kind:
            return self._same_kind(reader, writer, reader_kind, path)
        if reader_kind in PROMOTIONS.get(writer_kind, ()):
            return []
        return [Incompatibility("TYPE_MISMATCH", path,
                                f"reader type: {reader_kind.upper()} not compatible with writer type: "
                                f"{writer_kind.upper()}")]

    def _same_kind(self, reader: Any, writer: Any, kind: str, path: str) -> list[Incompatibility]:
        if kind in PRIMITIVES:
            return []
        if kind in ("record", "error", "enum", "fixed") and not _names_match(reader, writer):
            return [Incompatibility("NAME_MISMATCH", _join(path, "name"),
                                    f"expected: {_short_name(writer['name'])}")]
        if kind == "fixed" and reader.get("size") != writer.get("size"):
            return [Incompatibility("FIXED_SIZE_MISMATCH", _join(path, "size"),
                                    f"expected: {writer.get('size')}, found: {reader.get('size')}")]
        if kind == "enum":
            missing = [s for s in writer.get("symbols", []) if s not in reader.get("symbols", [])]
            if missing and "default" not in reader:
                return [Incompatibility("MISSING_ENUM_SYMBOLS", _join(path, "symbols"), "[" + ", ".join(missing) + "]")]
            return []
        if kind == "array":
            return self.check(reader["items"], writer["items"], _join(path, "items"))
        if kind == "map":
            return self.check(reader["values"], writer["values"], _join(path, "values"))
        if kind in ("record", "error"):
            return self._record(reader, writer, path)
        return []

    def _record(self, reader: dict, writer: dict, path: str) -> list[Incompatibility]:
        found: list[Incompatibility] = []
        writer_fields = {f["name"]: f for f in writer.get("fields", [])}
        for index, field in enumerate(reader.get("fields", [])):
            match = writer_fields.get(field["name"])
            if match is None:
                match = next((writer_fields[a] for a in field.get("aliases", []) if a in writer_fields), None)
            field_path = _join(_join(path, "fields"), str(index))
            if match is None:
                if "default" not in field:
                    found.append(Incompatibility("READER_FIELD_MISSING_DEFAULT_VALUE", field_path, field["name"]))
                continue
            found += self.check(field["type"], match["type"], _join(field_path, "type"))
        return found


def _kind(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    if isinstance(schema, str):
        return schema if schema in PRIMITIVES else "unknown"
    kind = schema.get("type")
    return kind if isinstance(kind, str) else _kind(kind)


def _name(schema: Any) -> str | None:
    return schema.get("name") if isinstance(schema, dict) and schema.get("type") in ("record", "error", "enum", "fixed") \
        else None


def _names_match(reader: dict, writer: dict) -> bool:
    writer_name = _short_name(writer["name"])
    if _short_name(reader["name"]) == writer_name:
        return True
    return any(_short_name(alias) == writer_name for alias in reader.get("aliases", []))


def _short_name(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _join(path: str, part: str) -> str:
    return path + part if path.endswith("/") else f"{path}/{part}"
