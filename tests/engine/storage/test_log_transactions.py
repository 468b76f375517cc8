"""Transactions in the log: open transactions in the producer state, COMMIT/ABORT markers,
the last stable offset, and the .txnindex (Kafka's TransactionIndex) across restarts."""
import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from engine.storage.control_records import build_marker_batch
from engine.storage.errors import (InvalidProducerEpochError, InvalidRecordError, InvalidTxnStateError,
                                   TransactionCoordinatorFencedError)
from engine.storage.log import Log
from engine.storage.log_config import LogConfig
from engine.storage.producer_state import TxnVerification

from .conftest import BASE_TS, crash, make_batch, values

PID, OTHER = 4000, 4001


def txn_batch(count, seq, *, pid=PID, epoch=0, prefix="t"):
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=pid,
                                        producer_epoch=epoch, base_sequence=seq, batch_size=1 << 20)
    for i in range(count):
        builder.append(i, BASE_TS + i, None, f"{prefix}{seq + i}".encode(), headers=[])
    return builder.build()


def send(log, count, seq, **kwargs):
    return log.append(txn_batch(count, seq, **kwargs), leader_epoch=0, now_ms=BASE_TS)


def marker(log, *, commit, pid=PID, epoch=0, coordinator_epoch=0):
    batch = build_marker_batch(producer_id=pid, producer_epoch=epoch, coordinator_epoch=coordinator_epoch,
                               commit=commit, timestamp_ms=BASE_TS)
    return log.append(batch, leader_epoch=0, now_ms=BASE_TS, control=True)


def txnindex_bytes(log):
    return b"".join(s.txn_index.path.read_bytes() for s in log.segments if s.txn_index.path.exists())


def test_marker_batch_is_a_control_batch_kafka_clients_decode():
    batch = DefaultRecordBatch(bytes(build_marker_batch(producer_id=PID, producer_epoch=3, coordinator_epoch=9,
                                                        commit=False, timestamp_ms=BASE_TS)))
    assert batch.validate_crc() and batch.is_control_batch and batch.is_transactional
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (PID, 3, -1)
    (record,) = list(batch)
    assert record.abort and record.key == struct.pack(">hh", 0, 0)
    assert record.value == struct.pack(">hi", 0, 9)


def test_abort_writes_kafkas_txnindex_entry_and_moves_the_lso(open_log):
    log = open_log()
    log.append(make_batch(values(2)), leader_epoch=0, now_ms=BASE_TS)   # 0-1, not transactional
    send(log, 3, 0)                                                      # 2-4
    send(log, 2, 0, pid=OTHER)                                           # 5-6
    state = log.producer_state
    assert state.ongoing_txn_first_offset(PID) == 2
    assert state.first_unstable_offset(high_watermark=7) == 2
    info = marker(log, commit=False)                                     # 7
    assert info.first_offset == 7 and log.log_end_offset == 8
    assert state.ongoing_txn_first_offset(PID) is None
    # Not replicated yet (HW 7 <= marker): still unstable from 2; once past the marker, the other txn.
    assert state.first_unstable_offset(high_watermark=7) == 2
    assert state.first_unstable_offset(high_watermark=8) == 5
    # version int16, producer_id int64, first_offset int64, last_offset int64, last_stable_offset int64
    assert txnindex_bytes(log) == struct.pack(">hqqqq", 0, PID, 2, 7, 5)
    assert log.segments[0].txn_index.path.name == "00000000000000000000.txnindex"
    assert [(t.producer_id, t.first_offset) for t in log.aborted_transactions(0, 8)] == [(PID, 2)]
    assert log.aborted_transactions(8, 9) == []          # the marker is before the fetch
    assert log.aborted_transactions(0, 2) == []          # the txn starts at the bound


def test_commit_leaves_no_txnindex_entry(open_log):
    log = open_log()
    send(log, 2, 0)
    marker(log, commit=True)
    assert log.producer_state.first_unstable_offset(high_watermark=3) is None
    assert txnindex_bytes(log) == b"" and log.aborted_transactions(0, 3) == []


