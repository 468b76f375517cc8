"""Replica assignment for new topics and partitions: Kafka's rack-unaware rule
(kafka_rules.assignment) over the live brokers sorted by id, from a random start broker and
first shift, as Kafka's controller draws them."""
from __future__ import annotations

import random

import kafka.errors as Errors

from engine.cluster import slices
from engine.errors import ApiError
from kafka_rules.assignment import assign_replicas_to_brokers


# Partitions placed between two steps of assignment_steps (about 1.5 ms of work).
ASSIGNMENT_CHUNK = 1000


def assign_replicas(broker_ids: list[int], num_partitions: int, replication_factor: int, *,
                    start_partition: int = 0, rng: random.Random | None = None) -> dict[int, list[int]]:
    return slices.run_steps(assignment_steps(broker_ids, num_partitions, replication_factor,
                                             start_partition=start_partition, rng=rng))


def assignment_steps(broker_ids: list[int], num_partitions: int, replication_factor: int, *,
                     start_partition: int = 0, rng: random.Random | None = None
                     ) -> slices.Steps[dict[int, list[int]]]:
    """assign_replicas as steps of ASSIGNMENT_CHUNK partitions, for the request path to run in
    slices (a topic may have a hundred thousand partitions); the same placement as the rule
    over the whole range, each chunk starting with the shift the rule would have reached."""
    brokers = sorted(broker_ids)
    rng = rng or random.Random()
    # With no broker there is nothing to draw; the rule refuses the replication factor.
    start_index, shift = (rng.randrange(len(brokers)), rng.randrange(len(brokers))) if brokers else (0, 0)
    assignment: dict[int, list[int]] = {}
    end = start_partition + num_partitions
    for chunk in range(start_partition, end, ASSIGNMENT_CHUNK):
        placement = assign_replicas_to_brokers(
            partitions=min(ASSIGNMENT_CHUNK, end - chunk), replication_factor=replication_factor, brokers=brokers,
            start_index=start_index, replica_shift=shift + _rounds_between(start_partition, chunk, len(brokers)),
            start_partition=chunk)
        assignment.update({chunk + i: list(replicas) for i, replicas in enumerate(placement)})
        yield
    return assignment


def _rounds_between(first: int, chunk: int, brokers: int) -> int:
    """How many times the rule raised the shift on its way from partition `first` to `chunk`:
    once at each partition p > 0 with p % brokers == 0, for p in [first, chunk)."""
    low = max(first, 1)
    return 0 if chunk <= low else (chunk - 1) // brokers - (low - 1) // brokers


def check_manual_replicas(replicas: list[int], registered) -> None:
    """One partition's replicas as a client gave them (CreateTopics, CreatePartitions,
    AlterPartitionReassignments), checked as KRaft's validateManualPartitionAssignment: not
    empty, then in id order each broker registered and named once; INVALID_REPLICA_ASSIGNMENT
    with Kafka's message for the first rule broken."""
    if not replicas:
        raise ApiError(Errors.InvalidReplicationAssignmentError,
                       "The manual partition assignment includes an empty replica list.")
    previous = None
    for broker in sorted(replicas):
        if broker not in registered:
            raise ApiError(Errors.InvalidReplicationAssignmentError,
                           f"The manual partition assignment includes broker {broker}, but no such broker is "
                           "registered.")
        if broker == previous:
            raise ApiError(Errors.InvalidReplicationAssignmentError,
                           f"The manual partition assignment includes the broker {broker} more than once.")
        previous = broker
