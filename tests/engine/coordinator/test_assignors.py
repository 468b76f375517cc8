"""The consumer group protocol's server-side assignors (engine/coordinator/assignors.py)."""
import random
from collections import Counter

from engine.coordinator.assignors import RANGE, UNIFORM, assign, assignor_name


def partitions_of(assignment):
    return Counter(tp for tps in assignment.values() for tp in tps)


def test_uniform_gives_every_partition_once_and_balances():
    subscriptions = {f"m{i}": frozenset({"a", "b"}) for i in range(3)}
    result = assign(UNIFORM, subscriptions, {"a": 4, "b": 3}, {})
    assert partitions_of(result) == Counter({(t, p): 1 for t, n in (("a", 4), ("b", 3)) for p in range(n)})
    assert sorted(len(tps) for tps in result.values()) == [2, 2, 3]


def test_uniform_is_sticky_when_a_member_joins_and_leaves():
    counts = {"t": 6}
    two = assign(UNIFORM, {"m1": frozenset({"t"}), "m2": frozenset({"t"})}, counts, {})
    three = assign(UNIFORM, {m: frozenset({"t"}) for m in ("m1", "m2", "m3")}, counts, two)
    assert all(len(tps) == 2 for tps in three.values())
    # Only the newcomer's two partitions moved; each old member kept two of its three.
    assert three["m1"] <= two["m1"] and three["m2"] <= two["m2"]
    back = assign(UNIFORM, {"m1": frozenset({"t"}), "m2": frozenset({"t"})}, counts, three)
    assert three["m1"] <= back["m1"] and three["m2"] <= back["m2"]
    assert partitions_of(back) == Counter({("t", p): 1 for p in range(6)})


def test_uniform_only_gives_members_their_topics():
    subscriptions = {"m1": frozenset({"a"}), "m2": frozenset({"a", "b"}), "m3": frozenset({"b"})}
    result = assign(UNIFORM, subscriptions, {"a": 5, "b": 1}, {})
    assert all(tp[0] in subscriptions[m] for m, tps in result.items() for tp in tps)
    assert partitions_of(result) == Counter({**{("a", p): 1 for p in range(5)}, ("b", 0): 1})
    assert sorted(len(tps) for tps in result.values()) == [1, 2, 3]   # m3 can only have b-0


def test_uniform_random_subscriptions_keep_every_partition_assigned_once():
    rng = random.Random(848)
    for _ in range(50):
        topics = {f"t{i}": rng.randint(1, 6) for i in range(rng.randint(1, 4))}
        subscriptions = {f"m{i}": frozenset(rng.sample(sorted(topics), rng.randint(1, len(topics))))
                         for i in range(rng.randint(2, 5))}
        previous = assign(UNIFORM, subscriptions, topics, {})
        subscriptions.pop(rng.choice(sorted(subscriptions)))
        result = assign(UNIFORM, subscriptions, topics, previous)
        subscribed = set().union(*subscriptions.values())
        assert partitions_of(result) == Counter({(t, p): 1 for t, n in topics.items() if t in subscribed
                                                 for p in range(n)})
        assert all(tp[0] in subscriptions[m] for m, owned in result.items() for tp in owned)


def test_range_gives_contiguous_ranges_per_topic_by_member_id():
    subscriptions = {"b": frozenset({"t"}), "a": frozenset({"t"}), "c": frozenset({"u"})}
    result = assign(RANGE, subscriptions, {"t": 5, "u": 2}, {})
    assert result == {"a": frozenset({("t", 0), ("t", 1), ("t", 2)}), "b": frozenset({("t", 3), ("t", 4)}),
                      "c": frozenset({("u", 0), ("u", 1)})}


def test_assignor_names_accept_kafka_class_names():
    assert assignor_name("org.apache.kafka.coordinator.group.assignor.RangeAssignor") == RANGE
    assert assignor_name(" uniform ") == UNIFORM
    assert assignor_name("sticky") is None
