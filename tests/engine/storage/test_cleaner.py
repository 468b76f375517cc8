"""Log compaction on real segment files: latest value per key, offsets kept, tombstones,
dirty ratio, crash safety of the segment swap."""
from __future__ import annotations

import dataclasses
import random
import shutil
import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

import engine.storage.log as log_module
from engine.storage.cleaner import CLEANER_CHECKPOINT, LogCleaner
from engine.storage.log import Log
from engine.storage.log_config import LONG_MAX, LogConfig
from engine.storage.records import read_header

from tests.support.record_batches import record, seal

from .conftest import BASE_TS, crash

TP = ("topic", 0)
GZIP = 1


@pytest.fixture
def config() -> LogConfig:
    return LogConfig(segment_bytes=2048, index_interval_bytes=128, cleanup_policy="compact",
                     min_cleanable_dirty_ratio=0.01, delete_retention_ms=60_000)


def keyed_batch(pairs, *, compression=0, producer=None, base_ts=BASE_TS) -> bytearray:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=compression, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    if producer is not None:
        builder.set_producer_state(*producer, False)
    for i, (key, value) in enumerate(pairs):
        builder.append(i, base_ts + i, key, value, headers=[("h", b"x")])
    return builder.build()


def produce(log: Log, pairs, per_batch: int = 1, **kwargs) -> None:
    for i in range(0, len(pairs), per_batch):
        log.append(keyed_batch(pairs[i:i + per_batch], **kwargs), leader_epoch=1, now_ms=BASE_TS)


def records(log: Log) -> list[tuple[int, bytes, bytes | None]]:
    """(offset, key, value) of every record, following segments and gaps, from offset 0."""
    out, offset = [], log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20).read()
        pos, batch_out = 0, []
        while pos < len(data):
            header = read_header(data, pos)
            if pos + header.size > len(data):
                break
            batch = DefaultRecordBatch(data[pos:pos + header.size])
            assert batch.validate_crc()
            batch_out += [(r.offset, r.key, r.value) for r in batch if r.offset >= offset]
            offset = max(offset, header.next_offset)
            pos += header.size
        out += batch_out
    return out


def clean(tmp_path, log: Log, now_ms: int = BASE_TS) -> list:
    return LogCleaner(tmp_path).run({TP: log}, now_ms)


def test_keeps_latest_value_per_key_with_offsets_unchanged(tmp_path, open_log):
    log = open_log()
    pairs = [(f"k{i % 10}".encode(), f"v{i}".encode()) for i in range(300)]
    produce(log, pairs, per_batch=3)
    log.roll(BASE_TS)
    segments_before = len(log.segments)
    [stats] = clean(tmp_path, log)
    latest = {key: (offset, value) for offset, (key, value) in enumerate(pairs)}
    assert records(log) == sorted((offset, key, value) for key, (offset, value) in latest.items())
    assert log.log_end_offset == 300 and log.log_start_offset == 0
    assert stats.records_read == 300 and stats.records_retained == 10
    assert (tmp_path / CLEANER_CHECKPOINT).read_text().splitlines()[2] == "topic 0 300"
    # Groups are sized by what segments held before cleaning (as Kafka): the shrunken
    # segments merge on the next round.
    produce(log, [(b"k0", b"again")])
    log.roll(BASE_TS)
    clean(tmp_path, log)
    assert len(log.segments) < segments_before
    assert records(log)[-1] == (300, b"k0", b"again")


def test_active_segment_and_dirty_ratio_are_respected(tmp_path, open_log, config):
    log = open_log(dataclasses.replace(config, min_cleanable_dirty_ratio=0.5))
    cleaner = LogCleaner(tmp_path)
    produce(log, [(b"k", b"old"), (b"k", b"new")])
    assert cleaner.run({TP: log}, BASE_TS) == []  # everything is in the active segment
    log.roll(BASE_TS)
    produce(log, [(f"big{i}".encode(), b"x" * 300) for i in range(5)])
    log.roll(BASE_TS)
    assert len(cleaner.run({TP: log}, BASE_TS)) == 1
    assert [r[:2] for r in records(log)] == [(1, b"k")] + [(2 + i, f"big{i}".encode()) for i in range(5)]
    produce(log, [(b"k", b"newer")])
    log.roll(BASE_TS)
    assert cleaner.cleanable(TP, log, BASE_TS) is None  # dirty ratio ~0.05 < 0.5
    assert cleaner.run({TP: log}, BASE_TS) == []
    produce(log, [(f"big{i}".encode(), b"y" * 300) for i in range(5)])
    log.roll(BASE_TS)
    assert cleaner.cleanable(TP, log, BASE_TS).dirty_ratio >= 0.5
    assert len(cleaner.run({TP: log}, BASE_TS)) == 1
    assert [r[:2] for r in records(log)] == [(7, b"k")] + [(8 + i, f"big{i}".encode()) for i in range(5)]


