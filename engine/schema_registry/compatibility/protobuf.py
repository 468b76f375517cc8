"""Protobuf compatibility: Confluent's wire-compatibility rules, on compiled descriptors.

Confluent's registry (io.confluent.kafka.schemaregistry.protobuf.diff) lists the changes
between the old and the new file and calls the schema incompatible when one change is not
in its set of compatible changes. The same here, change for change:
- the package changed; a message removed (message indexes in the record framing point into
  the file, so adding, moving or reordering messages is fine);
- fields are matched by number across the whole message (oneof members too): a field's
  kind changed (scalar, message, map), a scalar's wire kind changed (int32/int64/uint32/
  uint64/bool/enum share one, sint32/sint64 another, then string/bytes, fixed32/sfixed32,
  fixed64/sfixed64, float, double), a message field's type name changed (or the named type
  changed incompatibly), a numeric field's label changed, a required field added or removed,
  a oneof member removed while its oneof survives, fields from different oneofs or from top
  level moved into one oneof.
Field and enum constant renames, added or removed fields, added or removed enums and their
constants are compatible, as in Confluent's registry.
"""
from __future__ import annotations

from dataclasses import dataclass

from google.protobuf import descriptor_pb2

from engine.schema_registry.schemas.protobuf import ProtobufModel

F = descriptor_pb2.FieldDescriptorProto
COMPATIBLE = frozenset({
    "MESSAGE_ADDED", "MESSAGE_MOVED", "ENUM_ADDED", "ENUM_REMOVED", "ENUM_CONST_ADDED", "ENUM_CONST_CHANGED",
    "ENUM_CONST_REMOVED", "FIELD_ADDED", "FIELD_REMOVED", "FIELD_NAME_CHANGED", "FIELD_STRING_OR_BYTES_LABEL_CHANGED",
    "ONEOF_ADDED", "ONEOF_REMOVED", "ONEOF_FIELD_ADDED", "ONEOF_FIELD_MOVED_TO_TOP_LEVEL",
})
SCALAR_KINDS = {
    F.TYPE_INT32: "GENERAL_NUMBER", F.TYPE_INT64: "GENERAL_NUMBER", F.TYPE_UINT32: "GENERAL_NUMBER",
    F.TYPE_UINT64: "GENERAL_NUMBER", F.TYPE_BOOL: "GENERAL_NUMBER", F.TYPE_ENUM: "GENERAL_NUMBER",
    F.TYPE_SINT32: "SIGNED_NUMBER", F.TYPE_SINT64: "SIGNED_NUMBER",
    F.TYPE_STRING: "STRING_OR_BYTES", F.TYPE_BYTES: "STRING_OR_BYTES",
    F.TYPE_FIXED32: "FIXED32", F.TYPE_SFIXED32: "FIXED32", F.TYPE_FIXED64: "FIXED64", F.TYPE_SFIXED64: "FIXED64",
    F.TYPE_FLOAT: "FLOAT", F.TYPE_DOUBLE: "DOUBLE",
}
DESCRIPTIONS = {
    "PACKAGE_CHANGED": "The package at '{path}' in the {reader} schema does not match the package in the {writer} schema",
    "MESSAGE_REMOVED": "The {reader} schema is missing a MESSAGE type at path '{path}' in the {writer} schema",
    "FIELD_KIND_CHANGED": "The type of a field at path '{path}' in the {reader} schema does not match the {writer} schema",
    "FIELD_SCALAR_KIND_CHANGED": "The kind of a SCALAR field at path '{path}' in the {reader} schema does not match "
                                 "its kind in the {writer} schema",
    "FIELD_NAMED_TYPE_CHANGED": "The type of a MESSAGE field at path '{path}' in the {reader} schema does not match "
                                "its type in the {writer} schema",
    "FIELD_NUMERIC_LABEL_CHANGED": "The label for a NUMERIC field at path '{path}' in the {reader} schema does not "
                                   "match its label in the {writer} schema",
    "REQUIRED_FIELD_ADDED": "A required field  at path '{path}' in the {reader} schema is missing in the {writer} schema",
    "REQUIRED_FIELD_REMOVED": "The {reader} schema is missing a required field at path: '{path}' in the {writer} schema",
    "ONEOF_FIELD_REMOVED": "The {reader} schema is missing a oneof field at path '{path}' in the {writer} schema",
    "MULTIPLE_FIELDS_MOVED_TO_ONEOF": "Multiple fields in the oneof at path '{path}' in the {reader} schema are "
                                      "outside a oneof in the {writer} schema",
    "FIELD_MOVED_TO_EXISTING_ONEOF": "A field in the oneof at path '{path}' in the {reader} schema is outside an "
                                     "existing oneof in the {writer} schema",
}


@dataclass(frozen=True)
class Difference:
    kind: str
    path: str

    @property
    def compatible(self) -> bool:
        return self.kind in COMPATIBLE

    def message(self, reader: str, writer: str) -> str:
        text = DESCRIPTIONS.get(self.kind, "").format(path=self.path, reader=reader, writer=writer)
        return f'{{errorType:"{self.kind}", description:"{text}"}}'


