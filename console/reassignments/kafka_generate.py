"""Kafka's own `kafka-reassign-partitions.sh --generate`, for comparison with our planner.

The tool asks `AdminUtils.assignReplicasToBrokers` (rack-unaware form) for a fresh placement
of each topic over the chosen brokers, as if the topic were created now
(kafka_rules.assignment, the rule the engine's controller follows too); the start broker and
the first shift are random for each topic. Current placement plays no part, so nearly every
partition moves.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence

from console.reassignments.planner import Key, Placement
from kafka_rules.assignment import assign_replicas_to_brokers


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
