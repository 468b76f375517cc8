import pytest
from kafka.record.default_records import DefaultRecordBatch

from engine.storage.errors import CorruptRecordError
from engine.storage.records import (
    HEADER_SIZE, assign_offsets, increment_sequence, iter_batches, read_header,
    set_log_append_time, validate_crc)

from .conftest import BASE_TS, make_batch, values


def test_read_header_matches_kafka_python():
    buf = make_batch(values(3), producer=(7, 2, 40))
    header = read_header(buf)
    batch = DefaultRecordBatch(buf)
    assert header.size == len(buf) == batch.size_in_bytes
    assert (header.base_offset, header.last_offset, header.next_offset) == (0, 2, 3)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (7, 2, 40)
    assert header.last_sequence == 42
    assert header.records_count == 3
    assert header.first_timestamp == BASE_TS and header.max_timestamp == BASE_TS + 2
    assert header.magic == 2 and header.crc == batch.crc
    assert not header.is_control and not header.is_transactional
    assert header.timestamp_type == 0 and header.compression_type == 0


def test_sequence_wraps_after_int32_max():
    assert increment_sequence(5, 3) == 8
    assert increment_sequence(2**31 - 1, 1) == 0
    assert increment_sequence(2**31 - 2, 3) == 1


def test_iter_batches_walks_concatenated_batches():
    bufs = [make_batch(values(n)) for n in (1, 4, 2)]
    joined = b"".join(bufs)
    found = list(iter_batches(joined))
    assert [pos for pos, _ in found] == [0, len(bufs[0]), len(bufs[0]) + len(bufs[1])]
    assert [h.records_count for _, h in found] == [1, 4, 2]


@pytest.mark.parametrize("damage", ["truncated", "short_header", "small_length", "magic"])
def test_iter_batches_rejects_malformed_input(damage):
    buf = make_batch(values(2))
    if damage == "truncated":
        buf = buf[:-1]
    elif damage == "short_header":
        buf = buf + make_batch(values(1))[:HEADER_SIZE - 1]
    elif damage == "small_length":
        buf[8:12] = (48).to_bytes(4, "big")
    else:
        buf[16] = 1
    with pytest.raises(CorruptRecordError):
        list(iter_batches(buf))


def test_validate_crc_detects_a_flipped_byte():
    buf = make_batch(values(2))
    validate_crc(buf, 0, read_header(buf))
    buf[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError):
        validate_crc(buf, 0, read_header(buf))


def test_assign_offsets_keeps_the_crc_valid():
    buf = bytearray(b"x" * 5) + make_batch(values(3))
    assign_offsets(buf, 5, 1000, 7)
    header = read_header(buf, 5)
    assert (header.base_offset, header.partition_leader_epoch) == (1000, 7)
    validate_crc(buf, 5, header)
    assert [r.offset for r in DefaultRecordBatch(buf[5:])] == [1000, 1001, 1002]


def test_set_log_append_time_rewrites_timestamps_and_crc():
    buf = make_batch(values(3))
    set_log_append_time(buf, 0, 42)
    header = read_header(buf)
    validate_crc(buf, 0, header)
    assert header.timestamp_type == 1
    assert header.first_timestamp == header.max_timestamp == 42
    batch = DefaultRecordBatch(buf)
    assert batch.validate_crc()
    assert [r.timestamp for r in batch] == [42, 42, 42]
