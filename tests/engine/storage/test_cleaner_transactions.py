"""Compaction of transactional data: aborted records go (and never supersede committed
ones), markers stay while their transaction has data and for delete.retention.ms after,
and the cleaned segments carry the .txnindex entries still needed (Kafka's rule)."""
from __future__ import annotations

import dataclasses
import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from engine.storage.cleaner import LogCleaner
from engine.storage.control_records import build_marker_batch
from engine.storage.log import Log
from engine.storage.log_config import LONG_MAX, LogConfig
from engine.storage.records import iter_batches

from .conftest import BASE_TS, crash

TP = ("topic", 0)
A, B = 100, 200


@pytest.fixture
def log(tmp_path):
    config = LogConfig(segment_bytes=1 << 20, index_interval_bytes=128, cleanup_policy="compact",
                       min_cleanable_dirty_ratio=0.01, delete_retention_ms=1000)
    log = Log.open(tmp_path / "topic-0", config, now_ms=BASE_TS)
    yield log
    crash(log)


def txn(log, pid, seq, pairs):
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=pid,
                                        producer_epoch=0, base_sequence=seq, batch_size=1 << 20)
    for i, (key, value) in enumerate(pairs):
        builder.append(i, BASE_TS + i, key, value, headers=[])
    log.append(builder.build(), leader_epoch=0, now_ms=BASE_TS)


def plain(log, key, value):
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, BASE_TS, key, value, headers=[])
    log.append(builder.build(), leader_epoch=0, now_ms=BASE_TS)
    log.roll(BASE_TS)


def marker(log, pid, *, commit):
    log.append(build_marker_batch(producer_id=pid, producer_epoch=0, coordinator_epoch=0, commit=commit,
                                  timestamp_ms=BASE_TS), leader_epoch=0, now_ms=BASE_TS, control=True)


def contents(log):
    """(offset, key, value) for data, (offset, "ABORT"/"COMMIT", horizon or None) for markers."""
    out = []
    for segment in log.segments:
        data = segment.log.read(0, segment.size)
        for position, header in iter_batches(data):
            batch = DefaultRecordBatch(bytes(data[position:position + header.size]))
            assert batch.validate_crc()
            for record in batch:
                if header.is_control:
                    horizon = header.first_timestamp if header.attributes & 0x40 else None
                    out.append((record.offset, "COMMIT" if record.commit else "ABORT", horizon))
                else:
                    out.append((record.offset, record.key, record.value))
    return out


def test_aborted_data_goes_and_markers_go_after_delete_retention(tmp_path, log):
    cleaner = LogCleaner(tmp_path)
    plain(log, b"k3", b"c")                                        # 0
    txn(log, A, 0, [(b"k1", b"a1"), (b"k3", b"a3")])               # 1-2 (aborted)
    txn(log, B, 0, [(b"k1", b"b1")])                               # 3 (committed)
    marker(log, A, commit=False)                                   # 4
    marker(log, B, commit=True)                                    # 5
    log.roll(BASE_TS)
    assert [(t.producer_id, t.first_offset) for t in log.aborted_transactions(0, 6)] == [(A, 1)]
    # Both producers expired (producer.id.expiration.ms): no batch is kept for their sequence
    # state (an active producer's is: test_cleaner_producers.py).
    log.producer_state.remove_expired(BASE_TS, 0)

    cleaner.run({TP: log}, BASE_TS)
    # Aborted records are gone, and a3 did not supersede the committed c; both markers stay
    # (this pass met their data), and A's .txnindex entry moved to the cleaned segment.
    assert contents(log) == [(0, b"k3", b"c"), (3, b"k1", b"b1"), (4, "ABORT", None), (5, "COMMIT", None)]
    assert log.segments[0].txn_index.path.read_bytes() == struct.pack(">hqqqq", 0, A, 1, 4, 3)

    plain(log, b"k9", b"x")                                        # 6: something dirty
    cleaner.run({TP: log}, BASE_TS)
    # A's transaction has no data left: its marker gets a delete horizon; its entry goes.
    assert contents(log) == [(0, b"k3", b"c"), (3, b"k1", b"b1"), (4, "ABORT", BASE_TS + 1000),
                             (5, "COMMIT", None), (6, b"k9", b"x")]
    assert log.aborted_transactions(0, 7) == []
    assert cleaner.run({TP: log}, BASE_TS + 999) == []             # horizon not reached
    cleaner.run({TP: log}, BASE_TS + 1000)
    assert contents(log) == [(0, b"k3", b"c"), (3, b"k1", b"b1"), (5, "COMMIT", None), (6, b"k9", b"x")]

    plain(log, b"k1", b"new")                                      # 7 supersedes B's b1
    cleaner.run({TP: log}, BASE_TS + 2000)
    # This pass still read B's batch (as Kafka, before its record went): the marker stays.
    assert contents(log) == [(0, b"k3", b"c"), (5, "COMMIT", None), (6, b"k9", b"x"), (7, b"k1", b"new")]
    plain(log, b"k8", b"y")                                        # 8
    cleaner.run({TP: log}, BASE_TS + 2000)
    assert (5, "COMMIT", BASE_TS + 3000) in contents(log)
    cleaner.run({TP: log}, BASE_TS + 3000)
    assert contents(log) == [(0, b"k3", b"c"), (6, b"k9", b"x"), (7, b"k1", b"new"), (8, b"k8", b"y")]


