"""What a plan changes, in numbers: moves, bytes, leadership changes, per-broker before and
after, and an estimated duration at a throttle. Pure functions over placements."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from console.reassignments.planner import Key, Placement


@dataclass(frozen=True)
class Move:
    """One partition whose replica list changes. `bytes_to_copy` = size x replicas added."""
    topic: str
    partition: int
    replicas_before: tuple[int, ...]
    replicas_after: tuple[int, ...]
    size: int

    @property
    def adding(self) -> tuple[int, ...]:
        return tuple(b for b in self.replicas_after if b not in self.replicas_before)

    @property
    def removing(self) -> tuple[int, ...]:
        return tuple(b for b in self.replicas_before if b not in self.replicas_after)

    @property
    def bytes_to_copy(self) -> int:
        return self.size * len(self.adding)

    @property
    def leader_changes(self) -> bool:
        return self.replicas_before[0] != self.replicas_after[0]


@dataclass(frozen=True)
class BrokerLoad:
    broker: int
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int
    bytes_in: int      # copied onto this broker by the plan
    bytes_out: int     # sent by this broker as the current leader of moving partitions


@dataclass(frozen=True)
class PlanSummary:
    moves: tuple[Move, ...]
    replica_moves: int          # replicas placed on a new broker (data copied)
    bytes_to_copy: int
    leadership_changes: int
    brokers: tuple[BrokerLoad, ...]

    @property
    def is_noop(self) -> bool:
        return not self.moves

    def eta_seconds(self, throttle_bytes_per_sec: int | None) -> float | None:
        """Each broker copies at most the throttle in and out at once, so the busiest broker
        sets the pace. None without a throttle (the rate is then the cluster's own)."""
        if not throttle_bytes_per_sec:
            return None
        busiest = max((max(b.bytes_in, b.bytes_out) for b in self.brokers), default=0)
        return busiest / throttle_bytes_per_sec


def moves_between(placements: Iterable[Placement], target: Mapping[Key, tuple[int, ...]]) -> list[Move]:
    moves = []
    for p in placements:
        after = tuple(target.get(p.key, p.replicas))
        if after != tuple(p.replicas):
            moves.append(Move(p.topic, p.partition, tuple(p.replicas), after, p.size))
    moves.sort(key=lambda m: (m.topic, m.partition))
    return moves


def summarize(placements: Iterable[Placement], target: Mapping[Key, tuple[int, ...]],
              brokers: Iterable[int] = ()) -> PlanSummary:
    placements = list(placements)
    moves = moves_between(placements, target)
    before = _loads(p.replicas for p in placements)
    after = _loads(tuple(target.get(p.key, p.replicas)) for p in placements)
    sizes = [p.size for p in placements]
    bytes_before, bytes_after = _bytes(placements, sizes, None), _bytes(placements, sizes, target)
    bytes_in, bytes_out = defaultdict(int), defaultdict(int)
    for m in moves:
        for b in m.adding:
            bytes_in[b] += m.size
        bytes_out[m.replicas_before[0]] += m.bytes_to_copy
    ids = sorted(set(brokers) | set(before[0]) | set(after[0]))
    loads = tuple(BrokerLoad(b, before[0][b], after[0][b], before[1][b], after[1][b], bytes_before[b],
                             bytes_after[b], bytes_in[b], bytes_out[b]) for b in ids)
    return PlanSummary(moves=tuple(moves), replica_moves=sum(len(m.adding) for m in moves),
                       bytes_to_copy=sum(m.bytes_to_copy for m in moves),
                       leadership_changes=sum(m.leader_changes for m in moves), brokers=loads)


def _loads(replica_lists: Iterable[tuple[int, ...]]) -> tuple[dict[int, int], dict[int, int]]:
    replicas, leaders = defaultdict(int), defaultdict(int)
    for replica_list in replica_lists:
        for b in replica_list:
            replicas[b] += 1
        if replica_list:
            leaders[replica_list[0]] += 1
    return replicas, leaders


def _bytes(placements: list[Placement], sizes: list[int], target: Mapping[Key, tuple[int, ...]] | None):
    out = defaultdict(int)
    for p, size in zip(placements, sizes):
        for b in (p.replicas if target is None else target.get(p.key, p.replicas)):
            out[b] += size
    return out
