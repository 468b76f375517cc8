"""Parse a schema of any of the three types: `parse(schema_type, text, references, dependencies)`."""
from __future__ import annotations

from engine.schema_registry.schemas import avro, json_schema, protobuf
from engine.schema_registry.schemas.base import InvalidSchema, ParsedSchema, Reference, SchemaType

PARSERS = {SchemaType.AVRO: avro.parse, SchemaType.PROTOBUF: protobuf.parse, SchemaType.JSON: json_schema.parse}

__all__ = ["InvalidSchema", "ParsedSchema", "Reference", "SchemaType", "parse"]


def parse(schema_type: SchemaType, text: str, references: tuple[Reference, ...] = (),
          dependencies: dict[str, ParsedSchema] | None = None, normalize: bool = False) -> ParsedSchema:
    if not isinstance(text, str) or not text.strip():
        raise InvalidSchema("Empty schema")
    return PARSERS[schema_type](text, tuple(references), dict(dependencies or {}), normalize)
