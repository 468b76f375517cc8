"""The reassignment planner: a target placement from a placement snapshot. Pure; no I/O.

Goals, in order; a later goal never undoes an earlier one:
1. Hard constraints: replicas only on the brokers a partition may use (decommissioned
   brokers are left, a restricted topic stays on its chosen brokers) and the asked
   replication factor.
2. Rack awareness (when brokers have `broker.rack`): each partition on min(RF, racks) racks.
3. Replicas per broker within +-1 of the mean (max - min <= 1).
4. Preferred leaders (first replica) per broker within +-1 of the mean, by reordering
   replica lists only: a leadership change copies no data.
5. Bytes per broker within `bytes_tolerance` of the mean, by moving or swapping replicas.

Least movement: a replica moves only when a goal needs it, always from the most loaded
broker to the least loaded one, and followers before leaders. Adding a seventh broker to
six balanced ones therefore moves about 1/7 of the replicas, where Kafka's `--generate`
(kafka_generate.py) deals every partition again. Spreading each topic evenly is a tie-break,
not a goal: among equally good replicas, the one whose topic is most crowded on its broker
moves first.

The planner works on the partitions it is given (a cluster or chosen topics): the balance
goals count only their replicas.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from console import formatting
from console.errors import InvalidInput

Key = tuple[str, int]
_SCAN_LIMIT = 64       # replicas looked at per move: enough to find a good one, bounded on huge brokers
_BYTES_ROUNDS = 500    # byte-balancing moves at most; each one is found in O(replicas of two brokers)


@dataclass(frozen=True)
class Placement:
    """One partition as it is now: replicas in preference order and its size in bytes."""
    topic: str
    partition: int
    replicas: tuple[int, ...]
    size: int = 0

    @property
    def key(self) -> Key:
        return self.topic, self.partition


@dataclass(frozen=True)
class PlanGoals:
    """What to plan for. `brokers` maps every broker replicas may go to onto its rack (None
    when it has none); `exclude` are brokers to empty (decommission); `topic_brokers`
    restricts topics to chosen brokers; `replication_factor` changes topics' RF."""
    brokers: Mapping[int, str | None]
    exclude: frozenset[int] = frozenset()
    topic_brokers: Mapping[str, frozenset[int]] = field(default_factory=dict)
    replication_factor: Mapping[str, int] = field(default_factory=dict)
    balance_replicas: bool = True
    balance_leaders: bool = True
    bytes_tolerance: float | None = 0.10


def plan_placement(placements: Sequence[Placement], *, goals: PlanGoals) -> dict[Key, tuple[int, ...]]:
    """The target replicas of every given partition (unchanged ones included)."""
    state = _State(placements, goals)
    state.enforce_constraints()
    state.spread_racks()
    if goals.balance_replicas:
        state.balance_replica_counts()
    if goals.balance_leaders:
        state.balance_leaders()
    if goals.bytes_tolerance is not None:
        state.balance_bytes(goals.bytes_tolerance)
    return {(state.topics[i], state.partitions[i]): tuple(state.replicas[i]) for i in range(len(state.replicas))}


