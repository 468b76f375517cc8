"""Every record of a client's batch is parsed before the batch is taken, compressed or not, as
Kafka's LogValidator does: lengths, counts, varints, header keys. And a compressed batch holds
one compressed stream, nothing after it."""
from __future__ import annotations

import gzip
import random
import tracemalloc

import lz4.frame
import pytest
import zstandard

from engine.storage.batch_records import ASSEMBLE_BYTES, FAST_PATH_BYTES, check_records
from engine.storage.decompression import decompressed_limit
from engine.storage.errors import CorruptRecordError, InvalidRecordError, StorageError
from engine.storage.log_config import LogConfig
from engine.storage.log_validator import analyze_records
from engine.storage.record_stream import RecordStream
from engine.storage.records import HEADER_SIZE, read_header
from tests.support.record_batches import CODECS, mutate, record, records, seal, varint

LIMIT = decompressed_limit(LogConfig().max_message_bytes)
GOOD = [record(0, b"k0", b"v0", [(b"h", b"x")]), record(1, None, b"v1"), record(2, b"k2", None, [(b"a", None)])]


def check(batch) -> None:
    check_records(batch, 0, read_header(batch), LIMIT)


def streamed(body: bytes, count: int, chunk: int = 7) -> None:
    """RecordStream alone, the body cut in small chunks (every field crosses a boundary somewhere)."""
    RecordStream(iter([body[i:i + chunk] for i in range(0, len(body), chunk)])).check(count)


LIES = {
    "a negative header count": (record(1, b"k", b"v", header_count=-1), "has -1 headers"),
    "a header count past the record": (record(1, b"k", b"v", [(b"h", b"x")], header_count=3), "past its length"),
    "a key length past the record": (record(1, b"k", b"v", key_length=200), "key runs past its length"),
    "a negative header key length": (record(1, b"k", b"v", [(b"h", b"x")], length_delta=0)
                                     .replace(b"\x02h\x02x", b"\x01h\x02x"), "header key of length -1"),
    "fields that end before the length": (record(1, b"k", b"v", extra=b"\x00\x00"), "end 2 bytes before"),
    "a header key that is not UTF-8": (record(1, b"k", b"v", [(b"\xff\xfe", b"x")]), "not UTF-8"),
    "a record length under the minimum": (varint(3) + b"\x00\x00\x02", "has length 3"),
}


@pytest.mark.parametrize("codec", CODECS.values(), ids=CODECS.keys())
@pytest.mark.parametrize("lie", LIES, ids=list(LIES))
def test_a_record_that_lies_is_invalid_record_in_every_codec(codec, lie):
    bad, _ = LIES[lie]
    body = GOOD[0] + bad + GOOD[2]
    check(seal(records([b"a", b"b", b"c"]), 3, codec=codec))
    with pytest.raises(InvalidRecordError):
        check(seal(body, 3, codec=codec))


@pytest.mark.parametrize("lie", LIES, ids=list(LIES))
def test_the_stream_reader_names_the_rule_across_chunk_boundaries(lie):
    bad, message = LIES[lie]
    streamed(GOOD[0] + GOOD[1] + GOOD[2], 3)
    with pytest.raises(InvalidRecordError, match=message):
        streamed(GOOD[0] + bad + GOOD[2], 3)


def test_the_stream_reader_refuses_what_kafka_refuses_and_clients_misread():
    long_varint = record(0, b"k", b"v").replace(b"\x02k", b"\x82\x80\x80\x80\x80\x00k")
    long_varint = varint(len(long_varint) - 1 + 5) + long_varint[1:]
    with pytest.raises(InvalidRecordError, match="varint longer than 5 bytes"):
        streamed(long_varint, 1)
    with pytest.raises(InvalidRecordError, match="attributes 0x80"):
        streamed(record(0, b"k", b"v", attributes=0x80), 1)


@pytest.mark.parametrize("codec", [1, 3, 4], ids=["gzip", "lz4", "zstd"])
def test_a_big_batch_is_read_as_it_inflates_and_a_lie_deep_inside_is_found(codec):
    value = bytes(range(256)) * 4
    count = FAST_PATH_BYTES // len(value) * 2                     # ~2 MiB inflated: the streamed path
    good = b"".join(record(i, b"k%d" % i, value, [(b"h", b"%d" % i)]) for i in range(count))
    check(seal(good, count, codec=codec))
    lie_at = count * 3 // 4
    bad = b"".join(record(i, b"k%d" % i, value, [(b"h", b"%d" % i)], header_count=2 if i == lie_at else None)
                   for i in range(count))
    with pytest.raises(InvalidRecordError, match=f"record {lie_at}"):
        check(seal(bad, count, codec=codec))
    with pytest.raises(InvalidRecordError, match="records"):
        check(seal(good, count + 1, codec=codec))


