"""Partition leadership, ISR and reassignment decisions, as Kafka's ReplicationControlManager.

Pure functions over the metadata image: each returns the partition records that a change
needs (or raises ApiError), and the controller writes them. Conventions, as in KRaft:
- the leader epoch rises only when the leader changes; the partition epoch on every change;
- the ISR is never emptied: when its last live member goes, the old member stays, so that
  broker can lead again (clean election) when it comes back;
- a reassignment keeps `replicas = target + removing`, with `adding` the new replicas; it
  completes when every target replica is in the ISR.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import kafka.errors as Errors

from engine.cluster import records as R
from engine.cluster.assignment import check_manual_replicas
from engine.cluster.metadata import MetadataImage, PartitionState, TopicState
from engine.errors import ApiError

PREFERRED, UNCLEAN = 0, 1


def change(topic: TopicState, state: PartitionState, *, leader: int | None = None, isr: list[int] | None = None,
           replicas: list[int] | None = None, adding: list[int] | None = None,
           removing: list[int] | None = None) -> dict | None:
    """The record moving `state` to the given values, or None if nothing would change."""
    leader = state.leader if leader is None else leader
    isr = state.isr if isr is None else isr
    replicas = state.replicas if replicas is None else replicas
    adding = state.adding_replicas if adding is None else adding
    removing = state.removing_replicas if removing is None else removing
    if (leader, isr, replicas, adding, removing) == (state.leader, state.isr, state.replicas,
                                                      state.adding_replicas, state.removing_replicas):
        return None
    leader_epoch = state.leader_epoch + 1 if leader != state.leader else state.leader_epoch
    return R.partition_record(topic.topic_id, state.partition, list(replicas), leader, leader_epoch, list(isr),
                              state.partition_epoch + 1, list(adding), list(removing))


def partitions_of(image: MetadataImage) -> Iterator[tuple[TopicState, PartitionState]]:
    for topic in image.topics.values():
        for state in topic.partitions.values():
            yield topic, state


def unclean_allowed(image: MetadataImage, topic: TopicState, broker_default: bool) -> bool:
    value = topic.configs.get("unclean.leader.election.enable", broker_default)
    return value is True or str(value).lower() == "true"


def choose_leader(state: PartitionState, isr: list[int], live: set[int], *, unclean: bool) -> tuple[int, list[int]]:
    """(leader, isr) after the current leader is gone: the first live ISR member in replica
    order; else, if unclean election is allowed, the first live replica (the ISR restarts with
    it alone); else no leader (-1) and the ISR kept as it was."""
    for replica in state.replicas:
        if replica in isr and replica in live:
            return replica, isr
    if unclean:
        for replica in state.replicas:
            if replica in live:
                return replica, [replica]
    return -1, isr or state.isr


def fence_records(image: MetadataImage, node_id: int, live: set[int], broker_unclean: bool, *,
                  keep_stranded: bool = False) -> list[dict]:
    """Move leadership and ISR membership away from a broker that stopped.

    With `keep_stranded` (the whole engine is stopping), a partition this broker leads whose
    leadership has nowhere to go (RF 1, or no other replica live and in sync) keeps its record,
    as the last broker to stop keeps all of its: marking it leaderless would serve no client,
    and cost a record (and a new leader epoch) now and an election at the next start, for
    each of tens of thousands of partitions."""
    out = []
    for topic, state in partitions_of(image):
        if node_id not in state.replicas:
            continue
        isr = [r for r in state.isr if r != node_id]
        leader = state.leader
        if leader == node_id or leader < 0:
            leader, isr = choose_leader(state, isr, live, unclean=unclean_allowed(image, topic, broker_unclean))
            if keep_stranded and leader < 0 and state.leader == node_id:
                continue
        record = change(topic, state, leader=leader, isr=isr or state.isr)
        if record:
            out.append(record)
    return out


def unfence_records(image: MetadataImage, node_id: int, live: set[int], broker_unclean: bool) -> list[dict]:
    """Give leaderless partitions a leader again now that `node_id` is back."""
    out = []
    for topic, state in partitions_of(image):
        if state.leader >= 0 or node_id not in state.replicas:
            continue
        leader, isr = choose_leader(state, state.isr, live, unclean=unclean_allowed(image, topic, broker_unclean))
        record = change(topic, state, leader=leader, isr=isr)
        if record:
            out.append(record)
    return out


@dataclass(frozen=True)
class ReplicaLog:
    """What one replica's log holds after recovery, as its broker reports it at start."""
    last_epoch: int            # the leader epoch of its last batch (-1: empty)
    log_end_offset: int
    checkpointed_hw: int       # the high watermark it last checkpointed (0: none)

    @property
    def lost_acknowledged_data(self) -> bool:
        """Recovery cut the log below what was known to be replicated: it lost data."""
        return self.log_end_offset < self.checkpointed_hw

    @property
    def length(self) -> tuple[int, int]:
        """Longest log first: the newest epoch, then the most offsets (a divergent tail of an
        older epoch is not "more")."""
        return self.last_epoch, self.log_end_offset


