import dataclasses

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from engine.storage.errors import (CorruptRecordError, InvalidRecordError, OffsetOutOfRangeError,
                                   RecordBatchTooLargeError, RecordTooLargeError)
from engine.storage.record_keys import RecordValidationError
from engine.storage.records import read_header

from .conftest import BASE_TS, crash, decode, make_batch, read_all, values


def produce(log, batches=20, per_batch=5, *, now_ms=BASE_TS, size=20, base_ts=BASE_TS):
    infos = []
    for i in range(batches):
        buf = make_batch(values(per_batch, f"b{i}-", size), base_ts=base_ts)
        infos.append(log.append(buf, leader_epoch=3, now_ms=now_ms))
    return infos


def test_append_assigns_consecutive_offsets_and_stamps_leader_epoch(open_log):
    log = open_log()
    infos = produce(log, batches=3, per_batch=4)
    assert [(i.first_offset, i.last_offset) for i in infos] == [(0, 3), (4, 7), (8, 11)]
    assert infos[0].num_records == 4 and infos[0].log_append_time == -1
    assert infos[0].max_timestamp == BASE_TS + 3 and infos[0].offset_of_max_timestamp == 3
    assert log.log_end_offset == 12
    data = log.read(0, 1 << 20).read()
    assert read_header(data).partition_leader_epoch == 3
    assert [r[0] for r in decode(data)] == list(range(12))


def test_round_trip_across_segments_rolled_by_bytes(open_log, config):
    log = open_log()
    produce(log, batches=100)
    assert len(log.segments) > 3
    assert all(s.size <= config.segment_bytes for s in log.segments)
    bases = [s.base_offset for s in log.segments]
    assert bases == sorted(bases) and bases[0] == 0
    for prev, nxt in zip(log.segments, log.segments[1:]):
        assert prev.next_offset == nxt.base_offset
    records = read_all(log)
    assert [r[0] for r in records] == list(range(500))
    assert records[7][2] == b"b1-2".ljust(20, b".")
    names = sorted(p.name for p in log.dir.iterdir() if p.suffix == ".log")
    assert names == [f"{b:020d}.log" for b in bases]


def test_roll_by_segment_ms_uses_record_timestamps(open_log, config):
    log = open_log(dataclasses.replace(config, segment_ms=1000))
    log.append(make_batch(values(1), base_ts=BASE_TS), leader_epoch=0, now_ms=BASE_TS)
    log.append(make_batch(values(1), base_ts=BASE_TS + 900), leader_epoch=0, now_ms=BASE_TS)
    assert len(log.segments) == 1
    log.append(make_batch(values(1), base_ts=BASE_TS + 1001), leader_epoch=0, now_ms=BASE_TS)
    assert [s.base_offset for s in log.segments] == [0, 2]
    assert [r[0] for r in read_all(log)] == [0, 1, 2]


def test_roll_fsyncs_old_segment_and_snapshots_producer_state(open_log):
    log = open_log()
    produce(log, batches=30)
    active = log.active_segment.base_offset
    assert active > 0
    assert log.recovery_point == active
    assert (log.dir / f"{active:020d}.snapshot").exists()


def test_read_partial_trailing_batch(open_log):
    log = open_log()
    produce(log, batches=4)
    whole = log.read(0, 1 << 20)
    batch_size = read_header(whole.read()).size
    partial = log.read(0, batch_size * 2 + 5)
    assert partial.size == batch_size * 2 + 5
    assert [r[0] for r in decode(partial.read())] == list(range(10))


def test_read_min_one_batch(open_log):
    log = open_log()
    produce(log, batches=2)
    batch_size = read_header(log.read(0, 1 << 20).read()).size
    assert log.read(3, 1).size == batch_size
    assert log.read(3, 1, min_one_batch=False).size == 1
    assert log.read(3, 0, min_one_batch=False).size == 0


def test_read_respects_max_offset(open_log):
    log = open_log()
    produce(log, batches=40)
    for high_watermark in (5, 60, log.segments[1].base_offset, 195):
        records = read_all_bounded(log, high_watermark)
        assert [r[0] for r in records] == list(range(high_watermark))
    assert log.read(60, 1 << 20, max_offset=60).size == 0


def read_all_bounded(log, max_offset):
    offset, out = 0, []
    while offset < max_offset:
        records = [r for r in decode(log.read(offset, 1 << 20, max_offset=max_offset).read())
                   if r[0] >= offset]
        assert records
        out += records
        offset = records[-1][0] + 1
    return out


