"""Opening a partition dir after clean and unclean shutdowns (LogLoader)."""
import os

from engine.storage.records import read_header
from engine.storage.segment import LogSegment

from .conftest import BASE_TS, crash, make_batch, read_all, values


def produce(log, batches, per_batch=5):
    for i in range(batches):
        log.append(make_batch(values(per_batch, f"b{i}-", 20)), leader_epoch=0, now_ms=BASE_TS)


def log_file(log, segment):
    return log.dir / f"{segment.base_offset:020d}.log"


def test_torn_tail_is_truncated_and_appends_continue(open_log):
    log = open_log()
    produce(log, 30)
    active = log.active_segment
    last_batch_start = active.translate_offset(log.log_end_offset - 1)[0]
    path, size = log_file(log, active), active.size
    before = read_all(log)
    crash(log)
    os.truncate(path, size - 10)  # the last write was cut short by the crash
    log = open_log(recovery_point=log.recovery_point)
    assert log.active_segment.size == last_batch_start
    assert log.log_end_offset == before[-5][0]
    assert read_all(log) == before[:-5]
    info = log.append(make_batch(values(2)), leader_epoch=0, now_ms=BASE_TS)
    assert info.first_offset == before[-5][0]
    assert read_all(log)[-2:][0][0] == info.first_offset


def test_garbage_after_the_last_batch_is_truncated(open_log):
    log = open_log()
    produce(log, 30)
    path, size, end = log_file(log, log.active_segment), log.active_segment.size, log.log_end_offset
    crash(log)
    with open(path, "ab") as f:
        f.write(os.urandom(100))
    log = open_log(recovery_point=log.recovery_point)
    assert log.active_segment.size == size and log.log_end_offset == end
    assert log.append(make_batch(values(1)), leader_epoch=0, now_ms=BASE_TS).first_offset == end


def test_zero_filled_tail_is_truncated(open_log):
    log = open_log()
    produce(log, 3)
    path, size = log_file(log, log.active_segment), log.active_segment.size
    crash(log)
    with open(path, "ab") as f:
        f.write(b"\x00" * 4096)  # what a power loss can leave after a file extension
    log = open_log(recovery_point=0)
    assert log.active_segment.size == size and log.log_end_offset == 15


def test_corrupt_and_missing_indexes_are_rebuilt(open_log):
    log = open_log()
    produce(log, 60)
    first, second = log.segments[0], log.segments[1]
    before = read_all(log)
    end = log.log_end_offset
    log.close()
    (log.dir / f"{first.base_offset:020d}.index").write_bytes(b"\xde\xad\xbe\xef" * 5 + b"!")
    (log.dir / f"{first.base_offset:020d}.timeindex").write_bytes(os.urandom(36))
    (log.dir / f"{second.base_offset:020d}.index").unlink()
    log = open_log(recovery_point=end, had_clean_shutdown=True)
    assert (log.dir / f"{second.base_offset:020d}.index").stat().st_size > 0
    assert read_all(log) == before
    for segment in log.segments[:2]:
        segment.sanity_check()
        for offset in range(segment.base_offset, segment.next_offset, 7):
            position, header = segment.translate_offset(offset)
            assert header.base_offset <= offset <= header.last_offset
    assert log.offset_for_timestamp(BASE_TS + 3) == (3, BASE_TS + 3)


def test_recovery_only_scans_segments_above_the_recovery_point(open_log):
    log = open_log()
    produce(log, 60)
    old = log.segments[0]
    assert log.recovery_point >= log.segments[1].base_offset  # rolls fsynced old segments
    recovery_point, old_size = log.recovery_point, old.size
    crash(log)
    # Flip a byte inside a batch of the OLD (fsynced) segment: its CRC no longer matches.
    with open(log_file(log, old), "r+b") as f:
        f.seek(old_size // 2)
        byte = f.read(1)
        f.seek(old_size // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    log = open_log(recovery_point=recovery_point)  # unclean: no had_clean_shutdown
    # Not validated, so not truncated: restart time does not grow with old data.
    assert log.segments[0].size == old_size
    crash(log)
    # The same open with no checkpointed recovery point validates everything and cuts it.
    log = open_log(recovery_point=0)
    assert log.segments[0].size < old_size
    assert len(log.segments) == 1  # segments after the corrupt one are deleted
    assert log.log_end_offset == log.segments[0].next_offset


def test_corruption_in_an_unflushed_middle_segment_drops_later_segments(open_log):
    log = open_log()
    produce(log, 60)
    assert len(log.segments) >= 3
    middle = log.segments[-2]
    recovery_point = middle.base_offset
    crash(log)
    with open(log_file(log, middle), "r+b") as f:
        f.seek(100)
        f.write(b"\x00\x00\x00\x00")
    log = open_log(recovery_point=recovery_point)
    assert log.active_segment.base_offset == middle.base_offset
    assert log.log_end_offset < middle.next_offset
    assert [r[0] for r in read_all(log)] == list(range(log.log_end_offset))


def recovered_segments(monkeypatch):
    calls = []
    original = LogSegment.recover

    def spy(segment, *args):
        calls.append(segment.base_offset)
        return original(segment, *args)
    monkeypatch.setattr(LogSegment, "recover", spy)
    return calls


def test_which_segments_are_validated(open_log, monkeypatch):
    log = open_log()
    produce(log, 60)
    bases = [s.base_offset for s in log.segments]
    end = log.log_end_offset
    log.close()
    calls = recovered_segments(monkeypatch)
    log = open_log(recovery_point=end, had_clean_shutdown=True)
    assert calls == []  # clean shutdown: nothing is re-read
    crash(log)
    log = open_log(recovery_point=bases[2] + 1)
    assert calls == bases[2:]  # unclean: the segment holding the recovery point onwards
    crash(log)
    calls.clear()
    log = open_log(recovery_point=0)
    assert calls == bases


def test_garbage_after_a_clean_shutdown_is_still_caught_by_the_tail_check(open_log):
    log = open_log()
    produce(log, 5)
    path, size = log_file(log, log.active_segment), log.active_segment.size
    log.close()
    with open(path, "ab") as f:
        f.write(b"\x00" * 100)
    log = open_log(recovery_point=25, had_clean_shutdown=True)
    assert log.active_segment.size == size and log.log_end_offset == 25


def test_stray_files_are_removed(open_log, tmp_path):
    log = open_log()
    produce(log, 2)
    log.close()
    for name in ("00000000000000000010.snapshot.tmp", "00000000000000000000.log.deleted",
                 "00000000000000000999.index", "00000000000000000999.timeindex"):
        (log.dir / name).write_bytes(b"junk")
    log = open_log(recovery_point=10, had_clean_shutdown=True)
    names = sorted(p.name for p in log.dir.iterdir())
    assert names == ["00000000000000000000.index", "00000000000000000000.log",
                     "00000000000000000000.timeindex", "00000000000000000010.snapshot",
                     "leader-epoch-checkpoint"]


def test_log_start_offset_is_kept_within_the_log(open_log):
    log = open_log(log_start_offset=40)
    assert (log.log_start_offset, log.log_end_offset) == (40, 40)
    assert log.segments[0].base_offset == 40
    assert log.append(make_batch(values(1)), leader_epoch=0, now_ms=BASE_TS).first_offset == 40
    header = read_header(log.read(40, 100).read())
    assert header.base_offset == 40
