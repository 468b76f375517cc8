"""Write a FileDescriptorProto back as .proto source.

Clients such as confluent-kafka's ProtobufSerializer register a schema as a base64
FileDescriptorProto; the registry stores .proto text (as Confluent's does), so that every
client and the console read the same kind of schema. Standard options are written from the
descriptor's option messages; custom options (extensions of the option messages) and
proto2 groups are not written (docs/limitations.md).
"""
from __future__ import annotations

from google.protobuf import descriptor_pb2, text_encoding

F = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    F.TYPE_DOUBLE: "double", F.TYPE_FLOAT: "float", F.TYPE_INT64: "int64", F.TYPE_UINT64: "uint64",
    F.TYPE_INT32: "int32", F.TYPE_FIXED64: "fixed64", F.TYPE_FIXED32: "fixed32", F.TYPE_BOOL: "bool",
    F.TYPE_STRING: "string", F.TYPE_BYTES: "bytes", F.TYPE_UINT32: "uint32", F.TYPE_SFIXED32: "sfixed32",
    F.TYPE_SFIXED64: "sfixed64", F.TYPE_SINT32: "sint32", F.TYPE_SINT64: "sint64",
}
MAX_FIELD_NUMBER = 536870911
INDENT = "  "


def to_proto_text(file: descriptor_pb2.FileDescriptorProto) -> str:
    lines: list[str] = []
    syntax = file.syntax or "proto2"
    lines.append(f'syntax = "{syntax}";')
    if file.package:
        lines.append(f"package {file.package};")
    if file.dependency:
        lines.append("")
    for index, dependency in enumerate(file.dependency):
        kind = "public " if index in file.public_dependency else "weak " if index in file.weak_dependency else ""
        lines.append(f'import {kind}"{_quote(dependency)}";')
    options = _options(file.options)
    if options:
        lines.append("")
        lines += [f"option {name} = {value};" for name, value in options]
    for message in file.message_type:
        lines.append("")
        lines += _message(message, syntax, 0)
    for enum in file.enum_type:
        lines.append("")
        lines += _enum(enum, 0)
    for block in _extends(file.extension, syntax, 0):
        lines.append("")
        lines += block
    for service in file.service:
        lines.append("")
        lines += _service(service)
    return "\n".join(lines) + "\n"


def _message(message: descriptor_pb2.DescriptorProto, syntax: str, depth: int) -> list[str]:
    pad = INDENT * depth
    inner = INDENT * (depth + 1)
    maps = {f".{n.name}": n for n in message.nested_type if n.options.map_entry}
    lines = [f"{pad}message {message.name} {{"]
    for name, value in _options(message.options, skip=("map_entry",)):
        lines.append(f"{inner}option {name} = {value};")
    real_oneofs = _real_oneofs(message)
    written_oneofs: set[int] = set()
    for field in message.field:
        if field.HasField("oneof_index") and field.oneof_index in real_oneofs:
            if field.oneof_index in written_oneofs:
                continue
            written_oneofs.add(field.oneof_index)
            lines.append(f"{inner}oneof {message.oneof_decl[field.oneof_index].name} {{")
            for member in message.field:
                if member.HasField("oneof_index") and member.oneof_index == field.oneof_index:
                    lines.append(f"{inner}{INDENT}{_field(member, syntax, maps, in_oneof=True)}")
            lines.append(f"{inner}}}")
        else:
            lines.append(f"{inner}{_field(field, syntax, maps, in_oneof=False)}")
    for nested in message.nested_type:
        if not nested.options.map_entry:
            lines += _message(nested, syntax, depth + 1)
    for enum in message.enum_type:
        lines += _enum(enum, depth + 1)
    for block in _extends(message.extension, syntax, depth + 1):
        lines += block
    for extension_range in message.extension_range:
        lines.append(f"{inner}extensions {_range(extension_range.start, extension_range.end - 1)};")
    if message.reserved_range:
        ranges = ", ".join(_range(r.start, r.end - 1) for r in message.reserved_range)
        lines.append(f"{inner}reserved {ranges};")
    if message.reserved_name:
        lines.append(f"{inner}reserved {', '.join(_string(n) for n in message.reserved_name)};")
    lines.append(f"{pad}}}")
    return lines


def _real_oneofs(message: descriptor_pb2.DescriptorProto) -> set[int]:
    """Oneofs written in the source: not the synthetic ones proto3 `optional` fields get."""
    synthetic = {f.oneof_index for f in message.field if f.proto3_optional and f.HasField("oneof_index")}
    return set(range(len(message.oneof_decl))) - synthetic


def _field(field: descriptor_pb2.FieldDescriptorProto, syntax: str, maps: dict, in_oneof: bool) -> str:
    entry = _map_entry(field, maps)
    if entry is not None:
        key, value = entry.field[0], entry.field[1]
        text = f"map<{_type(key)}, {_type(value)}> {field.name} = {field.number}"
    else:
        text = f"{_label(field, syntax, in_oneof)}{_type(field)} {field.name} = {field.number}"
    options = _field_options(field)
    if options:
        text += " [" + ", ".join(f"{name} = {value}" for name, value in options) + "]"
    return text + ";"


