"""Kafka Connect's group subprotocol: what workers put in JoinGroup and SyncGroup
(ConnectProtocol, IncrementalCooperativeConnectProtocol). kafka.protocol has no schema for it,
so its few fields are encoded here, in Kafka's old Struct layout (big-endian; STRING is an
int16 length and UTF-8; BYTES an int32 length, -1 for null; ARRAY an int32 count, -1 null).

Protocols, in order of preference in JoinGroup: `sessioned` (v2: the v1 layout, plus internal
request signing, which this worker does not do: it never offers it), `compatible` (v1,
incremental cooperative, KIP-415) and `default` (v0, eager).

- Metadata v0: version, url, config-offset.
- Metadata v1/v2: version, url, config-offset, allocation (nullable bytes: the worker's
  current assignment, serialized as an assignment v1).
- Assignment v0: version, error, leader, leader-url, config-offset, assignment: [connector,
  [task ids]] where task -1 stands for the connector itself.
- Assignment v1/v2: the v0 fields, then revoked (same shape) and delay (int32 ms, the
  scheduled rebalance).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

EAGER, COMPATIBLE, SESSIONED = "default", "compatible", "sessioned"
VERSIONS = {EAGER: 0, COMPATIBLE: 1, SESSIONED: 2}
CONNECTOR_TASK = -1
NO_ERROR, CONFIG_MISMATCH = 0, 1


class ProtocolError(ValueError):
    pass


@dataclass
class Assignment:
    error: int = NO_ERROR
    leader: str = ""
    leader_url: str = ""
    config_offset: int = -1
    connectors: list[str] = field(default_factory=list)
    tasks: list[tuple[str, int]] = field(default_factory=list)
    revoked_connectors: list[str] = field(default_factory=list)
    revoked_tasks: list[tuple[str, int]] = field(default_factory=list)
    delay: int = 0
    version: int = 1

    @property
    def failed(self) -> bool:
        return self.error != NO_ERROR


@dataclass
class WorkerState:
    url: str
    config_offset: int
    connectors: list[str] = field(default_factory=list)
    tasks: list[tuple[str, int]] = field(default_factory=list)


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int16(self, v: int) -> "_Writer":
        self.parts.append(struct.pack(">h", v))
        return self

    def int32(self, v: int) -> "_Writer":
        self.parts.append(struct.pack(">i", v))
        return self

    def int64(self, v: int) -> "_Writer":
        self.parts.append(struct.pack(">q", v))
        return self

    def string(self, v: str) -> "_Writer":
        data = v.encode()
        self.parts.append(struct.pack(">h", len(data)) + data)
        return self

    def nullable_bytes(self, v: bytes | None) -> "_Writer":
        self.parts.append(struct.pack(">i", -1) if v is None else struct.pack(">i", len(v)) + v)
        return self

    def bytes(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = bytes(data), 0

    def _take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise ProtocolError("Connect protocol data is truncated")
        chunk = self.data[self.pos:self.pos + size]
        self.pos += size
        return chunk

    def int16(self) -> int:
        return struct.unpack(">h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def int64(self) -> int:
        return struct.unpack(">q", self._take(8))[0]

    def string(self) -> str:
        return self._take(self.int16()).decode(errors="replace")

    def nullable_bytes(self) -> bytes | None:
        size = self.int32()
        return None if size == -1 else self._take(size)

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos


def _grouped(connectors: list[str], tasks: list[tuple[str, int]]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for connector in connectors:
        grouped.setdefault(connector, []).append(CONNECTOR_TASK)
    for connector, task in tasks:
        grouped.setdefault(connector, []).append(task)
    return grouped


def _write_assignments(w: _Writer, grouped: dict[str, list[int]]) -> None:
    w.int32(len(grouped))
    for connector, ids in grouped.items():
        w.string(connector).int32(len(ids))
        for task in ids:
            w.int32(task)


def _read_assignments(r: _Reader) -> tuple[list[str], list[tuple[str, int]]]:
    count = r.int32()
    connectors, tasks = [], []
    for _ in range(max(count, 0)):
        connector = r.string()
        for _ in range(max(r.int32(), 0)):
            task = r.int32()
            if task == CONNECTOR_TASK:
                connectors.append(connector)
            else:
                tasks.append((connector, task))
    return connectors, tasks


def serialize_assignment(a: Assignment) -> bytes:
    w = _Writer().int16(a.version).int16(a.error).string(a.leader).string(a.leader_url).int64(a.config_offset)
    _write_assignments(w, _grouped(a.connectors, a.tasks))
    if a.version >= 1:
        _write_assignments(w, _grouped(a.revoked_connectors, a.revoked_tasks))
        w.int32(a.delay)
    return w.bytes()


def deserialize_assignment(data: bytes) -> Assignment:
    r = _Reader(data)
    version = r.int16()
    if version < 0:
        raise ProtocolError(f"Unsupported subscription version: {version}")
    a = Assignment(version=version, error=r.int16(), leader=r.string(), leader_url=r.string(),
                   config_offset=r.int64())
    a.connectors, a.tasks = _read_assignments(r)
    if version >= 1 and r.remaining:
        a.revoked_connectors, a.revoked_tasks = _read_assignments(r)
        if r.remaining >= 4:
            a.delay = r.int32()
    return a


def serialize_metadata(state: WorkerState, protocol: str) -> bytes:
    version = VERSIONS[protocol]
    w = _Writer().int16(version).string(state.url).int64(state.config_offset)
    if version >= 1:
        current = None
        if state.connectors or state.tasks:
            current = serialize_assignment(Assignment(connectors=state.connectors, tasks=state.tasks,
                                                      version=version, leader="", leader_url=""))
        w.nullable_bytes(current)
    return w.bytes()


def deserialize_metadata(data: bytes) -> WorkerState:
    r = _Reader(data)
    version = r.int16()
    if version < 0:
        raise ProtocolError(f"Unsupported subscription version: {version}")
    state = WorkerState(url=r.string(), config_offset=r.int64())
    if version >= 1 and r.remaining:
        allocation = r.nullable_bytes()
        if allocation:
            current = deserialize_assignment(allocation)
            state.connectors, state.tasks = current.connectors, current.tasks
    return state


def group_protocols(state: WorkerState, mode: str) -> list[tuple[str, bytes]]:
    """JoinGroup's protocols for `connect.protocol` (eager, or compatible/sessioned: this
    worker offers compatible and then eager, never sessioned)."""
    if mode == "eager":
        return [(EAGER, serialize_metadata(state, EAGER))]
    return [(COMPATIBLE, serialize_metadata(state, COMPATIBLE)), (EAGER, serialize_metadata(state, EAGER))]
