"""Kafka's rack-unaware replica assignment, against the table in AdminUtils' own comment."""
import random

import pytest

from engine.cluster.assignment import assign_replicas
from kafka_rules.assignment import assign_replicas_to_brokers

# Five brokers, ten partitions, three replicas, start broker 0, first shift 0: partition p's
# replicas as AdminUtils.assignReplicasToBrokers documents them.
KAFKAS_TABLE = [(0, 1, 2), (1, 2, 3), (2, 3, 4), (3, 4, 0), (4, 0, 1),
                (0, 2, 3), (1, 3, 4), (2, 4, 0), (3, 0, 1), (4, 1, 2)]


def test_the_rule_gives_kafkas_table():
    assert assign_replicas_to_brokers(partitions=10, replication_factor=3, brokers=[0, 1, 2, 3, 4],
                                      start_index=0, replica_shift=0) == KAFKAS_TABLE


def test_new_partitions_continue_the_table():
    assert assign_replicas_to_brokers(partitions=5, replication_factor=3, brokers=[0, 1, 2, 3, 4],
                                      start_index=0, replica_shift=0, start_partition=5) == KAFKAS_TABLE[5:]


def test_a_replication_factor_above_the_brokers_is_refused():
    with pytest.raises(ValueError, match="larger than available brokers: 2"):
        assign_replicas_to_brokers(partitions=1, replication_factor=3, brokers=[0, 1], start_index=0,
                                   replica_shift=0)


def test_the_controller_follows_the_rule_over_sorted_brokers():
    drawn = random.Random(5)
    start, shift = drawn.randrange(5), drawn.randrange(5)
    expected = assign_replicas_to_brokers(partitions=7, replication_factor=2, brokers=[10, 11, 12, 13, 14],
                                          start_index=start, replica_shift=shift, start_partition=3)
    assert assign_replicas([14, 12, 10, 13, 11], 7, 2, start_partition=3, rng=random.Random(5)) == {
        3 + i: list(r) for i, r in enumerate(expected)}


@pytest.mark.parametrize("brokers, partitions, start", [(3, 2500, 0), (7, 3001, 4), (5, 2001, 5), (1, 1200, 0)])
def test_the_assignment_in_steps_places_as_the_rule_over_the_whole_range(brokers, partitions, start):
    """The request path places a big topic's partitions a chunk at a step (assignment_steps):
    each chunk starts with the shift the rule reached, so the placement is the rule's."""
    ids = list(range(10, 10 + brokers))
    rf = min(3, brokers)
    drawn = random.Random(7)
    start_index, shift = drawn.randrange(brokers), drawn.randrange(brokers)
    whole = assign_replicas_to_brokers(partitions=partitions, replication_factor=rf, brokers=ids,
                                       start_index=start_index, replica_shift=shift, start_partition=start)
    assert assign_replicas(ids, partitions, rf, start_partition=start, rng=random.Random(7)) == {
        start + i: list(r) for i, r in enumerate(whole)}