def test_a_record_bigger_than_memory_holds_is_read_field_by_field_in_bounded_memory():
    big = bytes(ASSEMBLE_BYTES * 3)
    body = record(0, b"k", b"v") + record(1, b"big", big, [(b"h", b"x")] * 3) + record(2, b"z", b"")
    check(seal(body, 3, codec=CODECS["zstd"]))
    lying = record(0, b"k", b"v") + record(1, b"big", big, [(b"h", b"x")] * 3, header_count=-5) + record(2, b"z", b"")
    batch = seal(lying, 3, codec=CODECS["zstd"])
    tracemalloc.start()
    try:
        with pytest.raises(InvalidRecordError, match="record 1 has -5 headers"):
            check(batch)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * FAST_PATH_BYTES + (1 << 20), f"{peak} bytes allocated"


def test_millions_of_tiny_headers_are_read_inline():
    """A hostile record of 2-byte headers; it parses, and a lie at its end is found."""
    headers = [(b"", None)] * 200_000
    body = record(0, b"k", b"v", headers)
    streamed(body, 1, chunk=64 * 1024)
    with pytest.raises(InvalidRecordError, match="past its length"):
        streamed(record(0, b"k", b"v", headers, header_count=200_001), 1, chunk=64 * 1024)


TRAILERS = {
    "two gzip members": (1, lambda body: gzip.compress(body) + gzip.compress(body)),
    "gzip with a trailer": (1, lambda body: gzip.compress(body) + b"\x00" * 8),
    "lz4 with a trailer": (3, lambda body: lz4.frame.compress(body) + b"trailer"),
    "two lz4 frames": (3, lambda body: lz4.frame.compress(body) + lz4.frame.compress(body)),
    "two zstd frames": (4, lambda body: zstandard.ZstdCompressor().compress(body) * 2),
    "zstd with a trailer": (4, lambda body: zstandard.ZstdCompressor(write_checksum=True).compress(body) + b"x"),
}


@pytest.mark.parametrize("case", TRAILERS, ids=list(TRAILERS))
def test_bytes_after_the_compressed_stream_are_corrupt_message(case):
    codec, compress = TRAILERS[case]
    body = records([b"one", b"two"])
    assert analyze_records(seal(body, 2, codec=codec), LogConfig(), from_client=True)
    with pytest.raises(CorruptRecordError, match="bytes follow the"):
        analyze_records(seal(body, 2, codec=codec, compressed=compress(body)), LogConfig(), from_client=True)


@pytest.mark.parametrize("codec", [0, 3], ids=["none", "lz4"])
def test_the_c_reader_and_the_stream_reader_agree(codec):
    """Mutated record bytes: both readers take or refuse each the same way, except for the two
    leniencies of the C reader (batch_records.py): long varints and top-bit attributes."""
    rng = random.Random(23)
    for _ in range(1500):
        values = [bytes(rng.randrange(256) for _ in range(rng.randint(0, 30))) for _ in range(rng.randint(1, 4))]
        body = b"".join(record(i, rng.choice([None, b"key"]), v, [(b"h%d" % j, rng.choice([None, b"x"]))
                                                                 for j in range(rng.randint(0, 2))])
                        for i, v in enumerate(values))
        body = mutate(rng, body)
        whole = _verdict(lambda: check(seal(body, len(values), codec=codec)))
        stream = _verdict(lambda: streamed(body, len(values)))
        if whole != stream:
            assert whole == "taken" and ("attributes" in stream or "varint longer" in stream), (whole, stream, body)


def _verdict(check_it) -> str:
    try:
        check_it()
    except StorageError as exc:
        return f"refused: {exc}"
    return "taken"


def test_every_codec_batch_built_by_kafka_python_is_taken():
    from kafka.record.default_records import DefaultRecordBatchBuilder
    for codec in CODECS.values():
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                            producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        for i in range(50):
            builder.append(i, 1_700_000_000_000 + i, b"k%d" % i, b"v" * i, headers=[("h", b"x"), ("n", None)])
        batch = builder.build()
        check(batch)
        assert HEADER_SIZE < len(batch)


def test_a_xerial_snappy_stream_cut_inside_a_block_size_is_corrupt_message():
    xerial = b"\x82SNAPPY\x00" + bytes([0, 0, 0, 1, 0, 0, 0, 1])
    with pytest.raises(CorruptRecordError, match="cannot decompress"):
        analyze_records(seal(records([b"x"]), 1, codec=CODECS["snappy"], compressed=xerial + b"\x00\x00"),
                        LogConfig(), from_client=True)
