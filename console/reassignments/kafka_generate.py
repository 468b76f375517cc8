"""Kafka's own `kafka-reassign-partitions.sh --generate`, for comparison with our planner.

The tool asks `AdminUtils.assignReplicasToBrokers` (rack-unaware form) for a fresh placement
of each topic over the chosen brokers, as if the topic were created now: the first replica
of partition p goes to broker (p + start) mod n, the others follow it at a shift that grows
by one every n partitions; `start` and the first shift are random for each topic. Current
placement plays no part, so nearly every partition moves. Written from the algorithm's
description, not copied; the rack-aware variant is not reproduced.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence

from console.reassignments.planner import Key, Placement


def assign_replicas_to_brokers(*, partitions: int, replication_factor: int, brokers: Sequence[int],
                               start_index: int, replica_shift: int) -> list[tuple[int, ...]]:
    """Replica lists of partitions 0..partitions-1 (Kafka's rack-unaware assignment)."""
    n = len(brokers)
    if replication_factor > n:
        raise ValueError(f"replication factor {replication_factor} is larger than {n} brokers")
    placement = []
    shift = replica_shift
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        placement.append(tuple(replicas))
    return placement


def kafka_generate(placements: Iterable[Placement], *, brokers: Sequence[int],
                   rng: random.Random) -> dict[Key, tuple[int, ...]]:
    """What `--generate --broker-list <brokers>` proposes for the topics of `placements`."""
    by_topic: dict[str, list[Placement]] = defaultdict(list)
    for p in placements:
        by_topic[p.topic].append(p)
    brokers = sorted(brokers)
    proposed: dict[Key, tuple[int, ...]] = {}
    for topic, parts in by_topic.items():
        parts.sort(key=lambda p: p.partition)
        replication_factor = len(parts[0].replicas)
        assignment = assign_replicas_to_brokers(partitions=len(parts), replication_factor=replication_factor,
                                                brokers=brokers, start_index=rng.randrange(len(brokers)),
                                                replica_shift=rng.randrange(len(brokers)))
        for p, replicas in zip(parts, assignment):
            proposed[p.key] = replicas
    return proposed