def check(reader: ProtobufModel, writer: ProtobufModel) -> list[Difference]:
    """The incompatible changes from `writer`'s (old) file to `reader`'s (new) file."""
    return [d for d in differences(writer, reader) if not d.compatible]


def differences(original: ProtobufModel, update: ProtobufModel) -> list[Difference]:
    diff = _Diff(_Types(original), _Types(update))
    if original.file.package != update.file.package:
        diff.add("PACKAGE_CHANGED", "#/")
    diff.types(original.file.message_type, update.file.message_type, original.file.enum_type,
               update.file.enum_type, "#/")
    return diff.found


class _Types:
    """Full name -> (descriptor, package) for every message and enum of a file and its imports."""

    def __init__(self, model: ProtobufModel) -> None:
        self.syntax = model.file.syntax or "proto2"
        self.by_name: dict[str, tuple[object, str]] = {}
        for file in [*model.imports, model.file]:
            prefix = f".{file.package}" if file.package else ""
            self._collect(file.message_type, file.enum_type, prefix, file.package)

    def _collect(self, messages, enums, scope: str, package: str) -> None:
        for enum in enums:
            self.by_name[f"{scope}.{enum.name}"] = (enum, package)
        for message in messages:
            name = f"{scope}.{message.name}"
            self.by_name[name] = (message, package)
            self._collect(message.nested_type, message.enum_type, name, package)

    def get(self, name: str):
        return self.by_name.get(name, (None, ""))


