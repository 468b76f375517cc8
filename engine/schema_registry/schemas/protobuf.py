"""PROTOBUF schemas: .proto text compiled by protoc, or a base64 FileDescriptorProto.

Parsing .proto text is protoc's job, and grpcio-tools ships protoc inside a Python module
(`grpc_tools._protoc_compiler`, no binary to install): `get_protos` reports errors as
exceptions carrying protoc's own messages (file, line, column), and protoc's
`--descriptor_set_out` writes the FileDescriptorProto of the file and its imports. The
schema and the texts its references name are written into a private temporary directory
for it; google/protobuf/*.proto (the well-known types) come with grpcio-tools.

A base64 FileDescriptorProto (what confluent-kafka's ProtobufSerializer registers, and what
`format=serialized` returns) is checked by adding it to a DescriptorPool with its
references, then written as .proto text (proto_printer.py) and compiled like any text.

The canonical form is the compiled FileDescriptorProto without its file name, serialized
deterministically: layout, comments and the file name do not make two schemas different.
"""
from __future__ import annotations

import base64
import binascii
import re
import tempfile
import threading
from pathlib import Path

import grpc_tools
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import DecodeError
from grpc_tools import _protoc_compiler, protoc

from engine.schema_registry.schemas.base import (InvalidSchema, ParsedSchema, Reference, SchemaType,
                                                 in_dependency_order)
from engine.schema_registry.schemas.proto_printer import to_proto_text

MAIN_FILE = "schema.proto"
WELL_KNOWN = Path(grpc_tools.__file__).parent / "_proto"
BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]+$")
# protoc keeps process-wide state while it runs: one compilation at a time.
_PROTOC = threading.Lock()


class ProtobufModel:
    """The compiled file and every file it imports (dependencies first)."""

    def __init__(self, file: descriptor_pb2.FileDescriptorProto,
                 imports: list[descriptor_pb2.FileDescriptorProto]) -> None:
        self.file = file
        self.imports = imports

    def pool(self) -> descriptor_pool.DescriptorPool:
        pool = descriptor_pool.DescriptorPool()
        for proto in [*self.imports, self.file]:
            pool.Add(proto)
        return pool

    def serialized(self) -> str:
        """Confluent's `format=serialized`: the base64 FileDescriptorProto."""
        return base64.b64encode(self.file.SerializeToString()).decode("ascii")

    def message_names(self) -> list[str]:
        """Every message's full name, in declaration order with nested ones after their parent."""
        names: list[str] = []
        prefix = f"{self.file.package}." if self.file.package else ""

        def walk(messages, scope: str) -> None:
            for message in messages:
                if message.options.map_entry:
                    continue
                names.append(scope + message.name)
                walk(message.nested_type, f"{scope}{message.name}.")
        walk(self.file.message_type, prefix)
        return names


def parse(text: str, references: tuple[Reference, ...], dependencies: dict[str, ParsedSchema],
          normalize: bool = False) -> ParsedSchema:
    for dependency in dependencies.values():
        if dependency.schema_type is not SchemaType.PROTOBUF:
            raise InvalidSchema("A Protobuf schema can only reference Protobuf schemas")
    sources = _sources(dependencies)
    try:
        model = compile_text(text, sources)
        stored = text.strip() + "\n"
    except InvalidSchema as text_error:
        descriptor = _descriptor_from_base64(text)
        if descriptor is None:
            raise text_error from None
        _check_descriptor(descriptor, dependencies)
        stored = to_proto_text(descriptor)
        model = compile_text(stored, sources)
    if normalize:
        stored = to_proto_text(model.file)
    return ParsedSchema(SchemaType.PROTOBUF, stored, canonical_form(model.file), references, dependencies, model)


def canonical_form(file: descriptor_pb2.FileDescriptorProto) -> str:
    anonymous = descriptor_pb2.FileDescriptorProto()
    anonymous.CopyFrom(file)
    anonymous.ClearField("name")
    return base64.b64encode(anonymous.SerializeToString(deterministic=True)).decode("ascii")


