"""The `__consumer_offsets` record formats and the group -> partition mapping."""
from __future__ import annotations

import asyncio
import struct

import pytest

from engine.coordinator import offsets_records as R
from engine.storage.errors import RecordTooLargeError
from engine.coordinator.group_store import java_string_hashcode, partition_for


def test_java_string_hashcode_and_kafka_partition_mapping():
    assert java_string_hashcode("") == 0
    assert java_string_hashcode("hello") == 99162322
    assert java_string_hashcode("my-group") == -1906497762
    assert java_string_hashcode("polygenelubricants") == -(2 ** 31)  # Utils.abs maps it to 0
    assert java_string_hashcode("😀") == 0xD83D * 31 + 0xDE00  # a UTF-16 surrogate pair, as Java sees it
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("my-group", 50) == 1906497762 % 50 == 12
    assert all(0 <= partition_for(f"g{i}", 50) < 50 for i in range(200))


def test_keys_round_trip():
    assert R.decode_key(R.offset_key("g", "t", 3)) == R.OffsetKey("g", "t", 3)
    assert R.decode_key(R.group_key("g")) == R.GroupKey("g")
    assert R.offset_key("g", "t", 3) == b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x03"  # Kafka's bytes
    assert R.decode_key(struct.pack(">h", 5) + b"\x00\x01x") is None  # record types we do not use


def test_offset_values_round_trip_in_every_version():
    value = R.OffsetAndMetadata(offset=42, leader_epoch=3, metadata="meta", commit_timestamp=1000)
    assert R.decode_offset_value(R.offset_value(value)) == value
    assert R.offset_value(value)[:2] == b"\x00\x03"
    expiring = R.OffsetAndMetadata(offset=1, metadata="", commit_timestamp=5, expire_timestamp=9)
    assert R.offset_value(expiring)[:2] == b"\x00\x01"
    assert R.decode_offset_value(R.offset_value(expiring)) == expiring
    v0 = struct.pack(">hq", 0, 7) + struct.pack(">h", 2) + b"md" + struct.pack(">q", 11)
    assert R.decode_offset_value(v0) == R.OffsetAndMetadata(7, -1, "md", 11, -1)
    # v4 is flexible: compact string (length + 1 as an unsigned varint) and a tag buffer.
    v4 = struct.pack(">hqi", 4, 8, 2) + b"\x03md" + struct.pack(">q", 12) + b"\x00"
    assert R.decode_offset_value(v4) == R.OffsetAndMetadata(8, 2, "md", 12, -1)


def test_group_values_round_trip():
    record = R.GroupRecord(protocol_type="consumer", generation=4, protocol="range", leader="m1",
                           current_state_timestamp=77, members=[
                               R.MemberRecord("m1", None, "c1", "/1.2.3.4", 300, 10, b"sub", b"asg"),
                               R.MemberRecord("m2", "static-2", "c2", "/5.6.7.8", 200, 20, b"", b"")])
    assert R.decode_group_value(R.group_value(record)) == record
    empty = R.GroupRecord(protocol_type="consumer", generation=5, protocol=None, leader=None,
                          current_state_timestamp=1)
    assert R.decode_group_value(R.group_value(empty)) == empty


def test_read_log_returns_records_with_tombstones_across_gaps(tmp_path):
    from engine.storage.log import Log
    from engine.storage.log_config import LogConfig
    log = Log.open(tmp_path / "__consumer_offsets-0", LogConfig(), now_ms=0)
    try:
        log.append(R.build_batch([(R.group_key("g"), b"v"), (R.offset_key("g", "t", 0), None)], 123),
                   leader_epoch=0, now_ms=0)
        log.append(R.build_batch([(R.group_key("h"), b"w")], 124), leader_epoch=0, now_ms=0)
        assert list(R.read_log(log)) == [(0, R.group_key("g"), b"v"), (1, R.offset_key("g", "t", 0), None),
                                         (2, R.group_key("h"), b"w")]
        assert list(R.read_log(log, 2)) == [(2, R.group_key("h"), b"w")]
    finally:
        log.close()


def test_a_commit_batch_built_in_slices_is_the_same_batch_and_stops_once_too_large():
    records = [(R.offset_key("g", "t", p), R.offset_value(R.OffsetAndMetadata(p, -1, "", 1000, -1)))
               for p in range(2000)]
    sliced = asyncio.run(R.build_batch_in_slices(records, 1000, max_bytes=1 << 20, producer_id=7, producer_epoch=1,
                                                 base_sequence=3))
    assert bytes(sliced) == bytes(R.build_batch(records, 1000, producer_id=7, producer_epoch=1, base_sequence=3))

    taken = []

    def counted():
        for record in records * 100:          # 200,000 offsets: about 12 MiB of records
            taken.append(1)
            yield record
    with pytest.raises(RecordTooLargeError, match="max.message.bytes=1048588"):
        asyncio.run(R.build_batch_in_slices(counted(), 1000, max_bytes=1048588))
    assert len(taken) < 50_000                # stopped at 1 MiB (about 23,000), not after all 200,000
