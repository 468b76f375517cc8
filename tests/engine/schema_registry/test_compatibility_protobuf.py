"""Protobuf compatibility, case by case from Confluent's wire-compatibility rules."""
from __future__ import annotations

import pytest

from engine.schema_registry import compatibility
from engine.schema_registry.compatibility import PreviousVersion
from engine.schema_registry.schemas import SchemaType, parse


def proto(body: str, package: str = "p", syntax: str = "proto3") -> str:
    return f'syntax = "{syntax}";\npackage {package};\n{body}\n'


CASES = [
    # (why, old, new, backward, expected change)
    ("field added", "message M { int32 a = 1; }", "message M { int32 a = 1; string b = 2; }", True, None),
    ("field removed", "message M { int32 a = 1; string b = 2; }", "message M { int32 a = 1; }", True, None),
    ("field renamed", "message M { int32 a = 1; }", "message M { int32 renamed = 1; }", True, None),
    ("int32 to int64 share a wire kind", "message M { int32 a = 1; }", "message M { int64 a = 1; }", True, None),
    ("bool to uint32 share a wire kind", "message M { bool a = 1; }", "message M { uint32 a = 1; }", True, None),
    ("string to bytes", "message M { string a = 1; }", "message M { bytes a = 1; }", True, None),
    ("int32 to sint32 changes the encoding", "message M { int32 a = 1; }", "message M { sint32 a = 1; }", False,
     "FIELD_SCALAR_KIND_CHANGED"),
    ("int32 to string", "message M { int32 a = 1; }", "message M { string a = 1; }", False,
     "FIELD_SCALAR_KIND_CHANGED"),
    ("fixed32 to fixed64", "message M { fixed32 a = 1; }", "message M { fixed64 a = 1; }", False,
     "FIELD_SCALAR_KIND_CHANGED"),
    ("scalar to message", "message M { int32 a = 1; } message N { int32 x = 1; }",
     "message M { N a = 1; } message N { int32 x = 1; }", False, "FIELD_KIND_CHANGED"),
    ("message type renamed", "message M { N a = 1; } message N { int32 x = 1; }",
     "message M { O a = 1; } message O { int32 x = 1; }", False, "FIELD_NAMED_TYPE_CHANGED"),
    ("field of a referenced message changes kind", "message M { N a = 1; } message N { int32 x = 1; }",
     "message M { N a = 1; } message N { string x = 1; }", False, "FIELD_SCALAR_KIND_CHANGED"),
    ("message removed", "message M { int32 a = 1; } message N { int32 b = 1; }", "message M { int32 a = 1; }",
     False, "MESSAGE_REMOVED"),
    ("message added", "message M { int32 a = 1; }", "message M { int32 a = 1; } message N { int32 b = 1; }",
     True, None),
    ("messages reordered", "message M { int32 a = 1; } message N { int32 b = 1; }",
     "message N { int32 b = 1; } message M { int32 a = 1; }", True, None),
    ("enum constant added", "enum E { A = 0; } message M { E e = 1; }", "enum E { A = 0; B = 1; } message M { E e = 1; }",
     True, None),
    ("enum to int32 share a wire kind", "enum E { A = 0; } message M { E e = 1; }",
     "enum E { A = 0; } message M { int32 e = 1; }", True, None),
    ("map value kind changed", "message M { map<string, int32> m = 1; }", "message M { map<string, string> m = 1; }",
     False, "FIELD_SCALAR_KIND_CHANGED"),
    ("map to message", "message M { map<string, int32> m = 1; }", "message M { repeated int32 m = 1; }", False,
     "FIELD_KIND_CHANGED"),
    ("field moved into a new oneof", "message M { int32 a = 1; }", "message M { oneof o { int32 a = 1; } }", True,
     None),
    ("two fields moved into one oneof", "message M { int32 a = 1; int32 b = 2; }",
     "message M { oneof o { int32 a = 1; int32 b = 2; } }", False, "MULTIPLE_FIELDS_MOVED_TO_ONEOF"),
    ("oneof member removed", "message M { oneof o { int32 a = 1; int32 b = 2; } }",
     "message M { oneof o { int32 a = 1; } }", False, "ONEOF_FIELD_REMOVED"),
    ("oneof member moved out to top level", "message M { oneof o { int32 a = 1; int32 b = 2; } }",
     "message M { int32 a = 1; oneof o { int32 b = 2; } }", True, None),
    ("package changed", "message M { int32 a = 1; }", ("message M { int32 a = 1; }", "q"), False, "PACKAGE_CHANGED"),
]


def parsed(text, syntax="proto3"):
    body, package = text if isinstance(text, tuple) else (text, "p")
    return parse(SchemaType.PROTOBUF, proto(body, package, syntax))


@pytest.mark.parametrize(("why", "old", "new", "backward", "change"), CASES, ids=[c[0] for c in CASES])
def test_protobuf_case(why, old, new, backward, change):
    messages = compatibility.check("BACKWARD", parsed(new), [PreviousVersion(1, parsed(old))])
    assert (not messages) is backward, messages
    if change:
        assert any(f'errorType:"{change}"' in m for m in messages), messages


def test_proto2_required_fields():
    old = parsed("message M { required int32 a = 1; }", "proto2")
    added = parsed("message M { required int32 a = 1; required int32 b = 2; }", "proto2")
    removed = parsed("message M { optional int32 c = 3; }", "proto2")
    assert 'REQUIRED_FIELD_ADDED' in compatibility.check("BACKWARD", added, [PreviousVersion(1, old)])[0]
    assert 'REQUIRED_FIELD_REMOVED' in compatibility.check("BACKWARD", removed, [PreviousVersion(1, old)])[0]


def test_numeric_label_change_breaks_and_forward_is_the_other_direction():
    old = parsed("message M { optional int32 a = 1; }")
    new = parsed("message M { repeated int32 a = 1; }")
    assert "FIELD_NUMERIC_LABEL_CHANGED" in compatibility.check("BACKWARD", new, [PreviousVersion(1, old)])[0]
    grown = parsed("message M { int32 a = 1; } message N { int32 b = 1; }")
    shrunk = parsed("message M { int32 a = 1; }")
    assert compatibility.check("BACKWARD", grown, [PreviousVersion(1, shrunk)]) == []
    forward = compatibility.check("FORWARD", grown, [PreviousVersion(1, shrunk)])
    assert "MESSAGE_REMOVED" in forward[0] and "The old schema is missing" in forward[0]
