import struct
import tracemalloc

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from engine.storage.errors import InvalidRecordError, InvalidTimestampError, RecordTooLargeError
from engine.storage.log_config import LogConfig
from engine.storage.log_validator import analyze_records, assign_offsets_and_timestamps
from engine.storage.records import ATTRIBUTES_OFFSET, CONTROL_MASK, HEADER_SIZE, LOG_OVERHEAD, read_header
from kafka.record.util import calc_crc32c

from .conftest import BASE_TS, make_batch, values


def resign(buf):
    crc = calc_crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:])
    struct.pack_into(">I", buf, 17, crc)
    return buf


def test_client_may_not_write_control_batches():
    buf = make_batch(values(1))
    (attrs,) = struct.unpack_from(">h", buf, ATTRIBUTES_OFFSET)
    struct.pack_into(">h", buf, ATTRIBUTES_OFFSET, attrs | CONTROL_MASK)
    with pytest.raises(InvalidRecordError):
        analyze_records(resign(buf), LogConfig(), from_client=True)
    assert analyze_records(buf, LogConfig(), from_client=False)  # replication keeps them


def test_record_count_must_match_offset_range():
    buf = make_batch(values(3))
    struct.pack_into(">i", buf, LOG_OVERHEAD + 45, 2)  # recordsCount field
    with pytest.raises(InvalidRecordError):
        analyze_records(resign(buf), LogConfig(), from_client=True)


def test_size_limit_is_per_batch():
    buf = make_batch(values(3)) + make_batch(values(3))
    limit = read_header(buf).size
    assert len(analyze_records(buf, LogConfig(max_message_bytes=limit), from_client=True)) == 2
    with pytest.raises(RecordTooLargeError):
        analyze_records(buf, LogConfig(max_message_bytes=limit - 1), from_client=True)


def test_assign_offsets_and_timestamps_over_several_batches():
    buf = make_batch(values(2), timestamps=[5, 50]) + make_batch(values(3), timestamps=[7, 8, 9])
    stamped = assign_offsets_and_timestamps(
        buf, analyze_records(buf, LogConfig(), from_client=True),
        base_offset=100, leader_epoch=4, log_append_time=None)
    assert (stamped.first_offset, stamped.last_offset, stamped.num_records) == (100, 104, 5)
    assert (stamped.max_timestamp, stamped.offset_of_max_timestamp) == (50, 101)
    assert [h.base_offset for h in stamped.headers] == [100, 102]
    assert analyze_records(buf, LogConfig(), from_client=True)  # CRCs still valid


# --- the records against the header (Kafka's LogValidator reads them too) ------------------

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def keyed(pairs, codec: int = 0) -> bytearray:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for i, (key, value) in enumerate(pairs):
        builder.append(i, 1_700_000_000_000 + i, key, value, headers=[])
    batch = builder.build()
    assert read_header(batch).compression_type == codec, "kafka-python keeps it raw if that is smaller"
    return batch


def refused(buf, config=LogConfig(), match=None):
    with pytest.raises(InvalidRecordError, match=match):
        analyze_records(buf, config, from_client=True)


@pytest.mark.parametrize("codec", CODECS.values(), ids=CODECS.keys())
def test_a_header_that_lies_about_its_records_is_invalid_record(codec):
    pairs = [(b"k%d" % i, b"value-%d" % i * 20) for i in range(5)]
    assert analyze_records(keyed(pairs, codec), LogConfig(), from_client=True)
    for count in (2**31 - 1, 4, 6):   # the log end would jump by 2^31, or drift by one
        buf = keyed(pairs, codec)
        struct.pack_into(">i", buf, LOG_OVERHEAD + 45, count)           # recordsCount
        struct.pack_into(">i", buf, LOG_OVERHEAD + 11, count - 1)       # lastOffsetDelta, to match it
        refused(resign(buf), match="records")


def test_offset_deltas_must_count_up_from_zero():
    buf = keyed([(b"a", b"1"), (b"b", b"2")])
    first = HEADER_SIZE
    second = first + 1 + buf[first] // 2          # past record 0 (length varint + length)
    assert buf[second + 3] == 2                    # record 1's offsetDelta: zigzag(1)
    buf[second + 3] = 4                            # says 2
    refused(resign(buf), match="offset delta 2")


