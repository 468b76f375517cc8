"""The planner on hand-built snapshots: each scenario, each goal, and least movement."""
import random
from collections import Counter

import pytest

from console.errors import InvalidInput
from console.reassignments.kafka_generate import kafka_generate
from console.reassignments.plan_summary import summarize
from console.reassignments.planner import Placement, PlanGoals, plan_placement
from kafka_rules.assignment import assign_replicas_to_brokers


def snapshot(brokers, topics=4, partitions=30, rf=3, size=lambda t, p: 1000):
    """Balanced placements (Kafka's own assignment) over `brokers`."""
    out = []
    for t in range(topics):
        for p, replicas in enumerate(assign_replicas_to_brokers(partitions=partitions, replication_factor=rf,
                                                                brokers=brokers, start_index=t, replica_shift=t)):
            out.append(Placement(f"topic{t}", p, replicas, size(t, p)))
    return out


def counts(target, index=None):
    c = Counter()
    for replicas in target.values():
        for b in (replicas if index is None else replicas[index:index + 1]):
            c[b] += 1
    return c


def within_one(counter, brokers):
    values = [counter[b] for b in brokers]
    return max(values) - min(values) <= 1


def assert_valid(target, rf=None):
    for key, replicas in target.items():
        assert len(set(replicas)) == len(replicas), key
        if rf:
            assert len(replicas) == rf, key


def test_a_balanced_cluster_gives_a_noop_plan():
    placements = snapshot([1, 2, 3, 4, 5, 6])
    target = plan_placement(placements, goals=PlanGoals(brokers={b: None for b in range(1, 7)}))
    assert summarize(placements, target).is_noop


def test_adding_a_seventh_broker_moves_about_a_seventh_and_balances_replicas_and_leaders():
    placements = snapshot([1, 2, 3, 4, 5, 6], topics=6, partitions=70)
    brokers = list(range(1, 8))
    target = plan_placement(placements, goals=PlanGoals(brokers={b: None for b in brokers}))
    summary = summarize(placements, target)
    total = len(placements) * 3
    assert_valid(target, rf=3)
    assert within_one(counts(target), brokers)
    assert within_one(counts(target, 0), brokers)
    # The minimum is the new broker's share: ceil(total / 7) replicas must land on it.
    assert summary.replica_moves <= total // 7 + 1
    assert counts(target)[7] >= total // 7
    kafka = summarize(placements, kafka_generate(placements, brokers=brokers, rng=random.Random(1)))
    # At six brokers a re-deal keeps ~half of the replicas in place by chance: Kafka moves ~3.5x more.
    assert summary.replica_moves * 3 < kafka.replica_moves


def test_decommission_moves_only_the_leaving_brokers_replicas():
    placements = snapshot([1, 2, 3, 4, 5, 6])
    on_six = sum(6 in p.replicas for p in placements)
    target = plan_placement(placements, goals=PlanGoals(brokers={b: None for b in range(1, 7)},
                                                        exclude=frozenset({6})))
    assert all(6 not in r for r in target.values())
    assert within_one(counts(target), range(1, 6))
    assert within_one(counts(target, 0), range(1, 6))
    assert summarize(placements, target).replica_moves == on_six


def test_restrict_a_topic_to_chosen_brokers_leaves_other_topics_alone():
    placements = snapshot([1, 2, 3, 4, 5, 6], topics=2)
    mine = [p for p in placements if p.topic == "topic0"]
    goals = PlanGoals(brokers={b: None for b in range(1, 7)}, topic_brokers={"topic0": frozenset({1, 2, 3})})
    target = plan_placement(mine, goals=goals)
    assert set(target) == {p.key for p in mine}
    assert all(set(r) == {1, 2, 3} for r in target.values())
    assert within_one(counts(target, 0), [1, 2, 3])


def test_change_replication_factor_up_and_down_keeps_the_preferred_leader():
    placements = snapshot([1, 2, 3, 4], topics=1, partitions=12, rf=2)
    brokers = {b: None for b in range(1, 5)}
    up = plan_placement(placements, goals=PlanGoals(brokers=brokers, replication_factor={"topic0": 3},
                                                    balance_leaders=False))
    assert_valid(up, rf=3)
    assert within_one(counts(up), brokers)
    assert all(up[p.key][0] == p.replicas[0] for p in placements)
    # Existing replicas stay put, but for the odd one the count goal moves after the additions.
    assert sum(not set(p.replicas) <= set(up[p.key]) for p in placements) <= 1
    down = plan_placement(placements, goals=PlanGoals(brokers=brokers, replication_factor={"topic0": 1}))
    assert_valid(down, rf=1)
    assert within_one(counts(down), brokers)


