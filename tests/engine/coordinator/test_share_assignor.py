"""The simple assignor of share groups: every partition of a subscribed topic is assigned,
members share partitions when they outnumber them, counts stay balanced, and a join or leave
moves few members (engine/coordinator/share_assignor.py)."""
from __future__ import annotations

import random
from collections import Counter

from engine.coordinator.share_assignor import assign


def members(n: int, topics=("t",)) -> dict[str, frozenset[str]]:
    return {f"m{i:02d}": frozenset(topics) for i in range(n)}


def test_more_partitions_than_members_gives_each_partition_one_member_evenly():
    result = assign(members(3), {"t": 10}, {})
    owners = Counter(tp for tps in result.values() for tp in tps)
    assert set(owners) == {("t", p) for p in range(10)} and set(owners.values()) == {1}
    assert sorted(len(tps) for tps in result.values()) == [3, 3, 4]


def test_more_members_than_partitions_shares_each_partition_evenly():
    result = assign(members(4), {"t": 1}, {})
    assert all(tps == frozenset({("t", 0)}) for tps in result.values())
    result = assign(members(7), {"t": 3}, {})
    assert all(len(tps) == 1 for tps in result.values())
    assert sorted(Counter(tp for tps in result.values() for tp in tps).values()) == [2, 2, 3]


def test_a_join_or_a_leave_keeps_the_others_where_they_were():
    rng = random.Random(7)
    for _ in range(200):
        n, partitions = rng.randrange(1, 12), rng.randrange(1, 9)
        before = assign(members(n), {"t": partitions}, {})
        grown = members(n + 1)
        after = assign(grown, {"t": partitions}, before)
        moved = sum(1 for m in before if before[m] != after[m])
        # At most the partitions a balanced newcomer takes from the others move.
        assert moved <= max(1, partitions // (n + 1) + 1)
        assert set().union(*after.values()) == {("t", p) for p in range(partitions)}


def test_members_only_get_topics_they_subscribe_to():
    subscriptions = {"a": frozenset({"x"}), "b": frozenset({"x", "y"})}
    result = assign(subscriptions, {"x": 2, "y": 2}, {})
    assert {t for t, _ in result["a"]} == {"x"}
    assert {("y", 0), ("y", 1)} <= result["b"]
