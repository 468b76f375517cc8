import errno
import os

import pytest

from engine.storage.errors import CorruptIndexError
from engine.storage.log_config import LogConfig
from engine.storage.records import assign_offsets, read_header
from engine.storage.segment import LogSegment

from .conftest import BASE_TS, decode, make_batch, values

BASE = 100
CONFIG = LogConfig(index_interval_bytes=200)


@pytest.fixture
def segment(tmp_path):
    seg = LogSegment.open(tmp_path, BASE, CONFIG, now_ms=0)
    yield seg
    seg.close()


def append(seg, first_offset, count, *, timestamps=None, size=20):
    buf = make_batch(values(count, f"o{first_offset}-", size), timestamps=timestamps)
    assign_offsets(buf, 0, first_offset, 0)
    header = read_header(buf)
    seg.append(buf, first_offset, header.last_offset, header.max_timestamp, header.last_offset)
    return len(buf)


def fill(seg, batches=20, per_batch=5):
    """Batches of `per_batch` records from BASE; returns their start positions."""
    positions = []
    for i in range(batches):
        positions.append(seg.size)
        append(seg, BASE + i * per_batch, per_batch)
    return positions


def test_files_are_named_by_20_digit_base_offset(tmp_path, segment):
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00000000000000000100.index", "00000000000000000100.log",
        "00000000000000000100.timeindex"]


