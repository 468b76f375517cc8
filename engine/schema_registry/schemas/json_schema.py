"""JSON schemas, checked by the jsonschema library against their draft's metaschema.

A reference's name is the URI the schema's `$ref` uses (e.g. "customer.json"): every
dependency is put in a `referencing.Registry` under that name, and every `$ref` of the
schema must resolve there or inside the schema itself, else the schema is refused (42201).
The canonical form is the JSON with sorted keys and no whitespace.
"""
from __future__ import annotations

import json
from typing import Any

import referencing
import referencing.exceptions
from jsonschema import exceptions as jsonschema_errors
from jsonschema.validators import validator_for
from referencing.jsonschema import DRAFT7

from engine.schema_registry.schemas.base import InvalidSchema, ParsedSchema, Reference, SchemaType


class JsonModel:
    def __init__(self, document: Any, registry: referencing.Registry) -> None:
        self.document = document
        self.registry = registry

    def validator(self):
        cls = validator_for(self.document, default=validator_for({"$schema": "http://json-schema.org/draft-07/schema#"}))
        return cls(self.document, registry=self.registry)

    def resolver(self):
        return self.registry.resolver_with_root(_resource(self.document))


def parse(text: str, references: tuple[Reference, ...], dependencies: dict[str, ParsedSchema],
          normalize: bool = False) -> ParsedSchema:
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidSchema(f"Invalid schema {_short(text)}: {exc}") from None
    if not isinstance(document, (dict, bool)):
        raise InvalidSchema(f"Invalid schema {_short(text)}: a JSON schema is an object or a boolean")
    registry = referencing.Registry()
    for name, dependency in dependencies.items():
        if dependency.schema_type is not SchemaType.JSON:
            raise InvalidSchema("A JSON schema can only reference JSON schemas")
        registry = registry.with_resources(list(dependency.model.registry.items()))
        registry = registry.with_resource(name, _resource(dependency.model.document))
    cls = validator_for(document, default=validator_for({"$schema": "http://json-schema.org/draft-07/schema#"}))
    try:
        cls.check_schema(document)
    except jsonschema_errors.SchemaError as exc:
        location = "/".join(str(p) for p in exc.absolute_path)
        raise InvalidSchema(f"Invalid schema: {exc.message}" + (f" at /{location}" if location else "")) from None
    model = JsonModel(document, registry)
    _check_refs(document, model)
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    stored = canonical if normalize else json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    return ParsedSchema(SchemaType.JSON, stored, canonical, references, dependencies, model)


def _resource(document: Any) -> referencing.Resource:
    return referencing.Resource.from_contents(document, default_specification=DRAFT7)


def _check_refs(document: Any, model: JsonModel) -> None:
    resolver = model.resolver()
    for ref in _refs(document):
        try:
            resolver.lookup(ref)
        except (referencing.exceptions.Unresolvable, referencing.exceptions.NoSuchResource,
                referencing.exceptions.PointerToNowhere, ValueError, TypeError) as exc:
            raise InvalidSchema(f"Invalid schema: $ref {ref!r} does not resolve ({type(exc).__name__}); "
                                "a schema in another subject must be named by a reference") from None


def _refs(node: Any):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples"):
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:200] + "..."
