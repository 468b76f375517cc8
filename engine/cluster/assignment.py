"""Replica assignment for new topics and partitions: Kafka's rack-unaware rule
(kafka_rules.assignment) over the live brokers sorted by id, from a random start broker and
first shift, as Kafka's controller draws them."""
from __future__ import annotations

import random

import kafka.errors as Errors

from engine.errors import ApiError
from kafka_rules.assignment import assign_replicas_to_brokers


def assign_replicas(broker_ids: list[int], num_partitions: int, replication_factor: int, *,
                    start_partition: int = 0, rng: random.Random | None = None) -> dict[int, list[int]]:
    brokers = sorted(broker_ids)
    rng = rng or random.Random()
    # With no broker there is nothing to draw; the rule refuses the replication factor.
    start_index, shift = (rng.randrange(len(brokers)), rng.randrange(len(brokers))) if brokers else (0, 0)
    placement = assign_replicas_to_brokers(partitions=num_partitions, replication_factor=replication_factor,
                                           brokers=brokers, start_index=start_index, replica_shift=shift,
                                           start_partition=start_partition)
    return {start_partition + i: list(replicas) for i, replicas in enumerate(placement)}


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
