"""Inflate the records of a compressed batch as a stream, with a bound on the output.

A 65 KB zstd batch can claim gigabytes: inflating it whole would take the memory and, on
the event loop, every connection's time. Each codec here is driven through its library's
streaming API (zlib's decompressobj, lz4.frame's LZ4FrameDecompressor, zstandard's
read_to_iter; snappy's blocks announce their size, which is checked before each is
inflated), yielding chunks of at most CHUNK_BYTES; past `limit` output bytes it raises
InvalidRecordError. So neither memory nor time grows with what a batch claims.

Codec ids are the batch attributes' low bits, as in Kafka: 1 gzip, 2 snappy, 3 lz4, 4 zstd.
Pure computation: no I/O, no shared state.
"""
from __future__ import annotations

import io
import struct
import zlib
from typing import Iterator

import cramjam
import lz4.frame
import zstandard

from .errors import CorruptRecordError, InvalidRecordError

CHUNK_BYTES = 64 * 1024
# How far past max.message.bytes a batch may inflate. Text compresses about 10x; a
# producer whose batches inflate further must use smaller batches.
MAX_INFLATION = 32
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_INT32 = struct.Struct(">i")


def decompressed_limit(max_message_bytes: int) -> int:
    return max(max_message_bytes, 1 << 20) * MAX_INFLATION


def inflate(codec: int, data, limit: int) -> Iterator[bytes]:
    """The decompressed bytes of `data`, chunk by chunk; raises past `limit` bytes or on
    data the codec cannot read (CorruptRecordError)."""
    reader = _READERS.get(codec)
    if reader is None:
        raise CorruptRecordError(f"unknown compression codec {codec}")
    total = 0
    try:
        for chunk in reader(bytes(data), limit):
            total += len(chunk)
            if total > limit:
                raise InvalidRecordError(f"the batch inflates past {limit} bytes "
                                         f"({MAX_INFLATION} x max.message.bytes): refused")
            yield chunk
    except (zlib.error, RuntimeError, zstandard.ZstdError, cramjam.DecompressionError, ValueError,
            struct.error) as exc:
        raise CorruptRecordError(f"cannot decompress the batch: {exc}") from None


def _gzip(data: bytes, limit: int) -> Iterator[bytes]:
    inflater = zlib.decompressobj(wbits=47)   # 32 + 15: a gzip or zlib header
    chunk = inflater.decompress(data, CHUNK_BYTES)
    while chunk:
        yield chunk
        chunk = inflater.decompress(inflater.unconsumed_tail, CHUNK_BYTES)
    if not inflater.eof:
        raise ValueError("truncated gzip stream")
    _no_trailer(len(inflater.unused_data), "gzip stream")   # a second gzip member, or anything


def _lz4(data: bytes, limit: int) -> Iterator[bytes]:
    inflater = lz4.frame.LZ4FrameDecompressor()
    chunk = inflater.decompress(data, max_length=CHUNK_BYTES)
    while chunk:
        yield chunk
        if inflater.eof:
            break
        chunk = inflater.decompress(b"", max_length=CHUNK_BYTES)
    if not inflater.eof:
        raise ValueError("truncated lz4 frame")
    _no_trailer(len(inflater.unused_data or b""), "lz4 frame")


def _zstd(data: bytes, limit: int) -> Iterator[bytes]:
    # read_to_iter inflates one frame and ignores what follows it: the frame's end is found
    # from its block headers first, so a second frame or a trailer is refused.
    _no_trailer(len(data) - _zstd_frame_end(data), "zstd frame")
    yield from zstandard.ZstdDecompressor().read_to_iter(io.BytesIO(data), read_size=CHUNK_BYTES,
                                                          write_size=CHUNK_BYTES)


def _zstd_frame_end(data: bytes) -> int:
    """Where the zstd frame at the start of `data` ends (RFC 8878 section 3.1.1: the frame
    header, blocks of a 3-byte header each, the last one flagged, then an optional 4-byte
    checksum). The zstandard package inflates frames but does not say where one ends."""
    pos = zstandard.frame_header_size(data)   # raises ZstdError on a bad magic or header
    while True:
        if pos + 3 > len(data):
            raise ValueError("truncated zstd block header")
        block_header = int.from_bytes(data[pos:pos + 3], "little")
        last, block_type, block_size = block_header & 1, (block_header >> 1) & 3, block_header >> 3
        pos += 3 + (1 if block_type == 1 else block_size)   # an RLE block stores one byte
        if last:
            break
    if data[4] & 0x04:                                      # Content_Checksum_flag
        pos += 4
    if pos > len(data):
        raise ValueError("truncated zstd frame")
    return pos


def _no_trailer(extra: int, what: str) -> None:
    if extra:
        raise CorruptRecordError(f"{extra} bytes follow the {what} inside the batch")


def _snappy(data: bytes, limit: int) -> Iterator[bytes]:
    """Kafka's Java clients write xerial-framed snappy (blocks of int32 size + raw snappy);
    others write one raw snappy block. A raw block states its inflated size up front."""
    if not data.startswith(_XERIAL_MAGIC):
        yield from _snappy_block(data, limit)
        return
    pos = 16
    while pos < len(data):
        if pos + 4 > len(data):
            raise ValueError("truncated xerial snappy block size")
        (size,) = _INT32.unpack_from(data, pos)
        if size < 0 or pos + 4 + size > len(data):
            raise ValueError("bad xerial snappy block size")
        yield from _snappy_block(data[pos + 4:pos + 4 + size], limit)
        pos += 4 + size


def _snappy_block(block: bytes, limit: int) -> Iterator[bytes]:
    size = cramjam.snappy.decompress_raw_len(block)
    if size > limit:   # refused before anything is allocated
        raise InvalidRecordError(f"a snappy block claims {size} bytes, past the limit of {limit}: refused")
    yield bytes(cramjam.snappy.decompress_raw(block))


_READERS = {1: _gzip, 2: _snappy, 3: _lz4, 4: _zstd}