def compile_text(text: str, sources: dict[str, str]) -> ProtobufModel:
    """protoc on `text` (as schema.proto) with `sources` (import path -> text) beside it."""
    if "\x00" in text:
        raise InvalidSchema("Invalid schema: a .proto file cannot hold a NUL character")
    with tempfile.TemporaryDirectory(prefix="registry-proto-") as workdir:
        root = Path(workdir)
        for name, source in {**sources, MAIN_FILE: text}.items():
            path = (root / name).resolve()
            if root.resolve() not in path.parents:
                raise InvalidSchema(f"Invalid reference name {name!r}: it must be a relative .proto path")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(source)
        includes = [str(root).encode(), str(WELL_KNOWN).encode()]
        out = root / ".descriptor-set"
        with _PROTOC:
            try:
                _protoc_compiler.get_protos(MAIN_FILE.encode(), includes)
            except _protoc_compiler.ProtocErrors as exc:
                raise InvalidSchema(_protoc_message(exc)) from None
            code = protoc.main(["protoc", f"-I{root}", f"-I{WELL_KNOWN}", "--include_imports",
                                f"--descriptor_set_out={out}", str(root / MAIN_FILE)])
        if code != 0 or not out.exists():
            raise InvalidSchema("Invalid schema: protoc could not compile it")
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    main = files[-1]
    return ProtobufModel(main, list(files[:-1]))


def _protoc_message(exc) -> str:
    found = []
    for error in exc.errors():
        message = error.message.decode(errors="replace") if isinstance(error.message, bytes) else str(error.message)
        name = error.filename.decode(errors="replace") if isinstance(error.filename, bytes) else str(error.filename)
        where = "" if name == MAIN_FILE else f" in {name}"
        found.append(f"line {error.line + 1}, column {error.column + 1}{where}: {message}")
    return "Invalid schema: " + "; ".join(found or [str(exc)])


def _sources(dependencies: dict[str, ParsedSchema]) -> dict[str, str]:
    """Import path -> .proto text for every dependency, theirs included (each once)."""
    return {name: dependency.text for name, dependency in in_dependency_order(dependencies)}


def _descriptor_from_base64(text: str) -> descriptor_pb2.FileDescriptorProto | None:
    if not BASE64.match(text or ""):
        return None
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
        descriptor = descriptor_pb2.FileDescriptorProto.FromString(raw)
    except (binascii.Error, ValueError, DecodeError):
        return None
    return descriptor if descriptor.name or descriptor.message_type or descriptor.enum_type else None


def _check_descriptor(descriptor: descriptor_pb2.FileDescriptorProto,
                      dependencies: dict[str, ParsedSchema]) -> None:
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(proto: descriptor_pb2.FileDescriptorProto) -> None:
        if proto.name not in added:
            added.add(proto.name)
            pool.Add(proto)
    try:
        for name, dependency in dependencies.items():
            for imported in dependency.model.imports:
                add(imported)
            renamed = descriptor_pb2.FileDescriptorProto()
            renamed.CopyFrom(dependency.model.file)
            renamed.name = name
            add(renamed)
        for well_known in descriptor.dependency:
            if well_known.startswith("google/protobuf/") and well_known not in added:
                add(_compile_well_known(well_known))
        pool.Add(descriptor)
        pool.FindFileByName(descriptor.name)
    except (TypeError, KeyError, ValueError) as exc:
        raise InvalidSchema(f"Invalid schema: the FileDescriptorProto does not resolve: {exc}") from None


def _compile_well_known(name: str) -> descriptor_pb2.FileDescriptorProto:
    if not (WELL_KNOWN / name).exists():
        raise KeyError(f"unknown import {name}")
    with tempfile.TemporaryDirectory(prefix="registry-proto-") as workdir:
        out = Path(workdir) / "set"
        with _PROTOC:
            protoc.main(["protoc", f"-I{WELL_KNOWN}", f"--descriptor_set_out={out}", str(WELL_KNOWN / name)])
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]