def test_empty_transaction_marker_leaves_no_trace(open_log):
    log = open_log()
    marker(log, commit=False)
    assert txnindex_bytes(log) == b"" and log.producer_state.first_unstable_offset(1) is None
    assert log.producer_state.producers[PID].coordinator_epoch == 0


def test_producer_and_coordinator_epoch_checks(open_log):
    log = open_log()
    send(log, 2, 0, epoch=2)
    with pytest.raises(InvalidTxnStateError):   # an open txn takes only transactional writes
        log.append(make_batch(values(1), producer=(PID, 2, 2)), leader_epoch=0, now_ms=BASE_TS)
    with pytest.raises(InvalidProducerEpochError):
        send(log, 1, 2, epoch=1)
    marker(log, commit=True, epoch=2, coordinator_epoch=5)
    send(log, 1, 2, epoch=2)
    with pytest.raises(TransactionCoordinatorFencedError):
        marker(log, commit=False, epoch=2, coordinator_epoch=4)
    with pytest.raises(InvalidProducerEpochError):
        marker(log, commit=False, epoch=1, coordinator_epoch=5)
    # The coordinator's abort with a bumped epoch (InitProducerId fencing) is accepted.
    marker(log, commit=False, epoch=3, coordinator_epoch=5)
    assert log.producer_state.producers[PID].epoch == 3
    assert log.producer_state.ongoing_txns == {}


def test_clients_cannot_write_control_batches_and_markers_must_be_control(open_log):
    log = open_log()
    batch = build_marker_batch(producer_id=PID, producer_epoch=0, coordinator_epoch=0, commit=True,
                               timestamp_ms=BASE_TS)
    with pytest.raises(InvalidRecordError):
        log.append(batch, leader_epoch=0, now_ms=BASE_TS)
    with pytest.raises(InvalidRecordError):
        log.append(txn_batch(1, 0), leader_epoch=0, now_ms=BASE_TS, control=True)


def test_a_client_transactional_batch_needs_the_verification_guard(open_log):
    log = open_log()
    with pytest.raises(InvalidTxnStateError):    # no coordinator confirmed this transaction
        log.append(txn_batch(2, 0), leader_epoch=0, now_ms=BASE_TS, verification=TxnVerification(None))
    with pytest.raises(InvalidTxnStateError):    # a guard of another partition's, or made up
        log.append(txn_batch(2, 0), leader_epoch=0, now_ms=BASE_TS, verification=TxnVerification(object()))
    assert log.log_end_offset == 0 and log.producer_state.ongoing_txn_first_offset(PID) is None

    guard = log.producer_state.start_verification(PID, BASE_TS)
    assert log.producer_state.start_verification(OTHER, BASE_TS) is not guard
    log.append(txn_batch(2, 0), leader_epoch=0, now_ms=BASE_TS, verification=TxnVerification(guard))
    assert log.producer_state.ongoing_txn_first_offset(PID) == 0
    assert log.producer_state.start_verification(PID, BASE_TS) is None     # the open transaction is the proof
    log.append(txn_batch(1, 2), leader_epoch=0, now_ms=BASE_TS, verification=TxnVerification(None))
    assert log.log_end_offset == 3


def test_a_marker_voids_a_verification_made_before_it(open_log):
    log = open_log()
    send(log, 1, 0)                                           # the transaction is open: offset 0
    marker(log, commit=False)                                 # 1: aborted
    guard = log.producer_state.start_verification(PID, BASE_TS)
    marker(log, commit=False, epoch=1)                        # 2: the coordinator aborts again (a timeout)
    with pytest.raises(InvalidTxnStateError):                 # the confirmation predates that marker
        log.append(txn_batch(1, 0, epoch=1), leader_epoch=0, now_ms=BASE_TS, verification=TxnVerification(guard))
    assert log.producer_state.ongoing_txn_first_offset(PID) is None and log.log_end_offset == 3