def test_cleaning_stays_below_the_high_watermark(tmp_path, open_log, config):
    """A newer value above the high watermark may still be truncated by a leader change, so
    it must not make the cleaner drop the older, committed value of its key."""
    log = open_log(config)
    cleaner = LogCleaner(tmp_path)
    produce(log, [(b"k", b"committed"), (b"other", b"x")])
    log.roll(BASE_TS)
    high_watermark = log.log_end_offset
    produce(log, [(b"k", b"not yet replicated")])
    log.roll(BASE_TS)
    cleaner.run({TP: log}, BASE_TS, {TP: high_watermark})
    assert [r[2] for r in records(log)] == [b"committed", b"x", b"not yet replicated"]
    assert cleaner.run({TP: log}, BASE_TS, {}) == []                # no replica state: not cleaned
    assert len(cleaner.run({TP: log}, BASE_TS, {TP: log.log_end_offset})) == 1
    assert [r[2] for r in records(log)] == [b"x", b"not yet replicated"]


def test_a_deleted_partition_leaves_no_tombstone_horizon_behind(tmp_path, open_log, config):
    """A re-created partition of the same name must not inherit the old one's tombstone
    horizon, which would make the cleaner rewrite it for nothing."""
    log = open_log(dataclasses.replace(config, delete_retention_ms=1000))
    cleaner = LogCleaner(tmp_path)
    produce(log, [(b"a", b"1"), (b"a", None)])
    log.roll(BASE_TS)
    assert len(cleaner.run({TP: log}, BASE_TS)) == 1                # keeps the tombstone until +1000
    assert cleaner.logs_to_clean({}, BASE_TS) == []                  # the partition is deleted
    log.delete()
    recreated = open_log(dataclasses.replace(config, delete_retention_ms=1000))
    produce(recreated, [(b"b", b"1")])
    assert cleaner.cleanable(TP, recreated, BASE_TS + 2000) is None


def test_tombstones_are_dropped_delete_retention_ms_after_they_were_first_kept(tmp_path, open_log, config):
    log = open_log(dataclasses.replace(config, delete_retention_ms=1000))
    produce(log, [(b"a", b"1"), (b"b", b"1")])
    log.append(keyed_batch([(b"c", b"1"), (b"a", None)], base_ts=BASE_TS + 5), leader_epoch=1, now_ms=BASE_TS)
    log.roll(BASE_TS)
    cleaner = LogCleaner(tmp_path)
    [stats] = cleaner.run({TP: log}, BASE_TS)
    assert records(log) == [(1, b"b", b"1"), (2, b"c", b"1"), (3, b"a", None)]
    assert stats.earliest_delete_horizon == BASE_TS + 1000
    # The batch carries its horizon as base timestamp (flag bit 6); record timestamps hold.
    last = log.read(2, 1 << 20).read()
    header = read_header(last)
    assert header.attributes & 0x40 and header.first_timestamp == BASE_TS + 1000
    assert [r.timestamp for r in DefaultRecordBatch(last)] == [BASE_TS + 5, BASE_TS + 6]
    assert cleaner.run({TP: log}, BASE_TS + 999) == []  # nothing dirty, horizon not reached
    [stats] = cleaner.run({TP: log}, BASE_TS + 1000)   # no new data needed once it is
    assert stats.tombstones_dropped == 1
    assert records(log) == [(1, b"b", b"1"), (2, b"c", b"1")]
    assert cleaner.run({TP: log}, BASE_TS + 5000) == []


