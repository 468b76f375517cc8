"""Record batches built byte by byte, so that tests can make them lie: a header count, a key
length, a varint, bytes after the compressed stream. `seal` compresses the records with
kafka.codec and signs the batch (CRC-32C), so a lie reaches the record parser and not the
CRC check. Kafka's v2 layout: engine/storage/records.py and record_stream.py."""
from __future__ import annotations

import random
import time

from kafka.codec import gzip_encode, lz4_encode, snappy_encode, zstd_encode
from kafka.record.util import calc_crc32c, encode_varint

from engine.storage.records import HEADER, HEADER_SIZE, MIN_BATCH_LENGTH, BatchHeader

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
_COMPRESS = {0: bytes, 1: gzip_encode, 2: snappy_encode, 3: lz4_encode, 4: zstd_encode}


def varint(value: int) -> bytes:
    out = bytearray()
    encode_varint(value, out.append)
    return bytes(out)


def record(index: int, key: bytes | None, value: bytes | None, headers=(), *, attributes: int = 0,
           header_count: int | None = None, key_length: int | None = None, extra: bytes = b"",
           length_delta: int = 0) -> bytes:
    """One record as Kafka writes it, optionally lying: `header_count`, `key_length` (the
    length field, not the key), `extra` bytes after the fields, `length_delta` added to its length."""
    body = bytearray([attributes]) + varint(0) + varint(index)
    body += varint(-1 if key is None else len(key) if key_length is None else key_length) + (key or b"")
    body += varint(-1 if value is None else len(value)) + (value or b"")
    body += varint(len(headers) if header_count is None else header_count)
    for name, data in headers:
        body += varint(len(name)) + name + varint(-1 if data is None else len(data)) + (data or b"")
    body += extra
    return varint(len(body) + length_delta) + bytes(body)


def records(values: list[bytes], *, keys: list[bytes] | None = None) -> bytes:
    return b"".join(record(i, keys[i] if keys else None, v) for i, v in enumerate(values))


def seal(body: bytes, count: int, *, codec: int = 0, compressed: bytes | None = None,
         timestamp: int | None = None, producer: tuple[int, int, int] = (-1, -1, -1)) -> bytearray:
    """A signed v2 batch around record bytes `body` (compressed with `codec`), saying it holds
    `count` records; `compressed` replaces the codec's output (a stream with a trailer, say)."""
    data = _COMPRESS[codec](body) if compressed is None else compressed
    timestamp = int(time.time() * 1000) if timestamp is None else timestamp
    header = BatchHeader(base_offset=0, length=MIN_BATCH_LENGTH + len(data), partition_leader_epoch=-1, magic=2,
                         crc=0, attributes=codec, last_offset_delta=count - 1, first_timestamp=timestamp,
                         max_timestamp=timestamp, producer_id=producer[0], producer_epoch=producer[1],
                         base_sequence=producer[2], records_count=count)
    batch = bytearray(HEADER.pack(*header)) + data
    crc = calc_crc32c(memoryview(batch)[21:])
    batch[17:21] = crc.to_bytes(4, "big")
    return batch


def mutate(rng: random.Random, body: bytes) -> bytes:
    """`body` with its varints and lengths changed: a byte set, a varint's continuation bit
    flipped, a byte inserted or dropped, or a length field made to lie."""
    out = bytearray(body)
    for _ in range(rng.randint(1, 3)):
        if not out:
            break
        pos = rng.randrange(len(out))
        kind = rng.random()
        if kind < 0.35:
            out[pos] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        elif kind < 0.6:
            out[pos] ^= 0x80
        elif kind < 0.75:
            out[pos:pos] = bytes([rng.randrange(256)])
        elif kind < 0.9:
            del out[pos]
        else:
            out[pos:pos + 1] = varint(rng.choice([-2, -1, 2**31 - 1, -2**31, 1 << 20]))
    return bytes(out)


__all__ = ["CODECS", "HEADER_SIZE", "mutate", "record", "records", "seal", "varint"]
