"""JSON schemas, checked by the jsonschema library against their draft's metaschema.

A reference's name is the URI the schema's `$ref` uses (e.g. "customer.json"): every
dependency is put in a `referencing.Registry` under that name, and every `$ref` of the
schema must resolve there or inside the schema itself, else the schema is refused (42201).
The canonical form is the JSON with sorted keys and no whitespace.

Values are validated (the console's produce) with the schema's own draft, except that
`pattern`, `patternProperties` and `additionalProperties` match with RE2, in time linear in
the value: jsonschema's own keywords run Python's backtracking `re`, where `^(a+)+$` over 64
`a`s and a `!` never ends and holds the GIL meanwhile. A pattern RE2 does not run
(backreferences, look-around) fails the value with RE2's reason.
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import re2
import referencing
import referencing.exceptions
from jsonschema import exceptions as jsonschema_errors
from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend, validator_for
from referencing.jsonschema import DRAFT7

from engine.schema_registry.schemas.base import InvalidSchema, ParsedSchema, Reference, SchemaType


class JsonModel:
    def __init__(self, document: Any, registry: referencing.Registry) -> None:
        self.document = document
        self.registry = registry

    def validator(self):
        """A validator of values for this schema, its regex keywords on RE2."""
        cls = validator_for(self.document, default=validator_for({"$schema": "http://json-schema.org/draft-07/schema#"}))
        return _on_re2(cls)(self.document, registry=self.registry)

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


# -- regex keywords on RE2 -------------------------------------------------------------------

MAX_PROGRAM_BYTES = 8 << 20      # RE2 refuses larger programs (a{1000}{1000}): memory is bounded too


@lru_cache(maxsize=1024)
def _regex(pattern: str):
    """(compiled, None), or (None, why RE2 does not run the pattern)."""
    options = re2.Options()
    options.log_errors = False
    options.max_mem = MAX_PROGRAM_BYTES
    try:
        return re2.compile(pattern, options=options), None
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return None, f"the pattern {pattern!r} is not one RE2 runs ({reason}; no backreferences or look-around)"


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string"):
        compiled, problem = _regex(pattern)
        if problem:
            yield ValidationError(problem)
        elif not compiled.search(instance):
            yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator, patterns, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        compiled, problem = _regex(pattern)
        if problem:
            yield ValidationError(problem)
            continue
        for key, value in instance.items():
            if compiled.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator, additional, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = [c for c, _ in map(_regex, schema.get("patternProperties", {})) if c is not None]
    extras = sorted((k for k in instance if k not in properties and not any(c.search(k) for c in patterns)), key=str)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        names = ", ".join(repr(e) for e in extras)
        if "patternProperties" in schema:
            regexes = ", ".join(repr(p) for p in sorted(schema["patternProperties"]))
            yield ValidationError(f"{names} {'does' if len(extras) == 1 else 'do'} not match any of the regexes: "
                                  f"{regexes}")
        else:
            yield ValidationError(f"Additional properties are not allowed ({names} "
                                  f"{'was' if len(extras) == 1 else 'were'} unexpected)")


@lru_cache(maxsize=None)
def _on_re2(cls):
    return extend(cls, {"pattern": _pattern, "patternProperties": _pattern_properties,
                        "additionalProperties": _additional_properties})
