"""Partition and replica state machines, with the states and legal moves of Kafka's controller.

The states are derived from the metadata image and the set of live brokers, so they can
never disagree with what the controller has written; `check_partition_move` and
`check_replica_move` reject a change that skips a legal path (the controller calls them on
every partition record it is about to write, and refuses an illegal one as a bug).

Partition: NonExistent -> New -> Online <-> Offline -> NonExistent
Replica:   NonExistent -> New -> Online <-> Offline -> DeletionStarted -> DeletionSuccessful
           -> NonExistent, and DeletionStarted -> DeletionIneligible -> Offline (a stopped
           replica's files are removed when it starts again)
"""
from __future__ import annotations

import enum

from engine.cluster.metadata import PartitionState as PartitionRecord


class PartitionState(enum.Enum):
    NON_EXISTENT = "NonExistentPartition"
    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"


class ReplicaState(enum.Enum):
    NON_EXISTENT = "NonExistentReplica"
    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    DELETION_STARTED = "ReplicaDeletionStarted"
    DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
    DELETION_INELIGIBLE = "ReplicaDeletionIneligible"


_PARTITION_MOVES = {
    PartitionState.NON_EXISTENT: {PartitionState.NEW},
    PartitionState.NEW: {PartitionState.ONLINE, PartitionState.OFFLINE, PartitionState.NON_EXISTENT},
    PartitionState.ONLINE: {PartitionState.ONLINE, PartitionState.OFFLINE, PartitionState.NON_EXISTENT},
    PartitionState.OFFLINE: {PartitionState.ONLINE, PartitionState.OFFLINE, PartitionState.NON_EXISTENT},
}

_REPLICA_MOVES = {
    ReplicaState.NON_EXISTENT: {ReplicaState.NEW},
    ReplicaState.NEW: {ReplicaState.ONLINE, ReplicaState.OFFLINE, ReplicaState.DELETION_STARTED},
    ReplicaState.ONLINE: {ReplicaState.ONLINE, ReplicaState.OFFLINE, ReplicaState.DELETION_STARTED},
    ReplicaState.OFFLINE: {ReplicaState.ONLINE, ReplicaState.OFFLINE, ReplicaState.DELETION_STARTED},
    ReplicaState.DELETION_STARTED: {ReplicaState.DELETION_SUCCESSFUL, ReplicaState.DELETION_INELIGIBLE},
    ReplicaState.DELETION_SUCCESSFUL: {ReplicaState.NON_EXISTENT},
    ReplicaState.DELETION_INELIGIBLE: {ReplicaState.OFFLINE},
}


class IllegalStateChange(RuntimeError):
    """A metadata change that no legal path of the state machine allows: a controller bug."""


def partition_state(record: PartitionRecord | None, live: set[int]) -> PartitionState:
    if record is None:
        return PartitionState.NON_EXISTENT
    return PartitionState.ONLINE if record.leader in live else PartitionState.OFFLINE


def replica_state(record: PartitionRecord | None, replica: int, live: set[int]) -> ReplicaState:
    if record is None or replica not in record.replicas:
        return ReplicaState.NON_EXISTENT
    return ReplicaState.ONLINE if replica in live else ReplicaState.OFFLINE


def check_partition_move(before: PartitionState, after: PartitionState) -> None:
    if after not in _PARTITION_MOVES.get(before, set()):
        raise IllegalStateChange(f"illegal partition state change {before.value} -> {after.value}")


def check_replica_move(before: ReplicaState, after: ReplicaState) -> None:
    if after not in _REPLICA_MOVES.get(before, set()):
        raise IllegalStateChange(f"illegal replica state change {before.value} -> {after.value}")


def replica_path(before: ReplicaState, after: ReplicaState) -> list[ReplicaState]:
    """The legal states from `before` to `after` (inclusive of `after`), e.g. a replica removed by
    a reassignment goes Online -> DeletionStarted -> DeletionSuccessful -> NonExistent."""
    if after in _REPLICA_MOVES.get(before, set()):
        return [after]
    if after is ReplicaState.NON_EXISTENT and before in (ReplicaState.ONLINE, ReplicaState.OFFLINE, ReplicaState.NEW):
        return [ReplicaState.DELETION_STARTED, ReplicaState.DELETION_SUCCESSFUL, ReplicaState.NON_EXISTENT]
    if before is ReplicaState.NON_EXISTENT and after in (ReplicaState.ONLINE, ReplicaState.OFFLINE):
        return [ReplicaState.NEW, after]
    raise IllegalStateChange(f"no legal path {before.value} -> {after.value}")


def partition_path(before: PartitionState, after: PartitionState) -> list[PartitionState]:
    if before is PartitionState.NON_EXISTENT and after in (PartitionState.ONLINE, PartitionState.OFFLINE):
        return [PartitionState.NEW, after]
    check_partition_move(before, after)
    return [after]


Snapshot = dict[tuple[str, int], tuple[PartitionState, dict[int, ReplicaState]]]


def snapshot(image, keys: set[tuple[str, int]], live: set[int], replicas_of: dict) -> Snapshot:
    """States of the given (topic id, partition) keys; `replicas_of` names every replica to track."""
    out = {}
    for key in keys:
        topic = image.topics_by_id.get(key[0])
        record = topic.partitions.get(key[1]) if topic else None
        out[key] = (partition_state(record, live),
                    {r: replica_state(record, r, live) for r in replicas_of.get(key, ())})
    return out


def check_changes(before: Snapshot, after: Snapshot) -> list[str]:
    """Validate every partition and replica move between two snapshots; describe each move."""
    moves = []
    for key, (old_partition, old_replicas) in before.items():
        new_partition, new_replicas = after[key]
        if new_partition is not old_partition:
            path = partition_path(old_partition, new_partition)
            moves.append(f"{key}: {' -> '.join(s.value for s in [old_partition, *path])}")
        for replica, old in old_replicas.items():
            new = new_replicas[replica]
            if new is not old:
                path = replica_path(old, new)
                moves.append(f"{key} replica {replica}: {' -> '.join(s.value for s in [old, *path])}")
    return moves