def test_a_delete_retention_near_long_max_keeps_tombstones_for_ever(tmp_path, open_log, config):
    """now + delete.retention.ms past Long.MAX is stored as Long.MAX: the partition is
    cleaned (not given up on for a horizon no batch header can hold) and the tombstone stays."""
    log = open_log(dataclasses.replace(config, delete_retention_ms=LONG_MAX))
    produce(log, [(b"a", b"1"), (b"b", b"1"), (b"a", None)])
    log.roll(BASE_TS)
    cleaner = LogCleaner(tmp_path)
    [stats] = cleaner.run({TP: log}, BASE_TS)
    assert stats.earliest_delete_horizon == LONG_MAX
    assert cleaner.uncleanable_partitions == []
    assert records(log) == [(1, b"b", b"1"), (2, b"a", None)]
    assert read_header(log.read(2, 1 << 20).read()).first_timestamp == LONG_MAX
    assert [r.timestamp for r in DefaultRecordBatch(log.read(2, 1 << 20).read())] == [BASE_TS + 0]
    produce(log, [(b"b", b"2")])
    log.roll(BASE_TS)
    cleaner.run({TP: log}, BASE_TS + 10**12)
    assert records(log) == [(2, b"a", None), (3, b"b", b"2")]


def test_a_tombstone_keeps_its_horizon_through_later_cleanings(tmp_path, open_log, config):
    log = open_log(dataclasses.replace(config, delete_retention_ms=1000))
    produce(log, [(b"a", b"1"), (b"a", None)])
    log.roll(BASE_TS)
    cleaner = LogCleaner(tmp_path)
    cleaner.run({TP: log}, BASE_TS)
    produce(log, [(b"b", b"1")])
    log.roll(BASE_TS)
    cleaner.run({TP: log}, BASE_TS + 600)  # merges segments; must not restart the clock
    assert records(log) == [(1, b"a", None), (2, b"b", b"1")]
    produce(log, [(b"c", b"1")])
    log.roll(BASE_TS)
    cleaner.run({TP: log}, BASE_TS + 1000)
    assert records(log) == [(2, b"b", b"1"), (3, b"c", b"1")]


def test_rewritten_batches_keep_compression_producer_fields_and_last_offset(tmp_path, open_log):
    log = open_log()
    produce(log, [(b"a", b"1" * 50), (b"b", b"2" * 50), (b"a", b"3" * 50)], per_batch=3, compression=GZIP)
    produce(log, [(b"c", b"1"), (b"c", b"2")], per_batch=2, producer=(7, 0, 0))
    log.roll(BASE_TS)
    clean(tmp_path, log)
    data = log.read(0, 1 << 20).read()
    first = read_header(data)
    second = read_header(data, first.size)
    assert (first.base_offset, first.last_offset, first.records_count, first.compression_type) == (0, 2, 2, GZIP)
    assert (second.base_offset, second.last_offset, second.records_count) == (3, 4, 1)
    assert (second.producer_id, second.producer_epoch, second.base_sequence) == (7, 0, 0)
    assert second.partition_leader_epoch == 1
    assert records(log) == [(1, b"b", b"2" * 50), (2, b"a", b"3" * 50), (4, b"c", b"2")]
    batch = DefaultRecordBatch(data[first.size:first.size + second.size])
    assert [(r.timestamp, r.headers) for r in batch] == [(BASE_TS + 1, [("h", b"x")])]


def test_log_append_time_batches_keep_their_timestamp(tmp_path, open_log, config):
    log = open_log(dataclasses.replace(config, message_timestamp_type="LogAppendTime"))
    log.append(keyed_batch([(b"a", b"1"), (b"a", b"2")]), leader_epoch=0, now_ms=BASE_TS + 777)
    log.roll(BASE_TS)
    clean(tmp_path, log)
    batch = DefaultRecordBatch(log.read(0, 1 << 20).read())
    assert [(r.offset, r.timestamp, r.timestamp_type) for r in batch] == [(1, BASE_TS + 777, 1)]


def test_keyless_records_are_dropped(tmp_path, open_log, config):
    # A compacted log refuses keyless records, so they come from before the topic turned compacted.
    log = open_log(dataclasses.replace(config, cleanup_policy="delete"))
    produce(log, [(None, b"orphan"), (b"k", b"v")], per_batch=2)
    log.update_config(config)
    log.roll(BASE_TS)
    clean(tmp_path, log)
    assert records(log) == [(1, b"k", b"v")]


