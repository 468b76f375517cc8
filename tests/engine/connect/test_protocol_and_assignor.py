"""The pure parts of Connect: the group subprotocol's bytes, the incremental cooperative
assignor's rounds (KIP-415), properties files and the converters."""
from __future__ import annotations

import pytest

from engine.connect import properties, protocol
from engine.connect.api import DataError
from engine.connect.assignor import IncrementalCooperativeAssignor
from engine.connect.converters import build


def test_metadata_and_assignments_round_trip_in_connects_layout():
    state = protocol.WorkerState("http://w1:8083/", 42, ["c1"], [("c1", 0), ("c2", 1)])
    encoded = protocol.serialize_metadata(state, protocol.COMPATIBLE)
    assert encoded[:2] == b"\x00\x01"                                   # version 1
    assert encoded[2:4] == len("http://w1:8083/").to_bytes(2, "big")    # STRING: int16 length
    assert protocol.deserialize_metadata(encoded) == state
    eager = protocol.serialize_metadata(state, protocol.EAGER)
    assert protocol.deserialize_metadata(eager) == protocol.WorkerState("http://w1:8083/", 42)
    assignment = protocol.Assignment(leader="m1", leader_url="http://w1:8083/", config_offset=7, connectors=["c1"],
                                     tasks=[("c1", 0)], revoked_tasks=[("c2", 3)], delay=1500)
    assert protocol.deserialize_assignment(protocol.serialize_assignment(assignment)) == assignment
    assert [name for name, _ in protocol.group_protocols(state, "sessioned")] == ["compatible", "default"]


def _assign(assignor, members, connectors, tasks, generation):
    return assignor.assign(members, connectors, tasks, generation - 1, generation)


def test_a_new_worker_gets_its_share_through_revocation_then_assignment():
    now = [0]
    assignor = IncrementalCooperativeAssignor(300000, lambda: now[0])
    tasks = [("c", i) for i in range(4)]
    first = _assign(assignor, {"a": ([], [])}, ["c"], tasks, 1)
    assert first.assigned_tasks == {"a": tasks} and first.assigned_connectors == {"a": ["c"]}
    second = _assign(assignor, {"a": (["c"], tasks), "b": ([], [])}, ["c"], tasks, 2)
    assert len(second.revoked_tasks["a"]) == 2 and second.assigned_tasks == {"a": [], "b": []}
    moved = second.revoked_tasks["a"]
    kept = [t for t in tasks if t not in moved]
    third = _assign(assignor, {"a": (["c"], kept), "b": ([], [])}, ["c"], tasks, 3)
    assert sorted(third.assigned_tasks["b"]) == sorted(moved) and third.revoked_tasks == {"a": [], "b": []}


def test_a_departed_workers_tasks_wait_for_the_delay_then_move():
    now = [1_000]
    assignor = IncrementalCooperativeAssignor(5000, lambda: now[0])
    tasks = [("c", 0), ("c", 1)]
    _assign(assignor, {"a": (["c"], [("c", 0)]), "b": ([], [("c", 1)])}, ["c"], tasks, 1)
    lost = _assign(assignor, {"a": (["c"], [("c", 0)])}, ["c"], tasks, 2)
    assert lost.delay == 5000 and lost.assigned_tasks == {"a": []}
    now[0] += 2000
    waiting = _assign(assignor, {"a": (["c"], [("c", 0)])}, ["c"], tasks, 3)
    assert waiting.delay == 3000 and waiting.assigned_tasks == {"a": []}
    now[0] += 3000
    moved = _assign(assignor, {"a": (["c"], [("c", 0)])}, ["c"], tasks, 4)
    assert moved.delay == 0 and moved.assigned_tasks == {"a": [("c", 1)]}


def test_deleted_and_duplicated_work_is_revoked():
    assignor = IncrementalCooperativeAssignor(0, lambda: 0)
    _assign(assignor, {"a": (["c", "d"], [("c", 0)]), "b": ([], [])}, ["c", "d"], [("c", 0)], 1)
    result = _assign(assignor, {"a": (["c", "d"], [("c", 0)]), "b": (["c"], [])}, ["c"], [("c", 0)], 2)
    assert sorted(result.revoked_connectors["a"]) == ["c", "d"] and result.revoked_connectors["b"] == ["c"]


def test_properties_files_as_java_reads_them():
    text = "# comment\n! also\na=1\nb : two\nc three\nlong=x\\\n    y\nesc=tab\\there\nunicode=\\u00e9\nempty=\n"
    assert properties.parse(text) == {"a": "1", "b": "two", "c": "three", "long": "xy", "esc": "tab\there",
                                      "unicode": "é", "empty": ""}


def test_json_converter_envelopes_and_refuses_plain_json_when_schemas_are_on():
    converter = build("org.apache.kafka.connect.json.JsonConverter", {}, is_key=False)
    data = converter.from_connect("t", {"type": "string", "optional": False}, "hello")
    assert data == b'{"schema":{"type":"string","optional":false},"payload":"hello"}'
    assert converter.to_connect("t", data) == ({"type": "string", "optional": False}, "hello")
    with pytest.raises(DataError, match="schemas.enable=false"):
        converter.to_connect("t", b'{"plain": true}')
    plain = build("JsonConverter", {"schemas.enable": "false"}, is_key=False)
    assert plain.from_connect("t", None, {"a": b"\x00"}) == b'{"a":"AA=="}'
    assert build("StringConverter", {}, is_key=True).to_connect("t", b"caf\xc3\xa9")[1] == "café"
