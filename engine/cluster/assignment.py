"""Replica assignment, as Kafka's rack-unaware `AdminUtils.assignReplicasToBrokers`.

Leaders are spread round-robin from a random start broker; each further replica is shifted
by an amount that changes every full round, so followers spread too. The first replica of
each list is the partition's preferred leader.
"""
from __future__ import annotations

import random


def assign_replicas(broker_ids: list[int], num_partitions: int, replication_factor: int, *,
                    start_partition: int = 0, rng: random.Random | None = None) -> dict[int, list[int]]:
    brokers = sorted(broker_ids)
    count = len(brokers)
    if replication_factor < 1 or replication_factor > count:
        raise ValueError(f"Replication factor: {replication_factor} larger than available brokers: {count}.")
    rng = rng or random.Random()
    start_index = rng.randrange(count)
    shift = rng.randrange(count)
    assignment = {}
    for partition in range(start_partition, start_partition + num_partitions):
        if partition > 0 and partition % count == 0:
            shift += 1
        first = (partition + start_index) % count
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (count - 1)) % count])
        assignment[partition] = replicas
    return assignment