def test_read_at_log_end_is_empty_and_beyond_is_out_of_range(open_log):
    log = open_log()
    produce(log, batches=2)
    empty = log.read(10, 1 << 20)
    assert empty.size == 0 and empty.read() == b""
    with pytest.raises(OffsetOutOfRangeError) as info:
        log.read(11, 1 << 20)
    assert (info.value.log_start_offset, info.value.log_end_offset) == (0, 10)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 1 << 20)


def test_read_skips_to_the_next_segment_across_a_gap(open_log):
    log = open_log()
    produce(log, batches=2)  # offsets 0..9
    buf = make_batch(values(3))
    buf[0:8] = (50).to_bytes(8, "big")  # a replicated batch at offset 50
    log.append_as_follower(buf, now_ms=BASE_TS)
    log.roll(BASE_TS)
    assert log.log_end_offset == 53
    # Offset 20 falls between the batches: the next batch holding >= 20 is returned.
    assert [r[0] for r in decode(log.read(20, 1 << 20).read())] == [50, 51, 52]


def test_append_as_follower_keeps_offsets_and_rejects_going_back(open_log):
    log = open_log()
    buf = make_batch(values(2))
    buf[0:8] = (7).to_bytes(8, "big")
    buf[12:16] = (9).to_bytes(4, "big")
    info = log.append_as_follower(buf, now_ms=BASE_TS)
    assert (info.first_offset, info.last_offset, log.log_end_offset) == (7, 8, 9)
    assert read_header(log.read(7, 100).read()).partition_leader_epoch == 9
    with pytest.raises(InvalidRecordError):
        log.append_as_follower(buf, now_ms=BASE_TS)


def test_reopen_after_clean_close_keeps_everything(open_log):
    log = open_log()
    produce(log, batches=60)
    log.delete_records_before(7)
    before = read_all(log)
    end, start, segments = log.log_end_offset, log.log_start_offset, len(log.segments)
    log.close()
    log = open_log(log_start_offset=start, recovery_point=end, had_clean_shutdown=True)
    assert (log.log_end_offset, log.log_start_offset, len(log.segments)) == (end, start, segments)
    assert log.recovery_point == end
    assert read_all(log) == before
    assert log.append(make_batch(values(1)), leader_epoch=0, now_ms=BASE_TS).first_offset == end


def test_truncate_to(open_log):
    log = open_log()
    produce(log, batches=60)
    cut = log.segments[2].base_offset + 10
    assert log.truncate_to(cut)
    assert log.log_end_offset == cut and len(log.segments) == 3
    assert [r[0] for r in read_all(log)] == list(range(cut))
    assert log.append(make_batch(values(1)), leader_epoch=0, now_ms=BASE_TS).first_offset == cut
    assert not log.truncate_to(10_000)


def test_truncate_fully_and_start_at(open_log):
    log = open_log()
    produce(log, batches=30)
    log.truncate_fully_and_start_at(1000, now_ms=BASE_TS)
    assert (log.log_start_offset, log.log_end_offset, len(log.segments)) == (1000, 1000, 1)
    assert sorted(p.name for p in log.dir.iterdir()) == [
        "00000000000000001000.index", "00000000000000001000.log", "00000000000000001000.timeindex",
        "leader-epoch-checkpoint"]
    assert log.leader_epoch_cache.entries == []
    assert log.append(make_batch(values(1)), leader_epoch=0, now_ms=BASE_TS).first_offset == 1000


def test_retention_by_time_deletes_whole_old_segments(open_log, config):
    day = 24 * 3600 * 1000
    log = open_log(dataclasses.replace(config, retention_ms=day))
    produce(log, batches=40, base_ts=BASE_TS - 3 * day)
    old_segments = len(log.segments)
    produce(log, batches=40, base_ts=BASE_TS)
    assert log.delete_old_segments(BASE_TS) >= old_segments - 1
    first = log.segments[0]
    assert log.log_start_offset == first.base_offset > 0
    assert first.max_timestamp >= BASE_TS - day
    assert read_all(log)[0][0] >= log.log_start_offset
    with pytest.raises(OffsetOutOfRangeError):
        log.read(0, 100)


def test_retention_rolls_the_active_segment_before_deleting_it(open_log, config):
    log = open_log(dataclasses.replace(config, retention_ms=1000))
    produce(log, batches=3, base_ts=BASE_TS - 5000)
    assert log.delete_old_segments(BASE_TS) == 1
    assert len(log.segments) == 1 and log.active_segment.size == 0
    assert log.log_start_offset == log.log_end_offset == 15
    assert log.delete_old_segments(BASE_TS + 10**9) == 0  # an empty active segment stays


