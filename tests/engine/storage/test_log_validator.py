import struct

import pytest

from engine.storage.errors import InvalidRecordError, RecordTooLargeError
from engine.storage.log_config import LogConfig
from engine.storage.log_validator import analyze_records, assign_offsets_and_timestamps
from engine.storage.records import ATTRIBUTES_OFFSET, CONTROL_MASK, LOG_OVERHEAD, read_header
from kafka.record.util import calc_crc32c

from .conftest import make_batch, values


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