def test_random_workload_matches_a_dict_reference(tmp_path, open_log, config):
    rng = random.Random(4)
    log = open_log()
    cleaner = LogCleaner(tmp_path)
    reference: dict[bytes, tuple[int, bytes | None]] = {}
    offset = 0
    for round_ in range(6):
        pairs = []
        for _ in range(rng.randint(20, 120)):
            key = f"k{rng.randint(0, 30)}".encode()
            value = None if rng.random() < 0.15 else f"r{round_}-{offset}".encode()
            pairs.append((key, value))
            reference[key] = (offset, value)
            offset += 1
        produce(log, pairs, per_batch=rng.randint(1, 5))
        log.roll(BASE_TS)
        cleaner.run({TP: log}, BASE_TS)
        assert records(log) == sorted((o, k, v) for k, (o, v) in reference.items())
    cleaner.run({TP: log}, BASE_TS + config.delete_retention_ms)
    assert records(log) == sorted((o, k, v) for k, (o, v) in reference.items() if v is not None)


def test_cleaning_survives_a_restart_and_resumes_from_the_checkpoint(tmp_path, open_log, config):
    log = open_log()
    produce(log, [(b"k", f"{i}".encode()) for i in range(50)])
    log.roll(BASE_TS)
    clean(tmp_path, log)
    log.close()
    reopened = open_log(had_clean_shutdown=True)
    assert records(reopened) == [(49, b"k", b"49")]
    cleaner = LogCleaner(tmp_path)
    assert cleaner.first_dirty_offset(TP, reopened) == 50
    assert cleaner.cleanable(TP, reopened, BASE_TS) is None


@pytest.mark.parametrize("fail_at", ["commit_cleaned", "after_commit", "finish_swap"])
def test_a_crash_during_the_swap_leaves_a_consistent_log(tmp_path, open_log, monkeypatch, fail_at):
    log = open_log()
    pairs = [(f"k{i % 3}".encode(), f"v{i}".encode()) for i in range(60)]
    produce(log, pairs)
    log.roll(BASE_TS)
    produce(log, [(b"tail", b"t")])
    before = records(log)

    class Crash(BaseException):
        pass

    real_commit, real_finish = log_module.commit_cleaned, log_module.finish_swap

    def commit(directory, base):
        if fail_at == "commit_cleaned":
            raise Crash
        real_commit(directory, base)
        if fail_at == "after_commit":
            raise Crash

    def finish(directory, base):
        raise Crash

    monkeypatch.setattr(log_module, "commit_cleaned", commit)
    if fail_at == "finish_swap":
        monkeypatch.setattr(log_module, "finish_swap", finish)
    leftovers = {}

    def remember_files(*_args):  # the cleaner's clean-up would hide what a real crash leaves
        leftovers.update({p.name: p.read_bytes() for p in log.dir.iterdir()})
    monkeypatch.setattr("engine.storage.cleaner._remove_cleaned_files", remember_files)
    with pytest.raises(Crash):
        clean(tmp_path, log)
    crash(log)
    for path in log.dir.iterdir():
        path.unlink()
    for name, data in leftovers.items():  # the directory exactly as the crash left it
        (log.dir / name).write_bytes(data)
    monkeypatch.setattr(log_module, "commit_cleaned", real_commit)
    monkeypatch.setattr(log_module, "finish_swap", real_finish)
    reopened = open_log(had_clean_shutdown=False)
    result = records(reopened)
    if fail_at == "commit_cleaned":
        assert result == before  # not committed: the old segments stand
    else:
        assert len(result) < len(before)  # committed: the loader finished the swap
    assert set(result) <= set(before) and [r[0] for r in result] == sorted({r[0] for r in result})
    assert {k: (o, v) for o, k, v in result} == {k: (o, v) for o, k, v in before}  # latest per key
    assert not [p for p in reopened.dir.iterdir() if p.name.endswith((".cleaned", ".swap"))]


def test_retention_during_a_clean_aborts_it_without_leftovers(tmp_path, open_log, config):
    log = open_log()
    produce(log, [(f"k{i % 5}".encode(), b"v" * 30) for i in range(600)])
    log.roll(BASE_TS)
    cleaner = LogCleaner(tmp_path)
    steps = cleaner.clean(TP, log, BASE_TS)
    next(steps)
    log.delete_records_before(log.log_end_offset, BASE_TS)
    with pytest.raises(StopIteration) as done:
        while True:
            next(steps)
    assert done.value.value is None
    assert not [p for p in log.dir.iterdir() if p.name.endswith((".cleaned", ".swap"))]