def longest_log_records(image: MetadataImage, reports: dict[int, dict[tuple[str, int], ReplicaLog]],
                        live: set[int]) -> list[dict]:
    """After a restart, let the ISR member with the longest log lead (the idea of KIP-966).

    `reports` maps each restarted broker to what its recovered logs hold. A leader whose
    recovery lost data (a damaged segment, a torn tail) would otherwise stay leader, and its
    followers would truncate to match it: the loss would spread to every replica. Instead
    the longest ISR log leads, and shorter members leave the ISR: they may lack acknowledged
    records, so they re-fetch as followers and rejoin only once they reach the new leader's
    epoch start (Partition.isr_to_expand), which covers everything acknowledged. On ties the
    leader stays, so a clean restart changes nothing."""
    empty = ReplicaLog(-1, 0, 0)   # a replica whose partition dir is gone holds nothing
    out = []
    for topic, state in partitions_of(image):
        key = (topic.name, state.partition)
        # Only replicas may lead: an ISR member that is not one (as a reassignment retargeted under
        # way could once leave in the journal) is no candidate.
        replicas = {r: reports[r].get(key, empty) for r in state.isr
                    if r in reports and r in live and r in state.replicas}
        if len(replicas) < 2:
            continue
        best = max(replicas, key=lambda r: (replicas[r].length, r == state.leader, -state.replicas.index(r)))
        leader = state.leader
        if leader not in replicas or replicas[leader].length < replicas[best].length:
            leader = best
        shorter = {r for r in replicas if replicas[r].length < replicas[best].length}
        record = change(topic, state, leader=leader, isr=[r for r in state.isr if r not in shorter])
        if record:
            out.append(record)
    return out


def stray_member_records(image: MetadataImage) -> list[dict]:
    """Records that take out of each ISR, and off each leadership, a broker that is not a
    replica of the partition. A reassignment retargeted while under way could once leave
    such a state in the journal; the controller mends it at start. A leader taken off
    leaves the partition leaderless until a replica in the ISR is live (unfence_records);
    an ISR of strays alone is left for an operator's unclean election."""
    out = []
    for topic, state in partitions_of(image):
        isr = [r for r in state.isr if r in state.replicas]
        if isr == state.isr and state.leader in (-1, *state.replicas):
            continue
        if not isr:
            continue
        record = change(topic, state, leader=state.leader if state.leader in isr else -1, isr=isr)
        if record:
            out.append(record)
    return out


def check_members(record: dict) -> None:
    """A partition record's leader, ISR and reassignment lists name only its replicas; raises
    ValueError otherwise (the controller never journals such a record)."""
    replicas = set(record["replicas"])
    if record["leader"] not in replicas | {-1}:
        raise ValueError(f"leader {record['leader']} is not a replica")
    for key in ("isr", "adding", "removing"):
        strays = [r for r in record.get(key, ()) if r not in replicas]
        if strays:
            raise ValueError(f"{key} {strays} are not replicas")


def alter_isr_record(topic: TopicState, state: PartitionState, *, leader_id: int, leader_epoch: int,
                     partition_epoch: int, isr: list[int], live: set[int]) -> dict | None:
    """Validate a leader's ISR proposal (Kafka's AlterPartition) and return its record."""
    if state.leader != leader_id or state.leader_epoch != leader_epoch:
        raise ApiError(Errors.FencedLeaderEpochError, f"leader {leader_id} epoch {leader_epoch} is stale")
    if state.partition_epoch != partition_epoch:
        raise ApiError(Errors.InvalidUpdateVersionError, "the partition changed since the proposal was made")
    if leader_id not in isr or any(r not in state.replicas for r in isr):
        raise ApiError(Errors.InvalidRequestError, f"ISR {isr} must contain the leader and only replicas")
    joining = [r for r in isr if r not in state.isr and r not in live]
    if joining:
        raise ApiError(Errors.IneligibleReplicaError, f"replicas {joining} are not live")
    return change(topic, state, isr=isr)