class _State:
    """The placement being planned, with per-broker counters kept in step with every change."""

    def __init__(self, placements: Sequence[Placement], goals: PlanGoals) -> None:
        self.goals = goals
        self.pool = sorted(set(goals.brokers) - set(goals.exclude))
        if not self.pool:
            raise InvalidInput("No broker is left to place replicas on.")
        self.rack = {b: goals.brokers.get(b) for b in goals.brokers}
        self.has_racks = len({self.rack.get(b) for b in self.pool}) > 1
        self.topics = [p.topic for p in placements]
        self.partitions = [p.partition for p in placements]
        self.sizes = [p.size for p in placements]
        self.replicas = [list(p.replicas) for p in placements]
        self.count: dict[int, int] = defaultdict(int)
        self.leaders: dict[int, int] = defaultdict(int)
        self.bytes: dict[int, int] = defaultdict(int)
        self.topic_count: dict[tuple[int, str], int] = defaultdict(int)
        self.on_broker: dict[int, dict[int, None]] = defaultdict(dict)   # insertion-ordered set
        self._allowed_cache: dict[str, frozenset[int]] = {}
        for i, replicas in enumerate(self.replicas):
            if len(set(replicas)) != len(replicas) or not replicas:
                raise InvalidInput(f"{self.topics[i]}-{self.partitions[i]} has an invalid replica list {replicas}.")
            for b in replicas:
                self._add(i, b)
            self.leaders[replicas[0]] += 1

    # --- bookkeeping -----------------------------------------------------------------------

    def _add(self, i: int, b: int) -> None:
        self.count[b] += 1
        self.bytes[b] += self.sizes[i]
        self.topic_count[b, self.topics[i]] += 1
        self.on_broker[b][i] = None

    def _remove(self, i: int, b: int) -> None:
        self.count[b] -= 1
        self.bytes[b] -= self.sizes[i]
        self.topic_count[b, self.topics[i]] -= 1
        del self.on_broker[b][i]

    def _replace(self, i: int, old: int, new: int) -> None:
        """Put `new` in `old`'s slot (a slot-0 replacement changes the preferred leader)."""
        slot = self.replicas[i].index(old)
        self.replicas[i][slot] = new
        self._remove(i, old)
        self._add(i, new)
        if slot == 0:
            self.leaders[old] -= 1
            self.leaders[new] += 1

    def allowed(self, i: int) -> frozenset[int]:
        topic = self.topics[i]
        if topic not in self._allowed_cache:
            chosen = self.goals.topic_brokers.get(topic)
            base = frozenset(self.pool)
            self._allowed_cache[topic] = base & frozenset(chosen) if chosen else base
        return self._allowed_cache[topic]

    def _racks_without(self, i: int, b: int | None) -> set:
        return {self.rack.get(r) for r in self.replicas[i] if r != b}

    def _rack_ok(self, i: int, src: int, dst: int) -> bool:
        """Moving i's replica from src to dst keeps at least as many distinct racks."""
        rack_src, rack_dst = self.rack.get(src), self.rack.get(dst)
        if rack_src == rack_dst:
            return True
        others = self._racks_without(i, src)
        return rack_dst not in others or rack_src in others

    def _choose_broker(self, i: int, leaving: int | None) -> int | None:
        """The best broker for a new replica of i: a rack the partition lacks, then the fewest
        replicas, the fewest of this topic, the fewest bytes."""
        current = set(self.replicas[i])
        racks = self._racks_without(i, leaving)
        topic = self.topics[i]
        candidates = [b for b in self.allowed(i) if b not in current]
        if not candidates:
            return None
        return min(candidates, key=lambda b: (self.rack.get(b) in racks, self.count[b],
                                              self.topic_count[b, topic], self.bytes[b], b))

    # --- goal 1: constraints -----------------------------------------------------------------

    def enforce_constraints(self) -> None:
        for i in range(len(self.replicas)):
            allowed = self.allowed(i)
            rf = self.goals.replication_factor.get(self.topics[i], len(self.replicas[i]))
            if rf < 1 or rf > len(allowed):
                raise InvalidInput(f"{self.topics[i]} cannot have replication factor {rf} on "
                                   f"{formatting.counted(len(allowed), 'allowed broker')}.")
            for b in [b for b in self.replicas[i] if b not in allowed]:
                self._replace(i, b, self._choose_broker(i, b))
            while len(self.replicas[i]) > rf:
                self._drop_replica(i)
            while len(self.replicas[i]) < rf:
                b = self._choose_broker(i, None)
                self.replicas[i].append(b)
                self._add(i, b)

    def _drop_replica(self, i: int) -> None:
        """Lower RF: drop the follower on the most loaded broker (never the preferred leader)."""
        followers = self.replicas[i][1:]
        victim = max(followers, key=lambda b: (self.count[b], self.bytes[b], b))
        self.replicas[i].remove(victim)
        self._remove(i, victim)

    # --- goal 2: racks --------------------------------------------------------------------

    def spread_racks(self) -> None:
        if not self.has_racks:
            return
        for i in range(len(self.replicas)):
            allowed_racks = {self.rack.get(b) for b in self.allowed(i)}
            wanted = min(len(self.replicas[i]), len(allowed_racks))
            while len({self.rack.get(b) for b in self.replicas[i]}) < wanted:
                if not self._move_duplicate_rack_replica(i):
                    break

    def _move_duplicate_rack_replica(self, i: int) -> bool:
        seen, duplicates = set(), []
        for slot, b in enumerate(self.replicas[i]):
            if self.rack.get(b) in seen:
                duplicates.append(b)
            seen.add(self.rack.get(b))
        # Followers come after the leader, so the duplicates are followers when they can be.
        victim = max(duplicates, key=lambda b: (self.count[b], b))
        target = self._choose_broker(i, victim)
        if target is None or self.rack.get(target) in self._racks_without(i, victim):
            return False
        self._replace(i, victim, target)
        return True

    # --- goal 3: replica counts ---------------------------------------------------------------

    def balance_replica_counts(self) -> None:
        stuck: set[int] = set()
        while True:
            sources = [b for b in self.pool if b not in stuck]
            if not sources:
                return
            src = max(sources, key=lambda b: (self.count[b], self.bytes[b], -b))
            lowest = min(self.count[b] for b in self.pool)
            if self.count[src] - lowest <= 1:
                return
            if not self._move_one_replica_from(src):
                stuck.add(src)

    def _move_one_replica_from(self, src: int) -> bool:
        # The emptiest brokers first; the first one that can take a replica of src takes it.
        for dst in sorted(self.pool, key=lambda b: (self.count[b], self.bytes[b], b)):
            if self.count[src] - self.count[dst] <= 1:
                return False
            i = self._best_replica_to_move(src, dst)
            if i is not None:
                self._replace(i, src, dst)
                return True
        return False

    def _best_replica_to_move(self, src: int, dst: int) -> int | None:
        """Among the first _SCAN_LIMIT replicas on src that may go to dst, the best: a follower
        before a leader, then the topic most crowded on src relative to dst."""
        best, best_score, looked, passed = None, None, [], []
        restricted, racks = bool(self.goals.topic_brokers), self.has_racks
        topic_count, replicas_of, topics = self.topic_count, self.replicas, self.topics
        on_src = self.on_broker[src]
        for i in on_src:
            replicas = replicas_of[i]
            if dst in replicas or (restricted and dst not in self.allowed(i)) or (racks and not self._rack_ok(i, src, dst)):
                passed.append(i)
                continue
            topic = topics[i]
            score = (replicas[0] != src, topic_count[src, topic] - topic_count[dst, topic])
            if score[0] and score[1] >= 1:
                best = i      # a follower of a topic crowded on src: nothing is better
                break
            if best_score is None or score > best_score:
                best, best_score = i, score
            looked.append(i)
            if len(looked) >= _SCAN_LIMIT:
                break
        # The replicas passed over go to the back, so the next scan starts with fresh ones.
        for i in passed + looked:
            if i != best:
                del on_src[i]
                on_src[i] = None
        return best

    # --- goal 4: preferred leaders --------------------------------------------------------------

    def balance_leaders(self) -> None:
        # (leader, follower) -> partitions where that swap is possible; stale entries are skipped.
        pairs: dict[tuple[int, int], list[int]] = defaultdict(list)
        for i, replicas in enumerate(self.replicas):
            for follower in replicas[1:]:
                pairs[replicas[0], follower].append(i)
        stuck: set[int] = set()
        while True:
            sources = [b for b in self.pool if b not in stuck]
            if not sources:
                return
            src = max(sources, key=lambda b: (self.leaders[b], -b))
            if self.leaders[src] - min(self.leaders[b] for b in self.pool) <= 1:
                return
            if not self._hand_leadership_from(src, pairs):
                stuck.add(src)

    def _hand_leadership_from(self, src: int, pairs: dict[tuple[int, int], list[int]]) -> bool:
        for dst in sorted(self.pool, key=lambda b: (self.leaders[b], b)):
            if self.leaders[src] - self.leaders[dst] <= 1:
                return False
            candidates = pairs.get((src, dst), [])
            while candidates:
                i = candidates.pop()
                replicas = self.replicas[i]
                if replicas[0] != src or dst not in replicas:
                    continue
                slot = replicas.index(dst)
                replicas[0], replicas[slot] = dst, src
                self.leaders[src] -= 1
                self.leaders[dst] += 1
                for follower in replicas[1:]:
                    pairs[dst, follower].append(i)
                return True
        return False

    # --- goal 5: bytes ----------------------------------------------------------------------

    def balance_bytes(self, tolerance: float) -> None:
        total = sum(self.bytes[b] for b in self.pool)
        if total == 0:
            return
        mean = total / len(self.pool)
        for _ in range(_BYTES_ROUNDS):
            by_bytes = sorted(self.pool, key=lambda b: (self.bytes[b], b))
            if self.bytes[by_bytes[-1]] <= mean * (1 + tolerance) and self.bytes[by_bytes[0]] >= mean * (1 - tolerance):
                return
            # The heaviest with the lightest first; if no replica can go between them, the next pair.
            pairs = ((h, light) for h in reversed(by_bytes) for light in by_bytes if self.bytes[light] < self.bytes[h])
            if not any(self._shift_bytes(heavy, light) for heavy, light in pairs):
                return

    def _shift_bytes(self, heavy: int, light: int) -> bool:
        """Move a replica heavy -> light (if counts allow) or swap a big one for a small one,
        whichever brings the two closest to each other; False if nothing helps. A preferred
        leader may move only if leader counts stay within their current range (goal 4)."""
        gap = self.bytes[heavy] - self.bytes[light]
        size = self.sizes.__getitem__
        give = self._movable_by_leadership(heavy, light)
        take = self._movable_by_leadership(light, heavy)
        best: tuple[float, int, int | None] | None = None
        if self.count[heavy] > self.count[light]:
            for leads, candidates in give.items():
                if self._leaders_ok(heavy, light, int(leads)):
                    for i in candidates:
                        if size(i) < gap and (best is None or abs(size(i) - gap / 2) < best[0]):
                            best = (abs(size(i) - gap / 2), i, None)
        # Per (leader?, leader?) pair of groups, two pointers over both sorted lists find the
        # swap whose size difference is nearest half the gap.
        for give_leads, givers in give.items():
            for take_leads, takers in take.items():
                if givers and takers and self._leaders_ok(heavy, light, int(give_leads) - int(take_leads)):
                    found = _nearest_difference(givers, takers, size, gap)
                    if found and (best is None or found[0] < best[0]):
                        best = found
        if best is None:
            return False
        _, i, back = best
        self._replace(i, heavy, light)
        if back is not None:
            self._replace(back, light, heavy)
        return True

    def _movable_by_leadership(self, src: int, dst: int) -> dict[bool, list[int]]:
        """Replicas on src that may go to dst, split by "src is the preferred leader", by size."""
        groups: dict[bool, list[int]] = {False: [], True: []}
        for i in self.on_broker[src]:
            if self._can_go(i, src, dst):
                groups[self.replicas[i][0] == src].append(i)
        for group in groups.values():
            group.sort(key=self.sizes.__getitem__)
        return groups

    def _leaders_ok(self, heavy: int, light: int, shift: int) -> bool:
        """Do leader counts stay in their current range if `shift` leaderships go heavy -> light?"""
        low = min(self.leaders[b] for b in self.pool)
        high = max(low + 1, max(self.leaders[b] for b in self.pool))
        return low <= self.leaders[heavy] - shift <= high and low <= self.leaders[light] + shift <= high

    def _can_go(self, i: int, src: int, dst: int) -> bool:
        return dst not in self.replicas[i] and dst in self.allowed(i) and self._rack_ok(i, src, dst)


def _nearest_difference(givers: list[int], takers: list[int], size, gap: int) -> tuple[float, int, int] | None:
    """(miss, giver, taker) with size(giver) - size(taker) in (0, gap) and nearest gap / 2;
    both lists sorted by size."""
    ideal = gap / 2
    best, j = None, 0
    for i in givers:
        while j + 1 < len(takers) and size(i) - size(takers[j + 1]) >= ideal:
            j += 1
        for k in (j, j + 1):
            if k < len(takers):
                delta = size(i) - size(takers[k])
                if 0 < delta < gap and (best is None or abs(delta - ideal) < best[0]):
                    best = (abs(delta - ideal), i, takers[k])
    return best


def placements_by_key(placements: Iterable[Placement]) -> dict[Key, Placement]:
    return {p.key: p for p in placements}
