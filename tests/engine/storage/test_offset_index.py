import bisect
import random

import pytest

from engine.storage.errors import CorruptIndexError
from engine.storage.offset_index import OffsetIndex

BASE = 45


@pytest.fixture
def index(tmp_path):
    idx = OffsetIndex(tmp_path / "00000000000000000045.index", BASE, max_index_size=30 * 8)
    yield idx
    idx.close()


def random_entries(rng, count):
    offsets = sorted(rng.sample(range(BASE, BASE + 10_000), count))
    positions = sorted(rng.sample(range(0, 1_000_000), count))
    return list(zip(offsets, positions))


def reference_lookup(entries, target):
    """The largest entry <= target, like Kafka's OffsetIndexTest (TreeMap.floorEntry)."""
    i = bisect.bisect_right([o for o, _ in entries], target) - 1
    return entries[i] if i >= 0 else (BASE, 0)


def test_random_lookups_agree_with_bisect_reference(tmp_path, index):
    rng = random.Random(1234)
    entries = random_entries(rng, 30)
    for offset, position in entries:
        index.append(offset, position)
    for target in [rng.randrange(0, BASE + 11_000) for _ in range(1000)] + [o for o, _ in entries]:
        assert index.lookup(target) == reference_lookup(entries, target)
    # Reopened from disk, it answers the same.
    index.flush()
    reopened = OffsetIndex(index.path, BASE)
    reopened.sanity_check()
    for target in range(BASE - 5, BASE + 10_005, 97):
        assert reopened.lookup(target) == reference_lookup(entries, target)
    reopened.close()


def test_empty_index_returns_base(index):
    assert index.lookup(BASE + 100) == (BASE, 0)
    assert index.entries == 0 and index.last_offset == BASE


def test_append_must_increase(index):
    index.append(BASE + 10, 100)
    with pytest.raises(ValueError):
        index.append(BASE + 10, 200)
    with pytest.raises(ValueError):
        index.append(BASE + 11, 100)


def test_file_layout_is_8_byte_big_endian_entries(index):
    index.append(BASE + 3, 4096)
    raw = index.path.read_bytes()
    assert raw == (3).to_bytes(4, "big") + (4096).to_bytes(4, "big")


def test_truncate_to_drops_entries_at_or_above(index):
    for i in range(1, 6):
        index.append(BASE + i * 10, i * 100)
    index.truncate_to(BASE + 30)
    assert index.entries == 2 and index.last_offset == BASE + 20
    assert index.lookup(BASE + 1000) == (BASE + 20, 200)
    assert index.path.stat().st_size == 16
    index.truncate_to(BASE + 25)  # between entries: nothing more to drop
    assert index.entries == 2
    index.reset()
    assert index.entries == 0 and index.path.stat().st_size == 0


def test_is_full(index):
    for i in range(30):
        assert not index.is_full
        index.append(BASE + i, i * 10)
    assert index.is_full


def test_sanity_check_rejects_bad_sizes_and_positions(tmp_path, index):
    index.append(BASE + 1, 500)
    index.sanity_check(log_size=1000)
    with pytest.raises(CorruptIndexError):
        index.sanity_check(log_size=400)  # points past the end of the log
    bad = tmp_path / "bad.index"
    bad.write_bytes(b"\x00" * 12)
    with pytest.raises(CorruptIndexError):
        OffsetIndex(bad, BASE).sanity_check()


def test_full_load_rejects_non_increasing_offsets(tmp_path):
    path = tmp_path / "x.index"
    entry = lambda o, p: o.to_bytes(4, "big") + p.to_bytes(4, "big")  # noqa: E731
    path.write_bytes(entry(1, 10) + entry(9, 90) + entry(5, 50) + entry(10, 100))
    index = OffsetIndex(path, 0)
    index.sanity_check()  # first and last entries look fine ...
    with pytest.raises(CorruptIndexError):
        index.lookup(5)   # ... but loading every entry finds the disorder
    index.close()