def test_retention_by_size(open_log, config):
    log = open_log(dataclasses.replace(config, retention_bytes=10_000))
    produce(log, batches=100)
    assert log.size_in_bytes > 10_000 + log.segments[0].size
    assert log.delete_old_segments(BASE_TS) > 0
    # As Kafka: delete the oldest only while what remains is still >= retention.bytes.
    assert log.size_in_bytes - log.segments[0].size < 10_000 <= log.size_in_bytes
    assert log.log_start_offset == log.segments[0].base_offset


def test_retention_never_deletes_at_or_above_the_high_watermark(open_log, config):
    """As Kafka: a segment goes only once it lies wholly below the high watermark, so a
    leader never deletes records its followers have not replicated yet."""
    log = open_log(dataclasses.replace(config, retention_ms=1000))
    produce(log, batches=100, base_ts=BASE_TS - 5000)
    assert len(log.segments) > 3
    high_watermark = log.segments[2].base_offset + 1            # inside the third segment
    assert log.delete_old_segments(BASE_TS, high_watermark) == 2
    assert log.log_start_offset == log.segments[0].base_offset <= high_watermark
    assert log.delete_old_segments(BASE_TS, log.segments[0].base_offset) == 0
    end = log.log_end_offset
    assert log.delete_old_segments(BASE_TS, end) > 0            # fully replicated: all may go
    assert log.log_start_offset == end


def test_compact_only_policy_keeps_segments(open_log, config):
    log = open_log(dataclasses.replace(config, retention_ms=0))
    produce(log, batches=50, base_ts=0)   # keyless, so written before the policy turns compact-only
    log.update_config(dataclasses.replace(config, retention_ms=0, cleanup_policy="compact"))
    assert log.delete_old_segments(BASE_TS) == 0


def test_delete_records_before(open_log):
    log = open_log()
    produce(log, batches=60)
    second = log.segments[1].base_offset
    assert log.delete_records_before(second + 3) == second + 3
    assert log.segments[0].base_offset == second
    with pytest.raises(OffsetOutOfRangeError):
        log.read(second + 2, 100)
    assert [r[0] for r in read_all(log)][0] == second + 3
    assert log.delete_records_before(5) == second + 3  # never moves back
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records_before(log.log_end_offset + 1)
    assert log.delete_records_before(log.log_end_offset) == log.log_end_offset
    assert log.read(log.log_end_offset, 100).size == 0


def test_offset_for_timestamp_finds_the_exact_record(open_log):
    log = open_log()
    for i in range(40):  # timestamps step by 10 per record, across several segments
        log.append(make_batch(values(5, size=20), timestamps=[BASE_TS + (i * 5 + j) * 10
                                                             for j in range(5)]),
                   leader_epoch=0, now_ms=BASE_TS)
    assert len(log.segments) > 1
    for offset in (0, 3, 77, 123, 199):
        assert log.offset_for_timestamp(BASE_TS + offset * 10) == (offset, BASE_TS + offset * 10)
        just_before = BASE_TS + offset * 10 - 5
        assert log.offset_for_timestamp(just_before) == (offset, BASE_TS + offset * 10)
    assert log.offset_for_timestamp(BASE_TS + 10_000) is None
    assert log.offset_for_timestamp(-1) == (200, -1)
    assert log.offset_for_timestamp(-2) == (0, -1)
    assert log.offset_for_timestamp(-3) == (199, BASE_TS + 1990)
    assert log.max_timestamp_and_offset() == (199, BASE_TS + 1990)


def test_max_timestamp_is_the_first_record_holding_it(open_log):
    log = open_log()
    log.append(make_batch(values(3), timestamps=[5, 90, 7]), leader_epoch=0, now_ms=0)
    log.append(make_batch(values(2), timestamps=[90, 8]), leader_epoch=0, now_ms=0)
    assert log.max_timestamp_and_offset() == (1, 90)


def test_log_append_time_rewrites_timestamps_with_a_valid_crc(open_log, config):
    log = open_log(dataclasses.replace(config, message_timestamp_type="LogAppendTime"))
    info = log.append(make_batch(values(3)), leader_epoch=0, now_ms=123_456)
    assert info.log_append_time == info.max_timestamp == 123_456
    data = log.read(0, 1 << 20).read()
    header = read_header(data)
    assert header.timestamp_type == 1 and header.max_timestamp == 123_456
    assert [r[1] for r in decode(data)] == [123_456] * 3  # decode() checks the CRC
    assert log.offset_for_timestamp(123_000) == (0, 123_456)


