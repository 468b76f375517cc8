"""JSON Schema compatibility: Confluent's rules for open, closed and partially open models.

As in Confluent's registry (io.confluent.kafka.schemaregistry.json.diff), the check lists
the changes from the old schema to the new one and the new schema is compatible when
every change is in the strict set of compatible changes (`COMPATIBLE`). The content
model decides what adding or removing a property or tuple item means:
- open (no additionalProperties, or `true`): old data may hold any extra property, so a
  property added to the new schema with a type may meet old data that contradicts it
  (incompatible), while removing one is fine;
- closed (`additionalProperties: false`): old data holds no extra property, so adding an
  optional property is fine, removing one is not;
- partially open (additionalProperties is a schema): an added or removed property is
  fine when that schema and the property's agree.
`$ref`s are followed (through the schema's references too); a pair of schemas already
being compared is taken as compatible, which ends recursion on recursive schemas. A pair
already compared is not compared again: its changes are reported where it was first met,
and a later meeting stands for them with its first incompatible one. A definition used
twice by the one before it, twenty deep, is then twenty comparisons, not a million, and
the registry is not held up.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.schema_registry.compatibility.json_schema_kinds import (has_default, is_open, partial_schema, schema_kind,
                                                                      schema_of)
from engine.schema_registry.schemas.json_schema import JsonModel

COMPATIBLE = frozenset({
    "ID_CHANGED", "DESCRIPTION_CHANGED", "TITLE_CHANGED", "DEFAULT_CHANGED", "SCHEMA_REMOVED", "TYPE_EXTENDED",
    "MAX_LENGTH_INCREASED", "MAX_LENGTH_REMOVED", "MIN_LENGTH_DECREASED", "MIN_LENGTH_REMOVED", "PATTERN_REMOVED",
    "MAXIMUM_INCREASED", "MAXIMUM_REMOVED", "MINIMUM_DECREASED", "MINIMUM_REMOVED", "EXCLUSIVE_MAXIMUM_INCREASED",
    "EXCLUSIVE_MAXIMUM_REMOVED", "EXCLUSIVE_MINIMUM_DECREASED", "EXCLUSIVE_MINIMUM_REMOVED", "MULTIPLE_OF_REDUCED",
    "MULTIPLE_OF_REMOVED", "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED", "REQUIRED_ATTRIBUTE_REMOVED",
    "DEPENDENCY_ARRAY_NARROWED", "DEPENDENCY_ARRAY_REMOVED", "DEPENDENCY_SCHEMA_REMOVED", "MAX_PROPERTIES_INCREASED",
    "MAX_PROPERTIES_REMOVED", "MIN_PROPERTIES_DECREASED", "MIN_PROPERTIES_REMOVED", "ADDITIONAL_PROPERTIES_ADDED",
    "ADDITIONAL_PROPERTIES_EXTENDED", "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
    "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL", "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
    "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL",
    "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "MAX_ITEMS_INCREASED", "MAX_ITEMS_REMOVED",
    "MIN_ITEMS_DECREASED", "MIN_ITEMS_REMOVED", "UNIQUE_ITEMS_REMOVED", "ADDITIONAL_ITEMS_ADDED",
    "ADDITIONAL_ITEMS_EXTENDED", "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL",
    "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL",
    "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    "ENUM_ARRAY_EXTENDED", "COMBINED_TYPE_EXTENDED", "PRODUCT_TYPE_NARROWED", "SUM_TYPE_EXTENDED", "NOT_TYPE_NARROWED",
})
LIMITS = [  # keyword, added, removed, went up, went down
    ("maxLength", "MAX_LENGTH"), ("minLength", "MIN_LENGTH"), ("maximum", "MAXIMUM"), ("minimum", "MINIMUM"),
    ("exclusiveMaximum", "EXCLUSIVE_MAXIMUM"), ("exclusiveMinimum", "EXCLUSIVE_MINIMUM"),
    ("maxProperties", "MAX_PROPERTIES"), ("minProperties", "MIN_PROPERTIES"), ("maxItems", "MAX_ITEMS"),
    ("minItems", "MIN_ITEMS"),
]


@dataclass(frozen=True)
class Difference:
    kind: str
    path: str

    @property
    def compatible(self) -> bool:
        return self.kind in COMPATIBLE

    def message(self, reader: str, writer: str) -> str:
        return f'{{errorType:"{self.kind}", description:"Found incompatible change: {self.kind} at {self.path}"}}'


def check(reader: JsonModel, writer: JsonModel) -> list[Difference]:
    """The incompatible changes from `writer`'s (old) schema to `reader`'s (new) one."""
    found = {id(d): d for d in differences(writer, reader) if not d.compatible}   # a compared pair's, once
    return list(found.values())


def differences(original: JsonModel, update: JsonModel) -> list[Difference]:
    diff = _Diff(original, update)
    diff.compare(original.document, update.document, "#")
    return diff.found


class _Diff:
    def __init__(self, original: JsonModel, update: JsonModel) -> None:
        self.resolvers = (original.resolver(), update.resolver())
        self.found: list[Difference] = []
        self.in_progress: set[tuple[int, int]] = set()
        # (id, id) -> (the pair itself, kept so that its ids are not reused; its changes)
        self.compared: dict[tuple[int, int], tuple[Any, Any, list[Difference]]] = {}

    def add(self, kind: str, path: str) -> None:
        self.found.append(Difference(kind, path))

    def sub(self) -> "_Diff":
        inner = _Diff.__new__(_Diff)
        inner.resolvers, inner.found, inner.in_progress = self.resolvers, [], self.in_progress
        inner.compared = self.compared
        return inner

    def compatible(self, original: Any, update: Any, path: str) -> tuple[bool, list[Difference]]:
        inner = self.sub()
        inner.compare(original, update, path)
        return all(d.compatible for d in inner.found), inner.found

    def compare(self, original: Any, update: Any, path: str) -> None:
        if original is None and update is None:
            return
        if original is None:
            self.add("SCHEMA_ADDED", path)
            return
        if update is None:
            self.add("SCHEMA_REMOVED", path)
            return
        original, update = self._deref(original, 0), self._deref(update, 1)
        key = (id(original), id(update))
        if key in self.compared:
            self.found += [d for d in self.compared[key][2] if not d.compatible][:1]
            return
        if key in self.in_progress:
            return
        self.in_progress.add(key)
        inner = self.sub()
        try:
            inner._types(schema_kind(original), schema_kind(update), path)
        finally:
            self.in_progress.discard(key)
        self.compared[key] = (original, update, inner.found)
        self.found += inner.found

    def _deref(self, schema: Any, side: int) -> Any:
        for _ in range(32):
            if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
                try:
                    schema = self.resolvers[side].lookup(schema["$ref"]).contents
                except Exception:   # unresolvable here means it was checked when registered
                    return schema
            else:
                return schema
        return schema

    def _types(self, original: tuple[str, Any], update: tuple[str, Any], path: str) -> None:
        (old_kind, old), (new_kind, new) = original, update
        if old_kind != "combined" and new_kind == "combined":
            subschemas = new[1]
            if len(subschemas) == 1:
                ok, found = self.compatible(old, subschemas[0], path)
                if ok:
                    self.found += found
                    return
            elif new[0] in ("anyOf", "oneOf"):
                for subschema in subschemas:
                    ok, found = self.compatible(old, subschema, path)
                    if ok:
                        self.found += found
                        self.add("SUM_TYPE_EXTENDED", path)
                        return
            else:
                for subschema in subschemas:
                    ok, found = self.compatible(old, subschema, path)
                    if ok:
                        self.found += found
                        self.add("PRODUCT_TYPE_NARROWED", path)
                        return
        if old_kind != new_kind and not (old_kind in ("integer", "number") and new_kind in ("integer", "number")):
            if old_kind != "false" and new_kind != "empty":
                self.add("TYPE_CHANGED", path)
            return
        if old_kind in ("empty", "false"):
            return
        old_doc, new_doc = old if isinstance(old, dict) else {}, new if isinstance(new, dict) else {}
        for word, kind in (("$id", "ID_CHANGED"), ("title", "TITLE_CHANGED"), ("description", "DESCRIPTION_CHANGED"),
                           ("default", "DEFAULT_CHANGED")):
            if old_doc.get(word) != new_doc.get(word):
                self.add(kind, path)
        if old_kind in ("integer", "number") and old_kind != new_kind:
            self.add("TYPE_EXTENDED" if old_kind == "integer" else "TYPE_NARROWED", path)
        self._limits(old_doc, new_doc, path)
        handler = {"string": self._string, "integer": self._number, "number": self._number, "enum": self._enum,
                   "const": self._const, "combined": self._combined, "not": self._not, "object": self._object,
                   "array": self._array}.get(old_kind)
        if handler is not None:
            handler(old, new, path)

    def _limits(self, old: dict, new: dict, path: str) -> None:
        for word, name in LIMITS:
            before, after = old.get(word), new.get(word)
            if before == after or isinstance(before, bool) or isinstance(after, bool):
                continue
            if before is None:
                self.add(f"{name}_ADDED", f"{path}/{word}")
            elif after is None:
                self.add(f"{name}_REMOVED", f"{path}/{word}")
            elif isinstance(before, (int, float)) and isinstance(after, (int, float)):
                self.add(f"{name}_INCREASED" if after > before else f"{name}_DECREASED", f"{path}/{word}")

    def _string(self, old: dict, new: dict, path: str) -> None:
        before, after = old.get("pattern"), new.get("pattern")
        if before != after:
            kind = "PATTERN_ADDED" if before is None else "PATTERN_REMOVED" if after is None else "PATTERN_CHANGED"
            self.add(kind, f"{path}/pattern")

    def _number(self, old: dict, new: dict, path: str) -> None:
        before, after = old.get("multipleOf"), new.get("multipleOf")
        if before == after:
            return
        if before is None:
            self.add("MULTIPLE_OF_ADDED", f"{path}/multipleOf")
        elif after is None:
            self.add("MULTIPLE_OF_REMOVED", f"{path}/multipleOf")
        elif after % before == 0:
            self.add("MULTIPLE_OF_EXPANDED", f"{path}/multipleOf")
        elif before % after == 0:
            self.add("MULTIPLE_OF_REDUCED", f"{path}/multipleOf")
        else:
            self.add("MULTIPLE_OF_CHANGED", f"{path}/multipleOf")

    def _enum(self, old: dict, new: dict, path: str) -> None:
        before, after = old.get("enum", []), new.get("enum", [])
        if before == after:
            return
        if all(v in after for v in before):
            self.add("ENUM_ARRAY_EXTENDED", f"{path}/enum")
        elif all(v in before for v in after):
            self.add("ENUM_ARRAY_NARROWED", f"{path}/enum")
        else:
            self.add("ENUM_ARRAY_CHANGED", f"{path}/enum")

    def _const(self, old: dict, new: dict, path: str) -> None:
        if old.get("const") != new.get("const"):
            self.add("ENUM_ARRAY_CHANGED", f"{path}/const")

    def _not(self, old: dict, new: dict, path: str) -> None:
        ok, _ = self.compatible(new.get("not"), old.get("not"), f"{path}/not")
        self.add("NOT_TYPE_NARROWED" if ok else "NOT_TYPE_EXTENDED", f"{path}/not")

    def _combined(self, old: tuple, new: tuple, path: str) -> None:
        (old_word, old_subs), (new_word, new_subs) = old, new
        if old_word != new_word:
            self.add("COMBINED_TYPE_CHANGED", path)
            return
        matched = _matching(self, old_subs, new_subs, f"{path}/{old_word}")
        if matched < min(len(old_subs), len(new_subs)):
            self.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path)
        elif len(old_subs) < len(new_subs):
            self.add("PRODUCT_TYPE_EXTENDED" if old_word == "allOf" else "SUM_TYPE_EXTENDED", path)
        elif len(old_subs) > len(new_subs):
            self.add("PRODUCT_TYPE_NARROWED" if old_word == "allOf" else "SUM_TYPE_NARROWED", path)

    def _object(self, old: dict, new: dict, path: str) -> None:
        old_props, new_props = old.get("properties", {}) or {}, new.get("properties", {}) or {}
        old_required, new_required = set(old.get("required", []) or []), set(new.get("required", []) or [])
        for name in old_props:
            if name in new_props:
                if name in old_required and name not in new_required:
                    self.add("REQUIRED_ATTRIBUTE_REMOVED", f"{path}/required/{name}")
                elif name not in old_required and name in new_required:
                    self.add("REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED" if has_default(new_props[name])
                             else "REQUIRED_ATTRIBUTE_ADDED", f"{path}/required/{name}")
        for name in sorted(old_props.keys() | new_props.keys()):
            where = f"{path}/properties/{name}"
            if name not in new_props:
                self._property_removed(old_props[name], new, where)
            elif name not in old_props:
                self._property_added(new_props[name], name in new_required, old, where)
            else:
                self.compare(old_props[name], new_props[name], where)
        self._additional(old.get("additionalProperties"), new.get("additionalProperties"),
                         f"{path}/additionalProperties", "ADDITIONAL_PROPERTIES")
        self._dependencies(old.get("dependencies") or {}, new.get("dependencies") or {}, f"{path}/dependencies")

    def _property_removed(self, schema: Any, update: dict, where: str) -> None:
        if is_open(update, "additionalProperties", "patternProperties"):
            self.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", where)
            return
        partial = partial_schema(update, "additionalProperties")
        if partial is not None:
            ok, found = self.compatible(schema, partial, where)
            self.found += found
            self.add("PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL" if ok
                     else "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)
        elif schema is False:
            self.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)
        else:
            self.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)

    def _property_added(self, schema: Any, required: bool, original: dict, where: str) -> None:
        if is_open(original, "additionalProperties", "patternProperties"):
            if schema_kind(schema)[0] == "empty":
                self.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", where)
            elif required:
                self.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL" if has_default(schema)
                         else "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", where)
            else:
                self.add("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", where)
            return
        partial = partial_schema(original, "additionalProperties")
        if partial is not None:
            ok, found = self.compatible(partial, schema, where)
            self.found += found
            self.add("PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL" if ok
                     else "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)
        if required:
            self.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL" if has_default(schema)
                     else "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", where)
        else:
            self.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", where)

    def _additional(self, old: Any, new: Any, where: str, name: str) -> None:
        old_permits, new_permits = old is not False, new is not False
        if old_permits != new_permits:
            self.add(f"{name}_ADDED" if new_permits else f"{name}_REMOVED", where)
        elif schema_of(old) is None and schema_of(new) is not None:
            self.add(f"{name}_NARROWED", where)
        elif schema_of(new) is None and schema_of(old) is not None:
            self.add(f"{name}_EXTENDED", where)
        elif schema_of(old) is not None:
            self.compare(old, new, where)

    def _dependencies(self, old: dict, new: dict, path: str) -> None:
        for name in sorted(old.keys() | new.keys()):
            before, after, where = old.get(name), new.get(name), f"{path}/{name}"
            is_array = isinstance(before if before is not None else after, list)
            word = "DEPENDENCY_ARRAY" if is_array else "DEPENDENCY_SCHEMA"
            if after is None:
                self.add(f"{word}_REMOVED", where)
            elif before is None:
                self.add(f"{word}_ADDED", where)
            elif is_array and set(before) != set(after):
                self.add("DEPENDENCY_ARRAY_EXTENDED" if set(after) > set(before) else "DEPENDENCY_ARRAY_NARROWED"
                         if set(after) < set(before) else "DEPENDENCY_ARRAY_CHANGED", where)
            elif not is_array:
                self.compare(before, after, where)

    def _array(self, old: dict, new: dict, path: str) -> None:
        old_items, new_items = old.get("items"), new.get("items")
        if not isinstance(old_items, list) and not isinstance(new_items, list):
            self.compare(old_items, new_items, f"{path}/items")
        old_tuple = old_items if isinstance(old_items, list) else []
        new_tuple = new_items if isinstance(new_items, list) else []
        for index in range(max(len(old_tuple), len(new_tuple))):
            where = f"{path}/items/{index}"
            if index < len(old_tuple) and index < len(new_tuple):
                self.compare(old_tuple[index], new_tuple[index], where)
            elif index < len(old_tuple):
                self._item_removed(old_tuple[index], new, where)
            else:
                self._item_added(new_tuple[index], old, where)
        self._additional(old.get("additionalItems"), new.get("additionalItems"), f"{path}/additionalItems",
                         "ADDITIONAL_ITEMS")
        if bool(old.get("uniqueItems")) != bool(new.get("uniqueItems")):
            self.add("UNIQUE_ITEMS_ADDED" if new.get("uniqueItems") else "UNIQUE_ITEMS_REMOVED", f"{path}/uniqueItems")

    def _item_removed(self, schema: Any, update: dict, where: str) -> None:
        if is_open(update, "additionalItems"):
            self.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL", where)
        elif (partial := partial_schema(update, "additionalItems")) is not None:
            ok, found = self.compatible(schema, partial, where)
            self.found += found
            self.add("ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL" if ok
                     else "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)
        else:
            self.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL" if schema is False
                     else "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)

    def _item_added(self, schema: Any, original: dict, where: str) -> None:
        if is_open(original, "additionalItems"):
            self.add("ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL" if schema_kind(schema)[0] == "empty"
                     else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL", where)
        elif (partial := partial_schema(original, "additionalItems")) is not None:
            ok, found = self.compatible(partial, schema, where)
            self.found += found
            self.add("ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL" if ok
                     else "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)
        else:
            self.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL", where)


def _matching(diff: _Diff, old: list, new: list, path: str) -> int:
    """The size of a maximum matching of compatible (old, new) subschema pairs (Kuhn's algorithm)."""
    edges = {i: [j for j, n in enumerate(new) if diff.compatible(o, n, f"{path}/{i}")[0]] for i, o in enumerate(old)}
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False
    return sum(1 for i in edges if augment(i, set()))