def test_append_indexes_every_interval_and_translates(segment):
    positions = fill(segment)
    assert segment.next_offset == BASE + 100
    assert 0 < segment.offset_index.entries < 20
    for offset in range(BASE, BASE + 100):
        position, header = segment.translate_offset(offset)
        assert position == positions[(offset - BASE) // 5]
        assert header.base_offset <= offset <= header.last_offset
    assert segment.translate_offset(BASE + 100) is None


def test_read_from_the_middle_of_a_batch_starts_at_its_batch(segment):
    fill(segment)
    data = segment.read(BASE + 7, 1 << 20).read()
    assert [r[0] for r in decode(data)] == list(range(BASE + 5, BASE + 100))


def test_read_max_size_allows_a_partial_trailing_batch(segment):
    positions = fill(segment)
    batch_size = positions[1] - positions[0]
    found = segment.read(BASE, batch_size + 10)
    assert found.size == batch_size + 10
    assert [r[0] for r in decode(found.read())] == list(range(BASE, BASE + 5))


def test_min_one_batch_returns_a_whole_first_batch(segment):
    positions = fill(segment)
    batch_size = positions[1] - positions[0]
    assert segment.read(BASE, 10, min_one_batch=True).size == batch_size
    assert segment.read(BASE, 10, min_one_batch=False).size == 10


def test_read_stops_at_max_position(segment):
    positions = fill(segment)
    found = segment.read(BASE, 1 << 20, max_position=positions[3])
    assert (found.position, found.size) == (0, positions[3])
    assert segment.read(BASE + 15, 1 << 20, max_position=positions[3]).size == 0


def test_file_slice_exposes_a_real_fd(segment):
    fill(segment, batches=2)
    found = segment.read(BASE, 1 << 20)
    dup = os.dup(found.fileno())
    try:
        assert os.pread(dup, found.size, found.position) == found.read()
    finally:
        os.close(dup)


def test_find_offset_by_timestamp_returns_the_exact_record(segment):
    # Timestamps out of order inside a batch, as producers may write them.
    append(segment, BASE, 4, timestamps=[10, 40, 20, 30])
    append(segment, BASE + 4, 3, timestamps=[50, 45, 60])
    assert segment.find_offset_by_timestamp(25) == (BASE + 1, 40)
    assert segment.find_offset_by_timestamp(41) == (BASE + 4, 50)
    assert segment.find_offset_by_timestamp(46) == (BASE + 4, 50)
    assert segment.find_offset_by_timestamp(55) == (BASE + 6, 60)
    assert segment.find_offset_by_timestamp(61) is None
    assert segment.find_offset_by_timestamp(25, start_offset=BASE + 2) == (BASE + 3, 30)
    assert (segment.max_timestamp, segment.offset_of_max_timestamp) == (60, BASE + 6)


def test_reopen_derives_end_state_from_index_and_tail(tmp_path, segment):
    for i in range(30):
        append(segment, BASE + i * 2, 2, timestamps=[BASE_TS + i, BASE_TS + i])
    segment.close()
    reopened = LogSegment.open(tmp_path, BASE, CONFIG, now_ms=0)
    reopened.sanity_check()
    assert reopened.next_offset == BASE + 60
    assert reopened.max_timestamp == BASE_TS + 29
    assert reopened.rolling_based_timestamp == BASE_TS
    append(reopened, BASE + 60, 1)
    assert [r[0] for r in decode(reopened.read(BASE + 58, 1 << 20).read())] == [158, 159, 160]
    reopened.close()


def test_recover_truncates_a_torn_batch(segment):
    positions = fill(segment, batches=10)
    end = segment.size
    os.truncate(segment.log.path, end - 7)
    segment.close()
    seg = LogSegment.open(segment.log.path.parent, BASE, CONFIG, now_ms=0)
    assert seg.recover() == end - 7 - positions[-1]
    assert seg.size == positions[-1] and seg.next_offset == BASE + 45
    assert seg.translate_offset(BASE + 44)[0] == positions[-2]
    seg.close()


def test_recover_truncates_garbage_and_bad_crc(segment):
    positions = fill(segment, batches=10)
    with open(segment.log.path, "r+b") as f:
        f.seek(positions[6] + 70)
        f.write(b"\xff")  # corrupts batch 6's records: CRC mismatch
    segment.log.size = os.path.getsize(segment.log.path)
    assert segment.recover() > 0
    assert segment.size == positions[6] and segment.next_offset == BASE + 30


def entry(offset, position):
    return offset.to_bytes(4, "big") + position.to_bytes(4, "big")


def test_sanity_check_catches_an_index_pointing_inside_a_batch(tmp_path, segment):
    positions = fill(segment)
    segment.close()
    (tmp_path / "00000000000000000100.index").write_bytes(entry(1, 0) + entry(3, 7))
    seg = LogSegment.open(tmp_path, BASE, CONFIG, now_ms=0)
    with pytest.raises(CorruptIndexError):
        seg.sanity_check()  # position 7 is not a batch boundary
    assert seg.recover() == 0  # what the loader does next: rebuild from the .log
    seg.sanity_check()
    assert seg.translate_offset(BASE + 52)[0] == positions[10]
    seg.close()


def test_rebuilds_a_disordered_index_on_first_use(tmp_path, segment):
    positions = fill(segment)
    segment.close()
    (tmp_path / "00000000000000000100.index").write_bytes(
        entry(1, 0) + entry(40, positions[5]) + entry(10, positions[2]) + entry(50, positions[10]))
    seg = LogSegment.open(tmp_path, BASE, CONFIG, now_ms=0)
    seg.sanity_check()  # first and last entries look fine
    for offset in range(BASE, BASE + 100, 3):
        assert seg.translate_offset(offset)[0] == positions[(offset - BASE) // 5]
    seg.close()


def test_truncate_to_removes_the_batch_holding_the_offset(segment):
    positions = fill(segment)
    removed = segment.truncate_to(BASE + 52)
    assert removed == positions[-1] + (positions[1] - positions[0]) - positions[10]
    assert segment.size == positions[10] and segment.next_offset == BASE + 50
    assert segment.offset_index.last_offset < BASE + 50
    assert segment.translate_offset(BASE + 50) is None
    append(segment, BASE + 50, 1)
    assert segment.next_offset == BASE + 51
    assert segment.truncate_to(BASE + 500) == 0


def test_should_roll(segment):
    config = LogConfig(segment_bytes=1000, segment_ms=1000)
    kwargs = dict(max_timestamp=BASE_TS, last_offset=BASE, now_ms=0)
    assert not segment.should_roll(config, message_bytes=2000, **kwargs)  # empty: never by size
    append(segment, BASE, 1, timestamps=[BASE_TS])
    assert segment.should_roll(config, message_bytes=1000, **kwargs)
    assert not segment.should_roll(config, message_bytes=100, **kwargs)
    late = dict(kwargs, max_timestamp=BASE_TS + 1001)
    assert segment.should_roll(config, message_bytes=100, **late)
    overflow = dict(kwargs, last_offset=BASE + 2**31)
    assert segment.has_overflow(BASE + 2**31) and not segment.has_overflow(BASE + 2**31 - 1)
    assert segment.should_roll(config, message_bytes=100, **overflow)


def test_delete_removes_all_three_files(tmp_path, segment):
    fill(segment, batches=2)
    segment.delete()
    assert list(tmp_path.iterdir()) == []


def test_a_failed_index_write_undoes_the_append(faulty_fs, segment):
    fill(segment, batches=3)
    size, end = segment.size, segment.next_offset
    segment.index_interval_bytes = 0  # the next append writes an index entry
    faulty_fs.fail("write", errno.ENOSPC, path_contains=".index", times=1)
    with pytest.raises(OSError):
        append(segment, end, 5)
    assert faulty_fs.injected == 1
    assert (segment.size, segment.next_offset) == (size, end)
    append(segment, end, 5)
    assert [r[0] for r in decode(segment.read(end, 1 << 20).read())] == list(range(end, end + 5))
