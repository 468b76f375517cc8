"""Compaction keeps an active producer's last sequence and epoch in the log (Kafka's
BatchRetention.RETAIN_EMPTY): the batch holding a producer's last data offset, or the marker
that is its last entry, stays as an empty batch when the cleaner drops all its records, so a
producer state rebuilt from the log (a restart without snapshot, a new replica) still
recognises a retry of the producer's last acknowledged batch."""
from __future__ import annotations

import dataclasses

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from engine.storage.cleaner import LogCleaner
from engine.storage.control_records import build_marker_batch
from engine.storage.log import Log
from engine.storage.log_config import LogConfig
from engine.storage.log_files import SNAPSHOT_SUFFIX
from engine.storage.records import iter_batches

from .conftest import BASE_TS, crash
from .test_cleaner import TP, produce, records

PID, EPOCH = 4242, 3
KEYS = [b"k0", b"k1", b"k2"]


@pytest.fixture
def config() -> LogConfig:
    return LogConfig(segment_bytes=2048, index_interval_bytes=128, cleanup_policy="compact",
                     min_cleanable_dirty_ratio=0.01, delete_retention_ms=60_000)


def batches(log: Log) -> list[tuple]:
    """(base offset, last offset, producer id, epoch, base sequence, records, control) of
    every batch on disk, CRCs checked."""
    out = []
    for segment in log.segments:
        data = segment.log.read(0, segment.size)
        for position, header in iter_batches(data):
            batch = DefaultRecordBatch(bytes(data[position:position + header.size]))
            assert batch.validate_crc()
            assert len(list(batch)) == header.records_count
            out.append((header.base_offset, header.last_offset, header.producer_id, header.producer_epoch,
                        header.base_sequence, header.records_count, header.is_control))
    return out


def idempotent(log: Log, seq: int, pairs, *, epoch: int = EPOCH, transactional: bool = False):
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=transactional,
                                        producer_id=PID, producer_epoch=epoch, base_sequence=seq,
                                        batch_size=1 << 20)
    for i, (key, value) in enumerate(pairs):
        builder.append(i, BASE_TS + i, key, value, headers=[])
    return log.append(builder.build(), leader_epoch=1, now_ms=BASE_TS)


def superseded_producer(log: Log):
    """The producer writes two batches (0-2, 3-5); another client then overwrites every key."""
    idempotent(log, 0, [(k, b"p-old") for k in KEYS])
    last = idempotent(log, 3, [(k, b"p-new") for k in KEYS])
    produce(log, [(k, b"other") for k in KEYS], per_batch=3)     # 6-8
    log.roll(BASE_TS)
    return last


def clean(tmp_path, log: Log, now_ms: int = BASE_TS):
    return LogCleaner(tmp_path).run({TP: log}, now_ms)


def test_the_last_batch_of_an_active_producer_stays_as_an_empty_batch(tmp_path, open_log, config):
    log = open_log(config)
    superseded_producer(log)
    clean(tmp_path, log)
    # The first batch is gone; the last keeps its offsets and producer fields, no record.
    assert batches(log) == [(3, 5, PID, EPOCH, 3, 0, False), (6, 8, -1, -1, -1, 3, False)]
    assert records(log) == [(6 + i, k, b"other") for i, k in enumerate(KEYS)]
    assert log.log_end_offset == 9


def test_a_rebuilt_producer_state_answers_a_retry_of_the_last_batch_as_a_duplicate(tmp_path, open_log, config):
    log = open_log(config)
    last = superseded_producer(log)
    clean(tmp_path, log)
    crash(log)
    for snapshot in (tmp_path / "topic-0").glob(f"*{SNAPSHOT_SUFFIX}"):
        snapshot.unlink()     # the state must come from the cleaned segments
    log = open_log(config, had_clean_shutdown=False)
    assert log.producer_state.producers[PID].last_seq == 5
    retry = idempotent(log, 3, [(k, b"p-new") for k in KEYS])
    assert retry.duplicate and (retry.first_offset, retry.last_offset) == (last.first_offset, last.last_offset)
    assert log.log_end_offset == 9
    assert records(log) == [(6 + i, k, b"other") for i, k in enumerate(KEYS)]