def test_a_marker_under_a_delete_retention_near_long_max_stays_for_ever(tmp_path, log):
    log.update_config(dataclasses.replace(log.config, delete_retention_ms=LONG_MAX))
    cleaner = LogCleaner(tmp_path)
    txn(log, A, 0, [(b"k", b"aborted")])                            # 0
    marker(log, A, commit=False)                                    # 1
    plain(log, b"k", b"v")                                          # 2
    log.producer_state.remove_expired(BASE_TS, 0)
    cleaner.run({TP: log}, BASE_TS)
    plain(log, b"k9", b"x")                                         # 3: something dirty
    cleaner.run({TP: log}, BASE_TS)
    assert cleaner.uncleanable_partitions == []
    assert contents(log) == [(1, "ABORT", LONG_MAX), (2, b"k", b"v"), (3, b"k9", b"x")]


def test_a_transaction_aborted_later_in_the_log_is_still_dropped(tmp_path, log):
    txn(log, A, 0, [(b"k", b"aborted")])                            # 0, in a segment cleaned now
    log.roll(BASE_TS)
    plain(log, b"other", b"v")                                      # 1
    marker(log, A, commit=False)                                    # 2, in the active segment
    LogCleaner(tmp_path).run({TP: log}, BASE_TS, {TP: log.segments[-1].base_offset})
    assert contents(log) == [(1, b"other", b"v"), (2, "ABORT", None)]
    # The marker's segment was not cleaned: its entry still tells consumers about offset 0.
    assert [(t.producer_id, t.first_offset) for t in log.aborted_transactions(0, 3)] == [(A, 0)]


def test_open_transactions_are_not_cleaned_below_the_bound(tmp_path, log):
    txn(log, A, 0, [(b"k", b"open")])                               # 0
    log.roll(BASE_TS)
    plain(log, b"k", b"later")                                      # 1
    lso = log.producer_state.first_unstable_offset(log.log_end_offset)
    assert lso == 0
    assert LogCleaner(tmp_path).run({TP: log}, BASE_TS, {TP: lso}) == []
    assert contents(log) == [(0, b"k", b"open"), (1, b"k", b"later")]


def test_cleaned_txnindex_survives_a_crash_after_the_swap_commit(tmp_path, log, monkeypatch):
    import engine.storage.log as log_module
    txn(log, A, 0, [(b"k", b"a")])
    marker(log, A, commit=False)
    plain(log, b"k2", b"v")

    class Crash(BaseException):
        pass

    def finish(directory, base):
        raise Crash
    monkeypatch.setattr(log_module, "finish_swap", finish)
    with pytest.raises(Crash):
        LogCleaner(tmp_path).run({TP: log}, BASE_TS)
    crash(log)
    names = {p.name for p in log.dir.iterdir()}
    assert "00000000000000000000.txnindex.swap" in names
    reopened = Log.open(log.dir, dataclasses.replace(log.config), now_ms=BASE_TS)
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in reopened.aborted_transactions(0, 3)] == \
        [(A, 0, 1)]
    assert contents(reopened) == [(1, "ABORT", None), (2, b"k2", b"v")]
    crash(reopened)
