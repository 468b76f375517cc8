import bisect
import random

import pytest

from engine.storage.errors import CorruptIndexError
from engine.storage.time_index import TimeIndex

BASE = 1000


@pytest.fixture
def index(tmp_path):
    idx = TimeIndex(tmp_path / "00000000000000001000.timeindex", BASE)
    yield idx
    idx.close()


def reference_lookup(entries, target):
    i = bisect.bisect_right([t for t, _ in entries], target) - 1
    return entries[i] if i >= 0 else (-1, BASE)


def test_random_lookups_agree_with_bisect_reference(index):
    rng = random.Random(99)
    timestamps = sorted(rng.sample(range(10_000, 1_000_000), 200))
    offsets = sorted(rng.sample(range(BASE, BASE + 100_000), 200))
    entries = list(zip(timestamps, offsets))
    for ts, offset in entries:
        assert index.maybe_append(ts, offset)
    for target in [rng.randrange(0, 1_100_000) for _ in range(2000)] + timestamps:
        assert index.lookup(target) == reference_lookup(entries, target)
    reopened = TimeIndex(index.path, BASE)
    reopened.sanity_check()
    assert reopened.last_entry() == entries[-1]
    for target in range(0, 1_100_000, 7919):
        assert reopened.lookup(target) == reference_lookup(entries, target)
    reopened.close()


def test_maybe_append_only_grows_timestamps(index):
    assert index.maybe_append(100, BASE + 1)
    assert not index.maybe_append(100, BASE + 2)
    assert not index.maybe_append(50, BASE + 3)
    assert index.maybe_append(101, BASE + 3)
    assert index.entries == 2
    assert index.path.read_bytes()[:12] == (100).to_bytes(8, "big") + (1).to_bytes(4, "big")


def test_lookup_below_first_entry(index):
    index.maybe_append(100, BASE + 5)
    assert index.lookup(99) == (-1, BASE)
    assert index.lookup(100) == (100, BASE + 5)


def test_truncate_to_drops_entries_at_or_above_offset(index):
    for i in range(5):
        index.maybe_append(100 + i, BASE + i * 10)
    index.truncate_to(BASE + 25)
    assert index.entries == 3
    assert index.last_entry() == (102, BASE + 20)
    assert index.path.stat().st_size == 36


def test_sanity_check(tmp_path, index):
    index.maybe_append(100, BASE + 5)
    index.sanity_check(next_offset=BASE + 6)
    with pytest.raises(CorruptIndexError):
        index.sanity_check(next_offset=BASE + 5)  # entry beyond the segment's end
    bad = tmp_path / "bad.timeindex"
    bad.write_bytes(b"\x01" * 13)
    with pytest.raises(CorruptIndexError):
        TimeIndex(bad, BASE).sanity_check()