def elect_record(image: MetadataImage, topic: TopicState, state: PartitionState, election_type: int,
                 live: set[int]) -> dict:
    """ElectLeaders for one partition; raises ApiError with Kafka's codes when nothing can be done."""
    if election_type == PREFERRED:
        preferred = state.replicas[0]
        if state.leader == preferred:
            raise ApiError(Errors.ElectionNotNeededError, "the preferred replica is already the leader")
        if preferred not in live or preferred not in state.isr:
            raise ApiError(Errors.PreferredLeaderNotAvailableError,
                           f"preferred replica {preferred} is not live or not in the ISR {state.isr}")
        return change(topic, state, leader=preferred)
    if state.leader >= 0 and state.leader in live:
        raise ApiError(Errors.ElectionNotNeededError, "the partition has a live leader")
    leader, isr = choose_leader(state, state.isr, live, unclean=True)
    if leader < 0:
        raise ApiError(Errors.EligibleLeadersNotAvailableError, "no live replica")
    return change(topic, state, leader=leader, isr=isr)


def reassignment_record(image: MetadataImage, topic: TopicState, state: PartitionState,
                        target: list[int] | None, live: set[int], broker_unclean: bool = False) -> dict | None:
    """Start (target) or cancel (None) a reassignment of one partition.

    As Kafka's ReplicationControlManager, a new target is measured against the current
    replicas, those of a reassignment under way included: a replica it leaves out, even one
    that reassignment was adding, is removing, and stays (in the ISR, maybe leading) until
    every target replica is in sync; completion_record then drops it from the replicas, the
    ISR and the leadership. A replica is adding while it is not one of the replicas the
    partition had before any reassignment, so a cancel still returns there."""
    if target is None:
        return _revert_record(image, topic, state, live, broker_unclean)
    check_manual_replicas(target, image.brokers)
    ongoing = bool(state.adding_replicas or state.removing_replicas)
    original = [r for r in state.replicas if r not in state.adding_replicas]
    if target == state.replicas and not ongoing:
        return None
    removing = [r for r in state.replicas if r not in target]
    adding = [r for r in target if r not in original]
    return change(topic, state, replicas=target + removing, adding=adding, removing=removing)


def _revert_record(image: MetadataImage, topic: TopicState, state: PartitionState, live: set[int],
                   broker_unclean: bool) -> dict:
    """Cancel, as Kafka's PartitionReassignmentRevert: the replicas lose the ones being added,
    and so does the ISR. An ISR of only added replicas would leave nothing in sync: the
    cancel then needs unclean election on the topic, and restarts the ISR with the first
    original replica."""
    if not (state.adding_replicas or state.removing_replicas):
        raise ApiError(Errors.NoReassignmentInProgressError, "no reassignment in progress")
    original = [r for r in state.replicas if r not in state.adding_replicas]
    isr = [r for r in state.isr if r not in state.adding_replicas]
    if not isr:
        if not unclean_allowed(image, topic, broker_unclean):
            raise ApiError(Errors.InvalidReplicationAssignmentError,
                           f"Unable to revert partition assignment for {topic.name}:{state.partition} because "
                           "it would require an unclean leader election.")
        isr = original[:1]
    leader = state.leader if state.leader in isr else next((r for r in original if r in isr and r in live), -1)
    return change(topic, state, leader=leader, isr=isr, replicas=original, adding=[], removing=[])




def completion_record(topic: TopicState, state: PartitionState, live: set[int]) -> dict | None:
    """Finish a reassignment whose target replicas are all in the ISR: drop the removed
    replicas and, if the leader is being removed, hand leadership to a target replica."""
    if not (state.adding_replicas or state.removing_replicas):
        return None
    target = [r for r in state.replicas if r not in state.removing_replicas]
    if any(r not in state.isr for r in target):
        return None
    isr = [r for r in state.isr if r in target]
    leader = state.leader
    if leader not in target:
        leader = next((r for r in target if r in isr and r in live), -1)
    return change(topic, state, leader=leader, isr=isr, replicas=target, adding=[], removing=[])