def test_bad_crc_is_rejected_and_nothing_written(open_log):
    log = open_log()
    good, bad = make_batch(values(2)), make_batch(values(2))
    bad[-1] ^= 0x01
    with pytest.raises(CorruptRecordError):
        log.append(good + bad, leader_epoch=0, now_ms=BASE_TS)
    assert log.log_end_offset == 0 and log.size_in_bytes == 0


def test_truncated_request_is_rejected(open_log):
    log = open_log()
    with pytest.raises(CorruptRecordError):
        log.append(make_batch(values(2))[:-3], leader_epoch=0, now_ms=BASE_TS)
    assert log.size_in_bytes == 0


def test_oversized_batch_is_rejected_and_nothing_written(open_log, config):
    log = open_log(dataclasses.replace(config, max_message_bytes=500))
    small, big = make_batch(values(1)), make_batch(values(10, size=100))
    with pytest.raises(RecordTooLargeError):
        log.append(small + big, leader_epoch=0, now_ms=BASE_TS)
    assert log.log_end_offset == 0 and log.size_in_bytes == 0
    assert RecordTooLargeError.error_code == 10


def test_append_larger_than_a_segment_is_refused_and_nothing_written(open_log, config):
    log = open_log(dataclasses.replace(config, segment_bytes=600))
    fits, too_big = make_batch(values(2)), make_batch(values(10, size=100))
    assert len(fits) < 600 < len(too_big)
    with pytest.raises(RecordBatchTooLargeError, match="maximum configured segment size of 600"):
        log.append(fits + too_big, leader_epoch=0, now_ms=BASE_TS)
    assert log.log_end_offset == 0 and log.size_in_bytes == 0
    assert RecordBatchTooLargeError.error_code == 18          # RECORD_BATCH_TOO_LARGE
    log.append(fits, leader_epoch=0, now_ms=BASE_TS)
    assert log.log_end_offset == 2


def test_flush_messages_and_flush_ms(open_log, config):
    log = open_log(dataclasses.replace(config, flush_messages=10, flush_ms=1000))
    produce(log, batches=1, per_batch=5)
    assert log.recovery_point == 0
    produce(log, batches=1, per_batch=5)
    assert log.recovery_point == 10
    produce(log, batches=1, per_batch=1)
    assert not log.maybe_flush(BASE_TS + 500)
    assert log.maybe_flush(BASE_TS + 1000)
    assert log.recovery_point == 11 and log.last_flush_ms == BASE_TS + 1000
    assert not log.maybe_flush(BASE_TS + 5000)  # nothing new to flush


def test_delete_removes_the_directory(open_log, tmp_path):
    log = open_log()
    produce(log, batches=3)
    log.delete()
    assert list(tmp_path.iterdir()) == []


def test_update_config_changes_rolling(open_log, config):
    log = open_log()
    produce(log, batches=5)
    log.update_config(dataclasses.replace(config, segment_bytes=200))
    produce(log, batches=2)
    assert len(log.segments) == 3


def test_crash_loses_nothing_acknowledged(open_log):
    log = open_log()
    produce(log, batches=30)
    before = read_all(log)
    crash(log)
    log = open_log(recovery_point=log.recovery_point)
    assert read_all(log) == before


def test_a_compacted_log_refuses_a_batch_with_keyless_records(open_log, config):
    log = open_log(dataclasses.replace(config, cleanup_policy="compact"))
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=1, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, key in enumerate([None, b"k", None]):
        builder.append(i, BASE_TS, key, b"v", headers=[])
    with pytest.raises(RecordValidationError) as refused:
        log.append(builder.build(), leader_epoch=0, now_ms=BASE_TS)
    assert [index for index, _ in refused.value.record_errors] == [0, 2]   # found inside a gzip batch
    assert refused.value.error_code == 87 and log.log_end_offset == 0


def test_a_compacted_log_answers_invalid_record_for_signed_records_that_do_not_parse(open_log, config):
    """Kafka's DefaultRecord.readFrom: a record structure that does not parse is INVALID_RECORD,
    which producers do not retry (CORRUPT_MESSAGE they would, for ever)."""
    from kafka.record.util import calc_crc32c
    log = open_log(dataclasses.replace(config, cleanup_policy="compact"))
    batch = make_batch([b"v"])
    batch[-4:-1] = b"\xff\xff\xff"              # the record's varints run past the batch
    batch[17:21] = calc_crc32c(memoryview(batch)[21:]).to_bytes(4, "big")   # re-signed: the CRC holds
    with pytest.raises(InvalidRecordError) as refused:
        log.append(batch, leader_epoch=0, now_ms=BASE_TS)
    assert refused.value.error_code == 87 and log.log_end_offset == 0