def test_a_new_replica_of_the_cleaned_log_knows_the_last_sequence(tmp_path, open_log, config):
    leader = open_log(config)
    last = superseded_producer(leader)
    clean(tmp_path, leader)
    replica = Log.open(tmp_path / "replica" / "topic-0", config, now_ms=BASE_TS)
    try:
        offset = 0
        while offset < leader.log_end_offset:    # as a ReplicaFetcher does, from the log start
            data = bytearray(leader.read(offset, 1 << 20).read())
            info = replica.append_as_follower(data, now_ms=BASE_TS)
            offset = info.last_offset + 1
        assert batches(replica) == batches(leader)
        retry = idempotent(replica, 3, [(k, b"p-new") for k in KEYS])   # the replica, now leader
        assert retry.duplicate and retry.first_offset == last.first_offset
        assert replica.log_end_offset == 9
    finally:
        crash(replica)


def test_a_second_cleaning_keeps_the_empty_batch_until_the_producer_expires(tmp_path, open_log, config):
    log = open_log(config)
    superseded_producer(log)
    cleaner = LogCleaner(tmp_path)
    cleaner.run({TP: log}, BASE_TS)
    produce(log, [(b"k9", b"dirty")])
    log.roll(BASE_TS)
    cleaner.run({TP: log}, BASE_TS)
    assert batches(log)[0] == (3, 5, PID, EPOCH, 3, 0, False)
    # producer.id.expiration.ms (Kafka's removeExpiredProducers): then nothing keeps it.
    expiration_ms = 86_400_000
    expires_at = log.producer_state.producers[PID].last_timestamp + expiration_ms
    assert log.producer_state.remove_expired(expires_at - 1, expiration_ms) == 0
    produce(log, [(b"k8", b"dirty")])
    log.roll(BASE_TS)
    cleaner.run({TP: log}, BASE_TS)
    assert batches(log)[0] == (3, 5, PID, EPOCH, 3, 0, False)
    assert log.producer_state.remove_expired(expires_at, expiration_ms) == 1
    produce(log, [(b"k7", b"dirty")])
    log.roll(BASE_TS)
    cleaner.run({TP: log}, expires_at)
    assert [b[2] for b in batches(log)] == [-1] * 4
    assert [r[1] for r in records(log)] == KEYS + [b"k9", b"k8", b"k7"]


def test_a_later_batch_of_the_producer_lets_the_empty_one_go(tmp_path, open_log, config):
    log = open_log(config)
    superseded_producer(log)
    clean(tmp_path, log)
    assert batches(log)[0] == (3, 5, PID, EPOCH, 3, 0, False)
    idempotent(log, 6, [(b"p", b"latest")])                        # 9
    produce(log, [(b"k9", b"dirty")])
    log.roll(BASE_TS)
    clean(tmp_path, log)
    assert [b[:3] for b in batches(log)] == [(6, 8, -1), (9, 9, PID), (10, 10, -1)]


def test_an_emptied_marker_keeps_the_epoch_and_replicates(tmp_path, open_log, config):
    """A producer whose last entry is a marker that bumped its epoch (no data since) keeps
    that marker, emptied once its delete horizon passed (Kafka's empty control batch); a
    follower and a rebuild take an empty marker as nothing to apply."""
    log = open_log(dataclasses.replace(config, delete_retention_ms=1000))
    idempotent(log, 0, [(b"k0", b"t")], epoch=0, transactional=True)       # 0
    log.append(build_marker_batch(producer_id=PID, producer_epoch=1, coordinator_epoch=0, commit=False,
                                  timestamp_ms=BASE_TS), leader_epoch=1, now_ms=BASE_TS, control=True)  # 1
    produce(log, [(b"k0", b"other")])                                      # 2
    log.roll(BASE_TS)
    cleaner = LogCleaner(tmp_path)
    for now in (BASE_TS, BASE_TS, BASE_TS + 1000):    # data gone; marker stamped; horizon passed
        cleaner.run({TP: log}, now)
        produce(log, [(b"dirty", b"x")])
        log.roll(BASE_TS)
    assert batches(log)[0] == (1, 1, PID, 1, -1, 0, True)
    replica = Log.open(tmp_path / "replica" / "topic-0", config, now_ms=BASE_TS)
    try:
        replica.append_as_follower(bytearray(log.read(0, 1 << 20).read()), now_ms=BASE_TS)
        assert batches(replica)[0] == (1, 1, PID, 1, -1, 0, True)
    finally:
        crash(replica)
    crash(log)
    for snapshot in (tmp_path / "topic-0").glob(f"*{SNAPSHOT_SUFFIX}"):
        snapshot.unlink()
    log = open_log(config, had_clean_shutdown=False)
    assert batches(log)[0] == (1, 1, PID, 1, -1, 0, True)
