"""The share coordinator's state arithmetic (engine/share/state.py), checked against a plain
offset-by-offset model with random batches, as Kafka's OffsetIndexTest checks an index
against a sorted map; and the records of __share_group_state, encoded and read back."""
from __future__ import annotations

import random
import uuid

from engine.share import state_records as SR
from engine.share.state import ACKNOWLEDGED, ARCHIVED, AVAILABLE, ShareState, StateBatch, combine, ranges


def model(batches: list[StateBatch]) -> dict[int, tuple[int, int]]:
    out: dict[int, tuple[int, int]] = {}
    for b in batches:
        for offset in range(b.first_offset, b.last_offset + 1):
            out[offset] = (b.delivery_state, b.delivery_count)
    return out


def random_batches(rng: random.Random, count: int, span: int) -> list[StateBatch]:
    out = []
    for _ in range(count):
        first = rng.randrange(span)
        out.append(StateBatch(first, first + rng.randrange(8), rng.choice((AVAILABLE, ACKNOWLEDGED, ARCHIVED)),
                              rng.randrange(1, 4)))
    return out


def test_combine_lays_newer_batches_over_older_ones_offset_by_offset():
    rng = random.Random(932)
    for _ in range(500):
        older = combine([], random_batches(rng, rng.randrange(6), 60), 0)      # a state: no overlaps
        newer = random_batches(rng, rng.randrange(1, 4), 60)                   # a write's batches may overlap
        start = rng.randrange(30)
        merged = combine(older, newer, start)
        expected = {o: v for o, v in {**model(older), **model(newer)}.items() if o >= start}
        assert model(merged) == expected
        # Sorted, not overlapping, and neighbours with the same state and count are joined.
        for a, b in zip(merged, merged[1:]):
            assert a.last_offset < b.first_offset
            assert not (a.last_offset + 1 == b.first_offset and
                        (a.delivery_state, a.delivery_count) == (b.delivery_state, b.delivery_count))


def test_ranges_makes_the_fewest_batches():
    states = [(5, ACKNOWLEDGED, 1), (6, ACKNOWLEDGED, 1), (7, ARCHIVED, 1), (9, ARCHIVED, 1), (10, ARCHIVED, 1)]
    assert ranges(states) == [StateBatch(5, 6, ACKNOWLEDGED, 1), StateBatch(7, 7, ARCHIVED, 1),
                              StateBatch(9, 10, ARCHIVED, 1)]


def test_delivery_complete_count_is_what_is_done_after_the_start():
    state = ShareState(10, 0, 0, [StateBatch(10, 11, AVAILABLE, 1), StateBatch(12, 14, ACKNOWLEDGED, 1),
                                  StateBatch(15, 15, ARCHIVED, 5)])
    assert state.delivery_complete_count() == 4
    assert state.counts() == {AVAILABLE: 2, ACKNOWLEDGED: 3, ARCHIVED: 1}


def test_snapshot_and_update_records_read_back():
    key = ("group", uuid.uuid4(), 3)
    state = ShareState(7, 2, 4, [StateBatch(7, 9, ARCHIVED, 5), StateBatch(11, 11, ACKNOWLEDGED, 1)])
    snapshot = SR.decode(SR.snapshot_key(key), SR.snapshot_value(6, state))
    assert (snapshot.kind, snapshot.key, snapshot.snapshot_epoch) == (SR.SNAPSHOT, key, 6)
    assert snapshot.state == state
    update = SR.decode(SR.update_key(key), SR.update_value(6, 4, -1, [StateBatch(8, 8, AVAILABLE, 2)]))
    assert (update.kind, update.state.start_offset, update.state.batches) == (SR.UPDATE, -1,
                                                                             [StateBatch(8, 8, AVAILABLE, 2)])
    tombstone = SR.decode(SR.snapshot_key(key), None)
    assert tombstone.state is None and tombstone.key == key
    # Kafka's key layout: int16 record type, then group id, topic id and partition.
    assert SR.snapshot_key(key)[:2] == b"\x00\x00" and SR.update_key(key)[:2] == b"\x00\x01"