def test_replication_factor_larger_than_the_allowed_brokers_is_refused():
    placements = snapshot([1, 2, 3], topics=1, partitions=3)
    with pytest.raises(InvalidInput, match="replication factor 3"):
        plan_placement(placements, goals=PlanGoals(brokers={1: None, 2: None, 3: None},
                                                   topic_brokers={"topic0": frozenset({1, 2})}))


def test_racks_come_first_then_counts():
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    # Every partition on racks a, a, b: two replicas share rack a.
    placements = [Placement("t", p, (1, 2, 3) if p % 2 else (2, 1, 4), 100) for p in range(24)]
    target = plan_placement(placements, goals=PlanGoals(brokers=racks))
    assert all(len({racks[b] for b in r}) == 3 for r in target.values())
    assert within_one(counts(target), racks)
    assert within_one(counts(target, 0), racks)


def test_racks_are_kept_while_balancing_a_new_broker_in():
    racks = {1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c", 7: "a"}
    placements = [Placement("t", p, tuple(r), 10) for p, r in enumerate(
        assign_replicas_to_brokers(partitions=60, replication_factor=3, brokers=[1, 2, 3], start_index=0,
                                   replica_shift=0))]
    target = plan_placement(placements, goals=PlanGoals(brokers=racks))
    assert all(len({racks[b] for b in r}) == 3 for r in target.values())
    # Racks a has three brokers, b and c two: each rack holds a third of the replicas, so the
    # rack goal (first) keeps the count goal from reaching +-1 across racks; within a rack it does.
    c = counts(target)
    assert within_one(c, [1, 4, 7]) and within_one(c, [2, 5]) and within_one(c, [3, 6])


def test_bytes_within_tolerance_after_counts_are_balanced():
    # Broker 1 holds the big partitions: counts are even, bytes are not.
    placements = [Placement("t", p, (1 + p % 3, 1 + (p + 1) % 3), 10_000 if p % 3 == 0 else 100)
                  for p in range(60)] + [Placement("u", p, (4, 5), 100) for p in range(20)]
    brokers = {b: None for b in range(1, 6)}
    target = plan_placement(placements, goals=PlanGoals(brokers=brokers, bytes_tolerance=0.10))
    after = {b.broker: b for b in summarize(placements, target).brokers}
    mean = sum(b.bytes_after for b in after.values()) / 5
    assert all(abs(b.bytes_after - mean) <= 0.10 * mean for b in after.values()), after
    assert within_one(counts(target), brokers)


def test_kafka_generate_deals_each_topic_evenly_and_moves_almost_everything():
    placements = snapshot([1, 2, 3, 4, 5, 6], topics=3, partitions=42)
    brokers = list(range(1, 8))
    proposed = kafka_generate(placements, brokers=brokers, rng=random.Random(7))
    assert_valid(proposed, rf=3)
    assert within_one(counts(proposed, 0), brokers)
    assert summarize(placements, proposed).replica_moves > 0.5 * len(placements) * 3


def test_summary_counts_bytes_leaders_and_eta():
    placements = [Placement("t", 0, (1, 2), 1000), Placement("t", 1, (2, 1), 500)]
    target = {("t", 0): (3, 2), ("t", 1): (2, 1)}
    summary = summarize(placements, target, brokers=[1, 2, 3])
    (move,) = summary.moves
    assert (move.adding, move.removing, move.bytes_to_copy) == ((3,), (1,), 1000)
    assert summary.leadership_changes == 1 and summary.bytes_to_copy == 1000
    loads = {b.broker: b for b in summary.brokers}
    assert (loads[3].replicas_before, loads[3].replicas_after, loads[3].bytes_in) == (0, 1, 1000)
    assert (loads[1].leaders_before, loads[1].leaders_after, loads[1].bytes_out) == (1, 0, 1000)
    assert summary.eta_seconds(100) == 10
