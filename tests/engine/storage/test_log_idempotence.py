"""Log.append with idempotent producers (Kafka's producer-state checks)."""
import dataclasses

import pytest

from engine.storage.errors import DuplicateSequenceError, InvalidProducerEpochError, OutOfOrderSequenceError

from .conftest import BASE_TS, crash, make_batch, read_all, values

PID = 77


def send(log, seq, count=2, *, epoch=0, pid=PID, now_ms=BASE_TS):
    return log.append(make_batch(values(count, f"s{seq}-"), producer=(pid, epoch, seq)),
                      leader_epoch=0, now_ms=now_ms)


def test_duplicate_batch_returns_the_original_offsets_and_appends_nothing(open_log):
    log = open_log()
    first = send(log, 0)
    send(log, 2)
    size, end = log.size_in_bytes, log.log_end_offset
    retry = send(log, 0)
    assert retry.duplicate and not first.duplicate
    assert (retry.first_offset, retry.last_offset) == (first.first_offset, first.last_offset)
    assert (log.size_in_bytes, log.log_end_offset) == (size, end)
    assert len(read_all(log)) == 4


def test_sequence_gap_raises_and_appends_nothing(open_log):
    log = open_log()
    send(log, 0)
    with pytest.raises(OutOfOrderSequenceError):
        send(log, 5)
    assert log.log_end_offset == 2
    assert send(log, 2).first_offset == 2


def test_older_epoch_raises(open_log):
    log = open_log()
    send(log, 0, epoch=5)
    with pytest.raises(InvalidProducerEpochError):
        send(log, 2, epoch=4)
    with pytest.raises(OutOfOrderSequenceError):
        send(log, 2, epoch=6)  # a bumped epoch starts at sequence 0
    assert send(log, 0, epoch=6).first_offset == 2


def test_unknown_producer_may_start_anywhere(open_log):
    log = open_log()
    assert send(log, 1000).first_offset == 0
    assert send(log, 1002).first_offset == 2


def test_a_failed_request_leaves_no_producer_state_behind(open_log):
    log = open_log()
    send(log, 0)
    ok = make_batch(values(2), producer=(PID, 0, 2))
    gap = make_batch(values(2), producer=(PID, 0, 9))
    with pytest.raises(OutOfOrderSequenceError):
        log.append(ok + gap, leader_epoch=0, now_ms=BASE_TS)
    assert log.log_end_offset == 2
    assert send(log, 2).first_offset == 2  # seq 2 was not recorded by the failed request


def test_several_batches_of_one_producer_in_one_request(open_log):
    log = open_log()
    request = (make_batch(values(2), producer=(PID, 0, 0))
               + make_batch(values(3), producer=(PID, 0, 2)))
    info = log.append(request, leader_epoch=0, now_ms=BASE_TS)
    assert (info.first_offset, info.last_offset, info.num_records) == (0, 4, 5)
    assert send(log, 2, 3).duplicate


def test_a_batch_repeated_within_one_append_is_refused_not_acknowledged(open_log):
    log = open_log()
    batch = make_batch(values(2), producer=(PID, 0, 0))
    with pytest.raises(OutOfOrderSequenceError):
        log.append(batch + batch, leader_epoch=0, now_ms=BASE_TS)
    assert log.log_end_offset == 0 and not log.producer_state.producers


def test_a_written_batch_repeated_beside_a_new_one_is_refused_whole(open_log):
    log = open_log()
    send(log, 0)
    with pytest.raises(DuplicateSequenceError):
        log.append(make_batch(values(2), producer=(PID, 0, 2)) + make_batch(values(2, "s0-"), producer=(PID, 0, 0)),
                   leader_epoch=0, now_ms=BASE_TS)
    assert log.log_end_offset == 2
    assert send(log, 2).first_offset == 2


def test_non_idempotent_batches_bypass_the_checks(open_log):
    log = open_log()
    batch = make_batch(values(2))
    assert log.append(batch, leader_epoch=0, now_ms=BASE_TS).first_offset == 0
    assert log.append(batch, leader_epoch=0, now_ms=BASE_TS).first_offset == 2
    assert not log.producer_state.producers


def test_producer_state_survives_a_clean_restart(open_log):
    log = open_log()
    for seq in range(0, 10, 2):
        send(log, seq)
    log.close()
    log = open_log(recovery_point=log.log_end_offset, had_clean_shutdown=True)
    assert send(log, 8).duplicate
    with pytest.raises(OutOfOrderSequenceError):
        send(log, 12)
    assert send(log, 10).first_offset == 10


def test_producer_state_survives_a_crash(open_log, config):
    log = open_log(dataclasses.replace(config, segment_bytes=600))
    for seq in range(0, 40, 2):
        send(log, seq)
    assert len(log.segments) > 2  # snapshots were taken at each roll
    recovery_point = log.recovery_point
    crash(log)  # no snapshot at the end: the tail must be replayed from the log
    log = open_log(dataclasses.replace(config, segment_bytes=600), recovery_point=recovery_point)
    assert send(log, 38).duplicate
    assert send(log, 36).first_offset == 36
    with pytest.raises(OutOfOrderSequenceError):
        send(log, 44)
    assert send(log, 40).first_offset == 40


def test_producer_state_rebuilt_after_truncation(open_log):
    log = open_log()
    for seq in range(0, 10, 2):
        send(log, seq)
    log.truncate_to(6)
    assert log.log_end_offset == 6
    assert send(log, 6).first_offset == 6  # seq 6 and 8 were truncated away


def test_sequences_wrap_at_int_max_and_retries_across_the_wrap_are_still_duplicates(open_log):
    """A producer's sequence goes from 2**31 - 1 back to 0 (Kafka's DefaultRecordBatch
    incrementSequence); each of its last five batches, retried in any order, is acknowledged
    with its original offsets and written once; a retry older than five is refused, not re-appended."""
    log = open_log()
    top = 2**31 - 1
    firsts = [top - 5, top - 3, top - 1, 1, 3, 5]      # the third batch holds top-1, top and 0
    infos = [send(log, seq, 3 if seq == top - 1 else 2) for seq in firsts]
    assert [i.first_offset for i in infos] == [0, 2, 4, 7, 9, 11]
    end = log.log_end_offset
    for i in (5, 2, 4, 1, 3):                          # the last five, out of order
        retry = send(log, firsts[i], 3 if firsts[i] == top - 1 else 2)
        assert retry.duplicate and (retry.first_offset, retry.last_offset) == \
            (infos[i].first_offset, infos[i].last_offset)
    with pytest.raises(OutOfOrderSequenceError):
        send(log, firsts[0])                           # out of the window: never appended twice
    with pytest.raises(OutOfOrderSequenceError):
        send(log, top - 1, 2)                          # a retry that does not match the batch exactly
    assert log.log_end_offset == end and len(read_all(log)) == end
    assert send(log, 7).first_offset == end


def test_deleted_records_keep_the_producer_state_through_a_crash(open_log, config):
    """DeleteRecords removes a producer's batches but not its state (as Kafka): a retry of its
    last batch, after a crash too, is still a duplicate and is not written again."""
    small = dataclasses.replace(config, segment_bytes=600)
    log = open_log(small)
    for seq in range(0, 40, 2):
        send(log, seq)
    log.delete_records_before(log.log_end_offset)
    assert log.log_start_offset == 40 and len(log.segments) >= 1
    recovery_point, start = log.recovery_point, log.log_start_offset
    crash(log)
    log = open_log(small, recovery_point=recovery_point, log_start_offset=start)
    assert send(log, 38).duplicate
    assert log.log_end_offset == 40