def test_open_transaction_survives_clean_restart_and_kill_9(tmp_path):
    config = LogConfig(segment_bytes=600, index_interval_bytes=64)
    log = Log.open(tmp_path / "t-0", config, now_ms=BASE_TS)
    send(log, 2, 0)
    for seq in range(2, 40, 2):              # rolls segments: snapshots carry the open txn
        send(log, 2, seq)
    assert len(log.segments) > 2
    log.close()
    log = Log.open(tmp_path / "t-0", config, now_ms=BASE_TS, had_clean_shutdown=True)
    assert log.producer_state.ongoing_txn_first_offset(PID) == 0
    send(log, 2, 40)
    crash(log)
    log = Log.open(tmp_path / "t-0", config, now_ms=BASE_TS)
    assert log.producer_state.ongoing_txn_first_offset(PID) == 0
    assert log.producer_state.producers[PID].last_seq == 41
    end = log.log_end_offset
    marker(log, commit=False)
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in log.aborted_transactions(0, end)] == \
        [(PID, 0, end)]
    crash(log)


def test_kill_9_rebuilds_the_txnindex_of_recovered_segments(tmp_path):
    config = LogConfig(segment_bytes=1 << 20, index_interval_bytes=64)
    log = Log.open(tmp_path / "t-0", config, now_ms=BASE_TS)
    for round_ in range(3):
        send(log, 2, round_ * 2)
        send(log, 1, round_, pid=OTHER)
        marker(log, commit=round_ != 1)
        marker(log, commit=False, pid=OTHER)
    expected = txnindex_bytes(log)
    assert len(expected) == 4 * 34    # PID's round 1, OTHER's three
    crash(log)
    log.segments[0].txn_index.path.unlink()          # lost with the page cache
    log = Log.open(tmp_path / "t-0", config, now_ms=BASE_TS)
    assert txnindex_bytes(log) == expected
    crash(log)


def test_truncation_drops_txnindex_entries_and_reopens_the_transaction(open_log):
    log = open_log()
    send(log, 2, 0)
    marker(log, commit=False)                 # 2
    send(log, 2, 2)                           # 3-4
    marker(log, commit=False)                 # 5
    assert len(txnindex_bytes(log)) == 68
    log.truncate_to(5)
    assert txnindex_bytes(log) == struct.pack(">hqqqq", 0, PID, 0, 2, 3)
    assert log.producer_state.ongoing_txn_first_offset(PID) == 3


def test_follower_append_keeps_the_same_state_and_index(open_log, tmp_path):
    leader = open_log()
    send(leader, 2, 0)
    send(leader, 1, 0, pid=OTHER)
    marker(leader, commit=False)
    follower = Log.open(tmp_path / "follower-0", LogConfig(), now_ms=BASE_TS)
    follower.append_as_follower(leader.read(0, 1 << 20).read(), now_ms=BASE_TS)
    assert follower.producer_state.ongoing_txns == leader.producer_state.ongoing_txns == {OTHER: 2}
    assert txnindex_bytes(follower) == txnindex_bytes(leader) == struct.pack(">hqqqq", 0, PID, 0, 3, 2)
    crash(follower)


def test_txnindex_file_format_torn_tail_and_truncation(tmp_path):
    from engine.storage.transaction_index import AbortedTxn, TransactionIndex
    path = tmp_path / "00000000000000000100.txnindex"
    index = TransactionIndex(path, 100)
    assert index.entries == [] and not path.exists()      # created with its first entry
    index.append(AbortedTxn(7, 100, 105, 106))
    index.append(AbortedTxn(8, 101, 110, 111))
    assert path.read_bytes() == struct.pack(">hqqqq", 0, 7, 100, 105, 106) + struct.pack(">hqqqq", 0, 8, 101, 110, 111)
    with open(path, "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00")                    # a crash mid-append
    assert TransactionIndex(path, 100).entries == [AbortedTxn(7, 100, 105, 106), AbortedTxn(8, 101, 110, 111)]
    assert TransactionIndex(path, 100).collect(106, 200) == ([AbortedTxn(8, 101, 110, 111)], False)
    assert TransactionIndex(path, 100).collect(106, 111) == ([AbortedTxn(8, 101, 110, 111)], True)
    assert TransactionIndex(path, 100).collect(100, 103) == ([AbortedTxn(7, 100, 105, 106)], True)
    reopened = TransactionIndex(path, 100)
    reopened.truncate_to(110)
    assert path.read_bytes() == struct.pack(">hqqqq", 0, 7, 100, 105, 106)
    reopened.truncate_to(100)
    assert not path.exists()
