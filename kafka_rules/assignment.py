"""Replica assignment, as Kafka's rack-unaware `AdminUtils.assignReplicasToBrokers`.

Leaders are spread round-robin from a start broker; each further replica is shifted by an
amount that grows by one every full round (every len(brokers) partitions), so followers
spread too. The first replica of each list is the partition's preferred leader. Kafka draws
the start broker and the first shift at random for each call; callers pass them in. Written
from the algorithm's description; the rack-aware variant is not reproduced.
"""
from __future__ import annotations

from collections.abc import Sequence


def assign_replicas_to_brokers(*, partitions: int, replication_factor: int, brokers: Sequence[int],
                               start_index: int, replica_shift: int,
                               start_partition: int = 0) -> list[tuple[int, ...]]:
    """Replica lists of partitions start_partition .. start_partition + partitions - 1, over
    `brokers` in the order given (Kafka sorts them by id first)."""
    n = len(brokers)
    if replication_factor < 1 or replication_factor > n:
        raise ValueError(f"Replication factor: {replication_factor} larger than available brokers: {n}.")
    placement = []
    shift = replica_shift
    for p in range(start_partition, start_partition + partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        placement.append(tuple(replicas))
    return placement