def test_record_lengths_must_fill_the_batch_exactly():
    buf = keyed([(b"a", b"1"), (b"b", b"2")])
    buf[HEADER_SIZE] += 2                          # record 0 claims a byte more
    refused(resign(buf))
    trailing = keyed([(b"a", b"1")]) + b"\x00\x00"
    struct.pack_into(">i", trailing, 8, len(trailing) - LOG_OVERHEAD)
    refused(resign(trailing), match="record 1 has length 0")


@pytest.mark.parametrize("codec", [1, 3, 4], ids=["gzip", "lz4", "zstd"])
def test_a_decompression_bomb_is_refused_with_bounded_memory(codec):
    bomb = keyed([(b"k", bytes(40 << 20))], codec)   # 40 MiB of zeros in one record
    assert len(bomb) < LogConfig().max_message_bytes  # small enough to be accepted as bytes
    tracemalloc.start()
    try:
        refused(bomb, LogConfig(), match="inflates past|claims")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"{peak} bytes allocated"


def test_a_snappy_block_claiming_a_gigabyte_is_refused_before_inflating():
    """Snappy inflates at most ~20x, but a raw block states its size up front, and may lie."""
    batch = keyed([(b"k", b"v" * 100)], CODECS["snappy"])
    lying = batch[:HEADER_SIZE] + bytes([0x80, 0x80, 0x80, 0x80, 0x04]) + b"\x00" * 20   # varint 1 GiB
    struct.pack_into(">i", lying, 8, len(lying) - LOG_OVERHEAD)
    tracemalloc.start()
    try:
        refused(resign(lying), match="claims 1073741824 bytes")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.parametrize("codec", [1, 3, 4], ids=["gzip", "lz4", "zstd"])
def test_records_across_inflated_chunks_are_walked_whole(codec):
    """Records cut by the 64 KiB chunk boundaries, one bigger than a chunk (its body skipped)."""
    pairs = [(b"k%d" % i, bytes([i]) * 10_000) for i in range(30)] + [(b"big", b"\x07" * 200_000), (b"z", b"")]
    assert analyze_records(keyed(pairs, codec), LogConfig(), from_client=True)
    lying = keyed(pairs, codec)
    struct.pack_into(">i", lying, LOG_OVERHEAD + 45, len(pairs) + 1)
    struct.pack_into(">i", lying, LOG_OVERHEAD + 11, len(pairs))
    refused(resign(lying), match="records")


@pytest.mark.parametrize("codec", [0, 1, 4])
def test_createtime_records_outside_the_timestamp_bounds_are_invalid_timestamp(codec):
    now = BASE_TS + 10_000
    config = LogConfig(message_timestamp_before_max_ms=5_000, message_timestamp_after_max_ms=1_000)
    inside = timestamped([now - 5_000, now, now + 1_000, -1], codec)           # -1: NO_TIMESTAMP passes
    assert len(analyze_records(inside, config, from_client=True, now_ms=now)) == 1
    outside = timestamped([now, now - 5_001, now + 1_001], codec)
    with pytest.raises(InvalidTimestampError) as refused:
        analyze_records(outside, config, from_client=True, now_ms=now)
    assert refused.value.error_code == 32
    assert [index for index, _ in refused.value.record_errors] == [1, 2]
    assert f"within [{now - 5_000}, {now + 1_000}]" in refused.value.record_errors[0][1]
    # The broker's own writes, replication and LogAppendTime topics are not checked.
    assert analyze_records(outside, config, from_client=False, now_ms=now)
    stamped_by_broker = LogConfig(message_timestamp_type="LogAppendTime", message_timestamp_after_max_ms=0)
    assert analyze_records(outside, stamped_by_broker, from_client=True, now_ms=now)


def timestamped(stamps: list[int], codec: int) -> bytearray:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, stamp in enumerate(stamps):
        builder.append(i, stamp, None, b"v", headers=[])
    return builder.build()