def test_compact_delete_policy_and_compaction_lag_bounds(tmp_path, open_log, config):
    log = open_log(dataclasses.replace(config, cleanup_policy="compact,delete", min_cleanable_dirty_ratio=0.5,
                                       min_compaction_lag_ms=10_000, max_compaction_lag_ms=60_000))
    cleaner = LogCleaner(tmp_path)
    produce(log, [(f"big{i}".encode(), b"x" * 300) for i in range(5)] + [(b"big0", b"y" * 300)])
    log.roll(BASE_TS)  # records stamped BASE_TS + i
    assert cleaner.run({TP: log}, BASE_TS + 5_000) == []  # younger than min.compaction.lag.ms
    assert len(cleaner.run({TP: log}, BASE_TS + 20_000)) == 1
    produce(log, [(b"big1", b"z")])
    log.roll(BASE_TS)
    assert cleaner.cleanable(TP, log, BASE_TS + 20_000) is None  # a little dirt: ratio far below 0.5
    # Past max.compaction.lag.ms the log is cleaned whatever its dirty ratio.
    assert len(cleaner.run({TP: log}, BASE_TS + 61_000)) == 1
    assert [(o, k) for o, k, _ in records(log)] == [(2, b"big2"), (3, b"big3"), (4, b"big4"), (5, b"big0"),
                                                     (6, b"big1")]
    assert log.delete_old_segments(BASE_TS + 8 * 24 * 3600 * 1000) > 0  # "delete" still applies retention


def poison(log: Log) -> None:
    """A batch the cleaner cannot read: its second record says it has 7 headers. A follower's
    append takes it (a leader checked it, supposedly), as a disk written by an older broker would."""
    body = record(0, b"k", b"v") + record(1, b"k", b"v", [(b"h", b"x")], header_count=7)
    batch = seal(body, 2, timestamp=BASE_TS)
    struct.pack_into(">q", batch, 0, log.log_end_offset)    # the base offset lies outside the CRC
    log.append_as_follower(batch, now_ms=BASE_TS)


def test_a_partition_the_cleaner_fails_on_is_uncleanable_and_the_others_are_still_cleaned(tmp_path, config,
                                                                                          caplog):
    logs = {tp: Log.open(tmp_path / f"{tp[0]}-{tp[1]}", config, now_ms=BASE_TS)
            for tp in [("bad", 0), ("good", 0), ("good", 1)]}
    pairs = [(f"k{i % 5}".encode(), f"v{i}".encode()) for i in range(60)]
    for tp, log in logs.items():
        produce(log, pairs[:30], per_batch=3)
        if tp[0] == "bad":
            poison(log)
        produce(log, pairs[30:], per_batch=3)
    cleaner = LogCleaner(tmp_path)
    try:
        with caplog.at_level("WARNING", logger="engine.storage.cleaner"):
            cleaned = cleaner.run(logs, BASE_TS)
            assert {stats.topic_partition for stats in cleaned} == {("good", 0), ("good", 1)}
            assert cleaner.uncleanable_partitions == [("bad", 0)]
            produce(logs[("bad", 0)], pairs, per_batch=3)       # dirtier than ever: still not cleaned
            assert cleaner.run(logs, BASE_TS) == []
        warnings = [r for r in caplog.records if "uncleanable" in r.getMessage()]
        assert len(warnings) == 1 and "bad-0" in warnings[0].getMessage()   # logged once
        for tp in [("good", 0), ("good", 1)]:
            assert len(records(logs[tp])) < 60
        # Deleted and created again, the partition is a new log: cleanable again.
        crash(logs[("bad", 0)])
        shutil.rmtree(tmp_path / "bad-0")
        logs[("bad", 0)] = Log.open(tmp_path / "bad-0-new", config, now_ms=BASE_TS)
        produce(logs[("bad", 0)], pairs, per_batch=3)
        assert ("bad", 0) in {stats.topic_partition for stats in cleaner.run(logs, BASE_TS)}
        assert cleaner.uncleanable_partitions == []
    finally:
        for log in logs.values():
            crash(log)
