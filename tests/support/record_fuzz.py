"""Fuzzing the records inside compressed batches, the part of a Produce that tests/support/fuzz.py
(which mutates whole requests) cannot reach: there the CRC fails first.

Each batch holds keyed records with headers, then one of:
- "records": its record bytes mutated (varints, lengths, counts) and then compressed and
  signed, so the compressed stream and the CRC are sound and only the record parser can tell;
- "stream": compressed, then the compressed bytes mutated, and signed;
- "trailer": a second compressed stream, or junk, after the first one;
- "valid": nothing changed (it must be taken).
Every Produce is answered, and with one of ANSWERS, or it counts as bad.
"""
from __future__ import annotations

import asyncio
import random
import struct
import time
from collections import Counter
from dataclasses import dataclass, field

from kafka.protocol.producer import ProduceRequest, ProduceResponse

from tests.support.record_batches import mutate, record, seal

KINDS = ("records", "stream", "trailer", "valid")
CODECS = (1, 2, 3, 4)          # gzip, snappy, lz4, zstd
ANSWERS = {0, 2, 87}           # appended, CORRUPT_MESSAGE, INVALID_RECORD
VERSION = 9


def fuzzed_batch(rng: random.Random) -> tuple[str, bytes]:
    kind = rng.choice(KINDS)
    codec = rng.choice(CODECS)
    count = rng.randint(1, 6)
    body = b"".join(record(i, b"key-%d" % rng.randrange(8), rng.randbytes(rng.randint(0, 40)),
                           [(b"h%d" % j, rng.choice([None, rng.randbytes(3)])) for j in range(rng.randint(0, 2))])
                    for i in range(count))
    if kind == "records":
        return kind, bytes(seal(mutate(rng, body), count, codec=codec))
    compressed = bytes(seal(body, count, codec=codec)[61:])
    if kind == "stream":
        return kind, bytes(seal(body, count, codec=codec, compressed=mutate(rng, compressed)))
    if kind == "trailer":
        extra = compressed if rng.random() < 0.5 else rng.randbytes(rng.randint(1, 8))
        return kind, bytes(seal(body, count, codec=codec, compressed=compressed + extra))
    return kind, bytes(seal(body, count, codec=codec))


@dataclass
class RecordOutcomes:
    answers: Counter = field(default_factory=Counter)      # (kind, error code) -> how many
    bad: list = field(default_factory=list)
    requests: int = 0


async def run(port: int, topic: str, partitions: int, *, seconds: float, connections: int = 4, seed: int = 0,
              reply_timeout: float = 30.0) -> RecordOutcomes:
    outcomes = RecordOutcomes()
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(_worker(port, topic, partitions, random.Random(seed * 1000 + i), outcomes, deadline,
                                   reply_timeout) for i in range(connections)))
    return outcomes


async def _worker(port: int, topic: str, partitions: int, rng: random.Random, outcomes: RecordOutcomes,
                  deadline: float, reply_timeout: float) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    correlation_id = 0
    try:
        while time.monotonic() < deadline:
            kind, batch = fuzzed_batch(rng)
            correlation_id += 1
            outcomes.requests += 1
            P = ProduceRequest.TopicProduceData
            request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[P(
                name=topic, partition_data=[P.PartitionProduceData(index=rng.randrange(partitions), records=batch)])])
            request.with_header(correlation_id=correlation_id, client_id="record-fuzz")
            writer.write(request.encode(version=VERSION, header=True, framed=True))
            await writer.drain()
            try:
                async with asyncio.timeout(reply_timeout):
                    (size,) = struct.unpack(">i", await reader.readexactly(4))
                    reply = await reader.readexactly(size)
            except (TimeoutError, asyncio.IncompleteReadError, ConnectionError) as exc:
                outcomes.bad.append((kind, type(exc).__name__, batch[:80]))
                return
            code = ProduceResponse.decode(reply, version=VERSION, header=True).responses[0] \
                .partition_responses[0].error_code
            outcomes.answers[(kind, code)] += 1
            if code not in ANSWERS or (kind == "valid" and code != 0):
                outcomes.bad.append((kind, code, batch[:80]))
    finally:
        writer.transport.abort()
