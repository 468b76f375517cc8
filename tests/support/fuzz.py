"""A protocol fuzzer: one valid request of every API and version the engine serves, mutated.

`sample_request` fills every field of a request class from its Kafka JSON schema (one
element per array, a real v2 batch for records); `mutations` yields framed requests whose
lengths, counts, nullability markers, varints and bytes were changed at random. `run`
sends them from several connections at once and sorts every outcome:

- "reply": a response that decodes as the API and version asked, correlation id included;
- "closed": the engine closed the connection;
- "bad_reply": anything else (an undecodable or mismatched reply) — a bug;
- "timeout": no answer within the deadline — a bug (a hang).

`run_before_login` does the same to a SASL listener's connections before they log in.

Used by tests/engine/protocol/test_fuzz.py (bounded) and benchmarks/fuzz.py (1M frames).
"""
from __future__ import annotations

import asyncio
import random
import struct
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from kafka.record.default_records import DefaultRecordBatchBuilder

TOPIC = "fuzz-t"
_INT_TYPES = {"int8", "int16", "int32", "int64", "uint16", "uint32"}
# Values that keep a valid request cheap to serve: no long polls, no topic creation.
_INT_OVERRIDES = {"max_wait_ms": 0, "replica_id": -1, "generation_id": -1, "producer_id": -1, "producer_epoch": -1,
                  "leader_epoch": -1, "current_leader_epoch": -1, "timestamp": -1, "session_timeout_ms": 6000,
                  "rebalance_timeout_ms": 6000, "timeout_ms": 100, "acks": 1, "count": 1, "broker_id": 0,
                  "session_epoch": -1}


def _records() -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 16)
    builder.append(0, timestamp=int(time.time() * 1000), key=b"k", value=b"fuzz", headers=[])
    return bytes(builder.build())


def _value(field, version: int):
    type_name = field._json["type"]
    name = field.name
    if field.is_struct_array():
        return [_fill(field.data_class, field.fields, version)]
    if field.is_struct():
        return _fill(field.data_class, field.fields, version)
    if type_name.startswith("[]"):
        inner = type_name[2:]
        return [TOPIC] if inner == "string" else [uuid.UUID(int=1)] if inner == "uuid" else [0]
    if type_name == "string":
        return TOPIC
    if type_name in _INT_TYPES:
        return _INT_OVERRIDES.get(name, 1)
    if type_name == "bool":
        return name == "validate_only"      # validate, never create
    if type_name == "uuid":
        return uuid.UUID(int=1)
    if type_name == "float64":
        return 0.0
    if type_name == "records":
        return _records()
    if type_name == "bytes":
        return b"fuzz"
    raise ValueError(f"no sample for {name}: {type_name}")


def _fill(data_class, fields: dict, version: int):
    values = {}
    for name, f in fields.items():
        if f.for_version_q(version) and not f.tagged_field_q(version):
            values[name] = _value(f, version)
    return data_class(**values)


def sample_request(request_class, version: int):
    values = {}
    for name, f in request_class.fields.items():
        if f.for_version_q(version) and not f.tagged_field_q(version):
            values[name] = _value(f, version)
    return request_class(**values)


@dataclass
class Template:
    api_key: int
    version: int
    frame: bytes                  # framed: size, header, body
    header_size: int              # bytes of size prefix + request header
    response_class: type
    request_class: type


def templates(specs) -> list[Template]:
    """One valid framed request per (API, version) of `specs` (engine.protocol.registry.ApiSpec)."""
    out = []
    for spec in specs:
        for version in range(spec.min_version, spec.max_version + 1):
            request = sample_request(spec.request_class, version)
            request.with_header(correlation_id=0, client_id="fuzz")
            framed = request.encode(version=version, header=True, framed=True)
            body = request.encode(version=version, header=False, framed=False)
            out.append(Template(spec.key, version, framed, len(framed) - len(body), spec.response_class,
                                spec.request_class))
    return out