class _Diff:
    def __init__(self, original: _Types, update: _Types) -> None:
        self.original = original
        self.update = update
        self.found: list[Difference] = []
        self.compared: set[tuple[str, str]] = set()

    def add(self, kind: str, path: str) -> None:
        self.found.append(Difference(kind, path))

    def types(self, original_messages, update_messages, original_enums, update_enums, path: str) -> None:
        old = {m.name: (i, m) for i, m in enumerate(original_messages)}
        new = {m.name: (i, m) for i, m in enumerate(update_messages)}
        for name in sorted(old.keys() | new.keys()):
            if name not in new:
                if not old[name][1].options.map_entry:
                    self.add("MESSAGE_REMOVED", path + name)
            elif name not in old:
                if not new[name][1].options.map_entry:
                    self.add("MESSAGE_ADDED", path + name)
            else:
                self.message(old[name][1], new[name][1], path + name)
                if old[name][0] != new[name][0]:
                    self.add("MESSAGE_MOVED", path + name)
        old_enums = {e.name: e for e in original_enums}
        new_enums = {e.name: e for e in update_enums}
        for name in sorted(old_enums.keys() | new_enums.keys()):
            if name not in new_enums:
                self.add("ENUM_REMOVED", path + name)
            elif name not in old_enums:
                self.add("ENUM_ADDED", path + name)
            else:
                self.enum(old_enums[name], new_enums[name], path + name)

    def enum(self, original, update, path: str) -> None:
        old = {v.number: v.name for v in original.value}
        new = {v.number: v.name for v in update.value}
        for number in sorted(old.keys() | new.keys()):
            if number not in new:
                self.add("ENUM_CONST_REMOVED", f"{path}/{number}")
            elif number not in old:
                self.add("ENUM_CONST_ADDED", f"{path}/{number}")
            elif old[number] != new[number]:
                self.add("ENUM_CONST_CHANGED", f"{path}/{number}")

    def message(self, original, update, path: str) -> None:
        old_fields, old_oneof = _fields(original)
        new_fields, new_oneof = _fields(update)
        old_oneofs = {original.oneof_decl[i].name for i in set(old_oneof.values())}
        new_oneofs = {update.oneof_decl[i].name for i in set(new_oneof.values())}
        old_oneof_names = {tag: original.oneof_decl[i].name for tag, i in old_oneof.items()}
        new_oneof_names = {tag: update.oneof_decl[i].name for tag, i in new_oneof.items()}
        deleted = {name for name in old_oneofs - new_oneofs
                   if not any(t in new_fields for t, n in old_oneof_names.items() if n == name)}
        for name in sorted(new_oneofs):
            origins = set()
            moved_in = 0
            for tag, oneof in new_oneof_names.items():
                if oneof != name:
                    continue
                if tag in old_oneof_names:
                    origins.add("oneof:" + old_oneof_names[tag])
                elif tag in old_fields:
                    origins.add(f"field:{tag}")
                    moved_in += 1
            if len(origins) > 1:
                self.add("MULTIPLE_FIELDS_MOVED_TO_ONEOF" if moved_in > 1 else "FIELD_MOVED_TO_EXISTING_ONEOF",
                         f"{path}/{name}")
        for name in sorted(old_oneofs ^ new_oneofs):
            self.add("ONEOF_REMOVED" if name in old_oneofs else "ONEOF_ADDED", f"{path}/{name}")
        for tag in sorted(old_fields.keys() | new_fields.keys()):
            old, new = old_fields.get(tag), new_fields.get(tag)
            if new is None:
                if tag in old_oneof_names:
                    if old_oneof_names[tag] not in deleted:
                        self.add("ONEOF_FIELD_REMOVED", f"{path}/{old_oneof_names[tag]}/{tag}")
                else:
                    self.add("REQUIRED_FIELD_REMOVED" if old.label == F.LABEL_REQUIRED else "FIELD_REMOVED",
                             f"{path}/{tag}")
            elif old is None:
                if tag in new_oneof_names:
                    self.add("ONEOF_FIELD_ADDED", f"{path}/{new_oneof_names[tag]}/{tag}")
                else:
                    self.add("REQUIRED_FIELD_ADDED" if new.label == F.LABEL_REQUIRED else "FIELD_ADDED",
                             f"{path}/{tag}")
            else:
                if tag in old_oneof_names and tag not in new_oneof_names:
                    self.add("ONEOF_FIELD_MOVED_TO_TOP_LEVEL", f"{path}/{tag}")
                where = f"{path}/{new_oneof_names[tag]}/{tag}" if tag in new_oneof_names else f"{path}/{tag}"
                self.field(old, new, where, tag in old_oneof_names, tag in new_oneof_names)
        self.types(original.nested_type, update.nested_type, original.enum_type, update.enum_type, path + ".")

    def field(self, old, new, path: str, old_in_oneof: bool, new_in_oneof: bool) -> None:
        if old.name != new.name:
            self.add("FIELD_NAME_CHANGED", path)
        self.labels_and_types(self._label(old, self.original, old_in_oneof), self._label(new, self.update, new_in_oneof),
                              old, new, path)

    def labels_and_types(self, old_label, new_label, old, new, path: str) -> None:
        old_map, new_map = self._map_entry(old, self.original), self._map_entry(new, self.update)
        old_kind, new_kind = self._kind(old, old_map), self._kind(new, new_map)
        if old_kind != new_kind:
            self.add("FIELD_KIND_CHANGED", path)
        elif old_kind == "SCALAR":
            if SCALAR_KINDS[old.type] != SCALAR_KINDS[new.type]:
                self.add("FIELD_SCALAR_KIND_CHANGED", path)
            elif old_label is not None and new_label is not None and old_label != new_label:
                kind = SCALAR_KINDS[old.type]
                self.add("FIELD_STRING_OR_BYTES_LABEL_CHANGED" if kind == "STRING_OR_BYTES"
                         else "FIELD_NUMERIC_LABEL_CHANGED", path)
        elif old_kind == "MAP":
            self.labels_and_types(None, None, old_map.field[0], new_map.field[0], path)
            self.labels_and_types(None, None, old_map.field[1], new_map.field[1], path)
        elif old_kind == "MESSAGE":
            self.message_types(old.type_name, new.type_name, path)

    def message_types(self, old_name: str, new_name: str, path: str) -> None:
        old_type, old_package = self.original.get(old_name)
        new_type, new_package = self.update.get(new_name)
        if old_type is None or new_type is None:
            if old_name != new_name:
                self.add("FIELD_NAMED_TYPE_CHANGED", path)
            return
        if _local(old_name, old_package) != _local(new_name, new_package):
            self.add("FIELD_NAMED_TYPE_CHANGED", path)
            return
        if (old_name, new_name) in self.compared:
            return
        self.compared.add((old_name, new_name))
        inner = _Diff(self.original, self.update)
        inner.compared = self.compared
        inner.message(old_type, new_type, "#/" + _local(old_name, old_package))
        self.found += inner.found
        if any(not d.compatible for d in inner.found):
            self.add("FIELD_NAMED_TYPE_CHANGED", path)

    def _map_entry(self, field, types: _Types):
        if field.type != F.TYPE_MESSAGE or field.label != F.LABEL_REPEATED:
            return None
        message, _ = types.get(field.type_name)
        return message if message is not None and message.options.map_entry else None

    def _kind(self, field, map_entry) -> str:
        if map_entry is not None:
            return "MAP"
        return "MESSAGE" if field.type in (F.TYPE_MESSAGE, F.TYPE_GROUP) else "SCALAR"

    @staticmethod
    def _label(field, types: _Types, in_oneof: bool):
        """Confluent's label: none for oneof members and proto3 fields without a written label."""
        if in_oneof:
            return None
        if types.syntax == "proto3" and field.label == F.LABEL_OPTIONAL and not field.proto3_optional:
            return None
        return field.label


def _fields(message) -> tuple[dict[int, object], dict[int, int]]:
    """Fields by number, and the real oneof (index) of each member (proto3 optionals excluded)."""
    by_tag = {f.number: f for f in message.field}
    oneof = {f.number: f.oneof_index for f in message.field if f.HasField("oneof_index") and not f.proto3_optional}
    return by_tag, oneof


def _local(full_name: str, package: str) -> str:
    name = full_name.lstrip(".")
    return name[len(package) + 1:] if package and name.startswith(package + ".") else name