def _map_entry(field, maps: dict):
    if field.label != F.LABEL_REPEATED or field.type != F.TYPE_MESSAGE:
        return None
    short = "." + field.type_name.rsplit(".", 1)[-1]
    entry = maps.get(short)
    return entry if entry is not None and field.type_name.endswith(short) else None


def _label(field, syntax: str, in_oneof: bool) -> str:
    if in_oneof:
        return ""
    if field.label == F.LABEL_REPEATED:
        return "repeated "
    if field.label == F.LABEL_REQUIRED:
        return "required "
    if syntax == "proto3":
        return "optional " if field.proto3_optional else ""
    return "optional "


def _type(field) -> str:
    if field.type in SCALARS:
        return SCALARS[field.type]
    return field.type_name


def _field_options(field) -> list[tuple[str, str]]:
    options = []
    if field.HasField("default_value"):
        options.append(("default", _default(field)))
    if field.HasField("json_name") and field.json_name != _camel(field.name):
        options.append(("json_name", _string(field.json_name)))
    return options + _options(field.options)


def _default(field) -> str:
    if field.type == F.TYPE_STRING:
        return _string(field.default_value)
    if field.type == F.TYPE_BYTES:
        # The descriptor holds bytes defaults already C-escaped.
        return f'"{field.default_value}"'
    return field.default_value


def _enum(enum: descriptor_pb2.EnumDescriptorProto, depth: int) -> list[str]:
    pad, inner = INDENT * depth, INDENT * (depth + 1)
    lines = [f"{pad}enum {enum.name} {{"]
    for name, value in _options(enum.options):
        lines.append(f"{inner}option {name} = {value};")
    for value in enum.value:
        options = _options(value.options)
        suffix = " [" + ", ".join(f"{n} = {v}" for n, v in options) + "]" if options else ""
        lines.append(f"{inner}{value.name} = {value.number}{suffix};")
    if enum.reserved_range:
        lines.append(f"{inner}reserved {', '.join(_range(r.start, r.end) for r in enum.reserved_range)};")
    if enum.reserved_name:
        lines.append(f"{inner}reserved {', '.join(_string(n) for n in enum.reserved_name)};")
    lines.append(f"{pad}}}")
    return lines


def _extends(extensions, syntax: str, depth: int) -> list[list[str]]:
    pad, inner = INDENT * depth, INDENT * (depth + 1)
    blocks: dict[str, list[str]] = {}
    for field in extensions:
        blocks.setdefault(field.extendee, []).append(f"{inner}{_field(field, syntax, {}, in_oneof=False)}")
    return [[f"{pad}extend {extendee} {{", *fields, f"{pad}}}"] for extendee, fields in blocks.items()]


def _service(service: descriptor_pb2.ServiceDescriptorProto) -> list[str]:
    lines = [f"service {service.name} {{"]
    for name, value in _options(service.options):
        lines.append(f"{INDENT}option {name} = {value};")
    for method in service.method:
        client = "stream " if method.client_streaming else ""
        server = "stream " if method.server_streaming else ""
        head = f"{INDENT}rpc {method.name}({client}{method.input_type}) returns ({server}{method.output_type})"
        options = _options(method.options)
        if options:
            lines.append(head + " {")
            lines += [f"{INDENT * 2}option {n} = {v};" for n, v in options]
            lines.append(f"{INDENT}}}")
        else:
            lines.append(head + ";")
    lines.append("}")
    return lines


def _options(options, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    written = []
    for descriptor, value in options.ListFields():
        if descriptor.name in skip or descriptor.is_extension or descriptor.name == "uninterpreted_option":
            continue
        if descriptor.is_repeated or descriptor.message_type is not None:
            continue
        written.append((descriptor.name, _option_value(descriptor, value)))
    return written


def _option_value(descriptor, value) -> str:
    if descriptor.enum_type is not None:
        return descriptor.enum_type.values_by_number[value].name
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bytes):
        return f'"{text_encoding.CEscape(value, as_utf8=False)}"'
    return repr(value) if isinstance(value, float) else str(value)


def _range(start: int, end: int) -> str:
    if end >= MAX_FIELD_NUMBER:
        return f"{start} to max"
    return str(start) if start == end else f"{start} to {end}"


def _string(text: str) -> str:
    return f'"{_quote(text)}"'


def _quote(text: str) -> str:
    return text_encoding.CEscape(text.encode(), as_utf8=True)


def _camel(name: str) -> str:
    """protoc's default json_name: underscores dropped, the letter after each upper-cased."""
    out, upper = [], False
    for char in name:
        if char == "_":
            upper = True
        else:
            out.append(char.upper() if upper else char)
            upper = False
    return "".join(out)