def _mutate(rng: random.Random, template: Template) -> bytes:
    data = bytearray(template.frame[4:])
    start = template.header_size - 4          # the body; the header is kept so replies can be matched
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        kind = rng.randrange(7)
        at = rng.randrange(start, max(start + 1, len(data)))
        if kind == 0:                          # random bytes
            for i in range(at, min(len(data), at + rng.choice((1, 2, 4)))):
                data[i] = rng.randrange(256)
        elif kind == 1:                        # a 32-bit count or length that lies
            data[at:at + 4] = struct.pack(">i", rng.choice((-1, -2, 0, 0x7FFFFFFF, -0x80000000, 65536,
                                                             rng.randrange(-2**31, 2**31))))
        elif kind == 2:                        # a 16-bit string length: null, negative, too long
            data[at:at + 2] = struct.pack(">h", rng.choice((-1, -2, 0, 0x7FFF, rng.randrange(-2**15, 2**15))))
        elif kind == 3:                        # varints: null (0), huge, unterminated
            data[at:at + 1] = rng.choice((b"\x00", b"\xff\xff\xff\xff\x0f", b"\xff\xff\xff\xff\xff\xff",
                                          b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", b"\x01"))
        elif kind == 4:                        # cut short
            del data[at:]
        elif kind == 5:                        # trailing junk
            data += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
        else:                                  # a byte dropped or doubled shifts everything after it
            if rng.random() < 0.5:
                del data[at:at + 1]
            else:
                data[at:at] = data[at:at + 1]
    return struct.pack(">i", len(data)) + bytes(data)


@dataclass
class Outcomes:
    counts: Counter = field(default_factory=Counter)
    per_api: Counter = field(default_factory=Counter)
    bad: list = field(default_factory=list)
    frames: int = 0


async def _read_frame(reader: asyncio.StreamReader, timeout: float) -> bytes | None:
    try:
        async with asyncio.timeout(timeout):
            (size,) = struct.unpack(">i", await reader.readexactly(4))
            return await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def _no_prompt_reply(template: Template, frame: bytearray) -> str | None:
    """Mutations can make requests that rightly get no prompt answer: a Produce with acks=0
    gets none at all, and a Fetch or ShareFetch with a long max_wait_ms may wait that long."""
    if template.api_key not in (0, 1, 78):
        return None
    try:
        request = template.request_class.decode(bytes(frame[4:]), version=template.version, header=True)
    except Exception:  # noqa: BLE001 - malformed: the engine answers by closing
        return None
    if template.api_key == 0 and request.acks == 0:
        return "acks_0"
    if template.api_key in (1, 78) and request.max_wait_ms > 1000:
        return "long_poll"
    return None


def _judge(template: Template, correlation_id: int, reply: bytes) -> str:
    (got,) = struct.unpack_from(">i", reply)
    if got != correlation_id:
        return "bad_reply"
    for version in (template.version, 0) if template.api_key == 18 else (template.version,):
        try:
            template.response_class.decode(reply, version=version, header=True)
            return "reply"
        except Exception:  # noqa: BLE001 - any decode failure is a bad reply
            continue
    return "bad_reply"


async def _worker(port: int, plan: list[Template], rng: random.Random, outcomes: Outcomes, deadline: float,
                  reply_timeout: float, stop_after: int) -> None:
    reader = writer = None
    correlation_id = 0
    while time.monotonic() < deadline and outcomes.frames < stop_after:
        template = plan[outcomes.frames % len(plan)]
        outcomes.frames += 1
        if writer is None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        correlation_id += 1
        frame = bytearray(_mutate(rng, template))
        if len(frame) >= 12:
            struct.pack_into(">i", frame, 8, correlation_id)
        outcomes.per_api[(template.api_key, template.version)] += 1
        try:
            writer.write(frame)
            await writer.drain()
            silent = _no_prompt_reply(template, frame)
            if silent:
                outcomes.counts[silent] += 1
                if silent == "long_poll":     # a legitimate wait: do not wait for it
                    writer.transport.abort()
                    reader = writer = None
                continue
            reply = await _read_frame(reader, reply_timeout)
        except TimeoutError:
            outcomes.counts["timeout"] += 1
            outcomes.bad.append((template.api_key, template.version, "timeout", bytes(frame[:64])))
            reply = None
        except ConnectionError:
            reply = None
        if reply is None:
            outcomes.counts.setdefault("closed", 0)
            outcomes.counts["closed"] += 1
            writer.transport.abort()
            reader = writer = None
            continue
        verdict = _judge(template, correlation_id, reply)
        outcomes.counts[verdict] += 1
        if verdict != "reply":
            outcomes.bad.append((template.api_key, template.version, verdict, bytes(frame[:64])))
    if writer is not None:
        writer.transport.abort()


async def run(port: int, plan: list[Template], *, frames: int, seconds: float, connections: int = 8,
              seed: int = 0, reply_timeout: float = 15.0) -> Outcomes:
    outcomes = Outcomes()
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(_worker(port, plan, random.Random(seed * 1000 + i), outcomes, deadline, reply_timeout,
                                   frames) for i in range(connections)))
    return outcomes


# --- before the login, on a SASL listener ----------------------------------------------------
# Each connection starts unauthenticated and tries one thing: a mutated request of any API
# (only ApiVersions, SaslHandshake and SaslAuthenticate may be answered), a good SaslHandshake
# (v1, or v0 for bare tokens) followed by a mutated SaslAuthenticate or random bare token, or a
# size prefix over `sasl.server.max.receive.size` with part of a body. The last must be closed
# at once; nothing may hang or answer what the client cannot decode.

def _handshake(mechanism: str, version: int, correlation_id: int) -> bytes:
    from kafka.protocol.sasl import SaslHandshakeRequest
    request = SaslHandshakeRequest(mechanism=mechanism)
    request.with_header(correlation_id=correlation_id, client_id="fuzz")
    return request.encode(version=version, header=True, framed=True)


def _oversized(rng: random.Random, cap: int) -> bytes:
    size = rng.choice((cap + 1, 100 << 20, 0x7FFFFFFF, rng.randrange(cap + 1, 0x7FFFFFFF)))
    return struct.pack(">i", size) + rng.randbytes(rng.choice((0, 100, 65536, 1 << 20)))


async def _exchange(reader, writer, frame: bytes, timeout: float) -> bytes | None:
    writer.write(frame)
    await writer.drain()
    return await _read_frame(reader, timeout)


async def _pre_login_attempt(port: int, plan: list[Template], rng: random.Random, mechanisms: tuple[str, ...],
                             cap: int, reply_timeout: float) -> tuple[str, Template | None]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        scenario = rng.randrange(4)
        if scenario == 0:                          # an oversized prefix: closed before its body
            reply = await _exchange(reader, writer, _oversized(rng, cap), reply_timeout)
            return ("closed" if reply is None else "bad_reply"), None
        template = rng.choice(plan)
        if scenario in (1, 2):                     # a good handshake, then the fuzzed frame
            version = 1 if scenario == 1 else 0
            answer = await _exchange(reader, writer, _handshake(rng.choice(mechanisms), version, 1), reply_timeout)
            if answer is None or struct.unpack_from(">i", answer)[0] != 1:
                return "bad_reply", template
            if scenario == 2:                      # bare tokens (KIP-152's v0 path): any reply is a bare one
                token = rng.randbytes(rng.randrange(0, 512))
                reply = await _exchange(reader, writer, struct.pack(">i", len(token)) + token, reply_timeout)
                return ("closed" if reply is None else "reply"), None
            template = rng.choice([t for t in plan if t.api_key == 36] or plan)
        frame = bytearray(_mutate(rng, template))
        if len(frame) >= 12:
            struct.pack_into(">i", frame, 8, 2)
        reply = await _exchange(reader, writer, bytes(frame), reply_timeout)
        return ("closed" if reply is None else _judge(template, 2, reply)), template
    except TimeoutError:
        return "timeout", None
    except ConnectionError:
        return "closed", None
    finally:
        writer.transport.abort()


async def _pre_login_worker(port: int, plan: list[Template], rng: random.Random, outcomes: Outcomes, deadline: float,
                            reply_timeout: float, stop_after: int, mechanisms: tuple[str, ...], cap: int) -> None:
    while time.monotonic() < deadline and outcomes.frames < stop_after:
        outcomes.frames += 1
        verdict, template = await _pre_login_attempt(port, plan, rng, mechanisms, cap, reply_timeout)
        outcomes.counts[verdict] += 1
        if template is not None:
            outcomes.per_api[(template.api_key, template.version)] += 1
        if verdict in ("bad_reply", "timeout"):
            outcomes.bad.append((template.api_key if template else None, template.version if template else None,
                                 verdict))


async def run_before_login(port: int, plan: list[Template], *, frames: int, seconds: float, mechanisms: tuple[str, ...],
                           cap: int = 524288, connections: int = 8, seed: int = 0,
                           reply_timeout: float = 15.0) -> Outcomes:
    """Fuzz a SASL listener's unauthenticated connections (see above); `cap` is its
    sasl.server.max.receive.size."""
    outcomes = Outcomes()
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(_pre_login_worker(port, plan, random.Random(seed * 1000 + i), outcomes, deadline,
                                             reply_timeout, frames, mechanisms, cap) for i in range(connections)))
    return outcomes
