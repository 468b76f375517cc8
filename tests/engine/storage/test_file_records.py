import errno
import os

import pytest

from engine.storage.errors import CorruptRecordError, StorageError
from engine.storage.file_records import SCAN_CHUNK, FileRecords

from .conftest import make_batch, values


@pytest.fixture
def records(tmp_path):
    fr = FileRecords(tmp_path / "00000000000000000000.log")
    yield fr
    fr.close()


def test_append_returns_positions_and_data_is_readable_at_once(records):
    a, b = make_batch(values(2)), make_batch(values(3))
    assert records.append(a) == 0
    assert records.append(b) == len(a)
    assert records.size == len(a) + len(b) == os.path.getsize(records.path)
    # Visible to any other reader without a flush (page cache), as a crash would leave it.
    assert records.path.read_bytes() == a + b
    assert records.slice(len(a), 1 << 20).read() == b


def test_batches_scans_headers_and_steps_over_big_batches(records):
    sizes = []
    for n in (1, 2, 400, 1):  # the 400-record batch is larger than one scan chunk
        buf = make_batch(values(n, size=200))
        sizes.append(len(buf))
        records.append(buf)
    assert sizes[2] > SCAN_CHUNK
    found = list(records.batches(0, with_data=True))
    assert [pos for pos, _, _ in found] == [0, sizes[0], sum(sizes[:2]), sum(sizes[:3])]
    assert [len(data) for _, _, data in found] == sizes
    assert [h.records_count for _, h, _ in records.batches(sizes[0])] == [2, 400, 1]


def test_batches_raises_at_a_torn_batch(records):
    records.append(make_batch(values(2)))
    records.append(make_batch(values(2))[:-4])
    with pytest.raises(CorruptRecordError):
        list(records.batches())


def test_slice_is_clamped_to_the_file(records):
    records.append(make_batch(values(2)))
    assert records.slice(10, 1 << 20).size == records.size - 10
    assert records.slice(records.size, 10).size == 0


def test_truncate_to(records):
    a = make_batch(values(2))
    records.append(a)
    records.append(make_batch(values(2)))
    assert records.truncate_to(len(a)) > 0
    assert records.size == len(a) == os.path.getsize(records.path)
    assert records.truncate_to(len(a) + 100) == 0


def test_a_short_write_followed_by_an_error_leaves_no_partial_batch(records, faulty_fs):
    first = make_batch(values(2))
    records.append(first)
    faulty_fs.fail("write", errno.ENOSPC, torn_bytes=10, times=1)   # 10 bytes land, then the disk is full
    with pytest.raises(StorageError):
        records.append(make_batch(values(3)))
    assert faulty_fs.injected == 1
    assert records.size == len(first) == os.path.getsize(records.path)
