"""Incremental cooperative assignment of connectors and tasks to workers (KIP-415), after
Kafka's IncrementalCooperativeAssignor. Pure: the leader's herder calls `assign` with what
each member runs now (from its JoinGroup metadata) and the configured connectors and tasks,
and gets back, per member, what to start and what to revoke.

The rules, as Kafka's:
- deleted connectors/tasks, and ones running on two workers, are revoked;
- new ones are spread over the least loaded workers (round robin from the lightest);
- ones lost with a departed worker are held for `scheduled.rebalance.max.delay.ms` (the
  `delay` sent to every member, who rejoin when it runs out) in case the worker returns; then
  they go to the workers that joined meanwhile with nothing to do, else to everyone as new;
- load-balancing revocations (down to the per-worker share, rounded up for the first ones)
  happen only when no delay is running, and after two revoking rounds in a row the next one
  waits an exponential backoff (1 ms x 40^n, capped at the max delay).

State between rounds (the previous assignment and generation) lives in the instance, which
the leader keeps; a generation mismatch drops it, as in Kafka.
"""
from __future__ import annotations

from dataclasses import dataclass, field

Task = tuple[str, int]


@dataclass
class Load:
    worker: str
    connectors: list[str] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


@dataclass
class ClusterAssignment:
    assigned_connectors: dict[str, list[str]]
    assigned_tasks: dict[str, list[Task]]
    revoked_connectors: dict[str, list[str]]
    revoked_tasks: dict[str, list[Task]]
    all_connectors: dict[str, list[str]]
    all_tasks: dict[str, list[Task]]
    delay: int


class IncrementalCooperativeAssignor:
    def __init__(self, max_delay_ms: int, clock) -> None:
        self.max_delay = max_delay_ms
        self.clock = clock                     # () -> milliseconds
        self.previous_connectors: set[str] = set()
        self.previous_tasks: set[Task] = set()
        self.revoked_connectors: set[str] = set()
        self.revoked_tasks: set[Task] = set()
        self.revoked_in_previous = False
        self.candidates: list[str] = []
        self.scheduled_rebalance = 0
        self.delay = 0
        self.previous_generation = -1
        self.previous_members: set[str] = set()
        self.successive_revoking = 0

    def _backoff(self, attempts: int) -> int:
        if self.max_delay == 0:
            return 0
        return int(min(1 * 40 ** attempts, self.max_delay))

    def assign(self, members: dict[str, tuple[list[str], list[Task]]], connectors: list[str],
               tasks: list[Task], last_completed_generation: int, generation: int) -> ClusterAssignment:
        if self.previous_generation != last_completed_generation:
            self.previous_connectors, self.previous_tasks = set(), set()
        configured_c, configured_t = set(connectors), set(tasks)
        active_c = {c for cs, _ in members.values() for c in cs}
        active_t = {t for _, ts in members.values() for t in ts}

        if self.revoked_connectors or self.revoked_tasks:
            if self.revoked_connectors & active_c or self.revoked_tasks & active_t:
                self.previous_connectors, self.previous_tasks = set(active_c), set(active_t)
            self.revoked_connectors, self.revoked_tasks = set(), set()

        deleted_c = self.previous_connectors - configured_c
        deleted_t = self.previous_tasks - configured_t
        dup_c = _duplicates([c for cs, _ in members.values() for c in cs])
        dup_t = _duplicates([t for _, ts in members.values() for t in ts])
        lost_c = self.previous_connectors - active_c - deleted_c
        lost_t = self.previous_tasks - active_t - deleted_t
        created_c = sorted(configured_c - self.previous_connectors - active_c)
        created_t = sorted(configured_t - self.previous_tasks - active_t)

        current = {m: Load(m, [c for c in cs if c not in deleted_c], [t for t in ts if t not in deleted_t])
                   for m, (cs, ts) in members.items()}
        to_revoke = {m: Load(m) for m in members}
        for m, (cs, ts) in members.items():
            to_revoke[m].connectors += [c for c in cs if c in deleted_c or c in dup_c]
            to_revoke[m].tasks += [t for t in ts if t in deleted_t or t in dup_t]
        nxt = [Load(m, [c for c in cs if c not in to_revoke[m].connectors],
                    [t for t in ts if t not in to_revoke[m].tasks]) for m, (cs, ts) in members.items()]

        reassign_c, reassign_t = self._handle_lost(sorted(lost_c), sorted(lost_t), nxt)

        if self.delay == 0:
            balance = self._balancing_revocations(len(configured_c), len(configured_t), nxt)
            if self.revoked_in_previous and balance:
                self.successive_revoking += 1
                self.delay = self._backoff(self.successive_revoking)
                if self.delay != 0:
                    self.scheduled_rebalance = self.clock() + self.delay
                else:
                    self._apply_revocations(balance, to_revoke, nxt)
            elif balance:
                self._apply_revocations(balance, to_revoke, nxt)
                self.revoked_in_previous = True
            elif self.revoked_in_previous:
                self.revoked_in_previous = False
                self.successive_revoking = 0
        else:
            self.revoked_in_previous = False

        _spread_connectors(nxt, created_c + reassign_c)
        _spread_tasks(nxt, created_t + reassign_t)

        next_c = {load.worker: list(load.connectors) for load in nxt}
        next_t = {load.worker: list(load.tasks) for load in nxt}
        revoked_c = {m: list(load.connectors) for m, load in to_revoke.items()}
        revoked_t = {m: list(load.tasks) for m, load in to_revoke.items()}

        self.previous_connectors = {c for cs in next_c.values() for c in cs} | lost_c
        self.previous_tasks = {t for ts in next_t.values() for t in ts} | lost_t
        for load in to_revoke.values():
            self.previous_connectors -= set(load.connectors)
            self.previous_tasks -= set(load.tasks)
            self.revoked_connectors |= set(load.connectors)
            self.revoked_tasks |= set(load.tasks)
        self.previous_connectors |= lost_c
        self.previous_tasks |= lost_t
        self.previous_generation = generation
        self.previous_members = set(members)

        return ClusterAssignment(
            assigned_connectors={m: [c for c in next_c[m] if c not in current[m].connectors] for m in members},
            assigned_tasks={m: [t for t in next_t[m] if t not in current[m].tasks] for m in members},
            revoked_connectors=revoked_c, revoked_tasks=revoked_t,
            all_connectors={m: [c for c in next_c[m] if c not in revoked_c[m]] for m in members},
            all_tasks={m: [t for t in next_t[m] if t not in revoked_t[m]] for m in members},
            delay=self.delay)

    def _handle_lost(self, lost_c: list[str], lost_t: list[Task], loads: list[Load]) -> tuple[list[str], list[Task]]:
        if not lost_c and not lost_t and not self.revoked_in_previous:
            self._reset_delay()
            return [], []
        now = self.clock()
        active = {load.worker for load in loads}
        if self.scheduled_rebalance <= 0 and self.previous_members <= active:
            return lost_c, lost_t      # nobody left: these were missed by a member, assign them again
        if self.max_delay == 0:
            return lost_c, lost_t
        if 0 < self.scheduled_rebalance <= now:
            by_worker = {load.worker: load for load in loads}
            candidates = [by_worker[w] for w in self.candidates if w in by_worker]
            self._reset_delay()
            self.revoked_in_previous = False
            if not candidates:
                return lost_c, lost_t
            for i, connector in enumerate(lost_c):
                candidates[i % len(candidates)].connectors.append(connector)
            for i, task in enumerate(lost_t):
                candidates[i % len(candidates)].tasks.append(task)
            return [], []
        for load in loads:
            if load.is_empty() and load.worker not in self.candidates:
                self.candidates.append(load.worker)
        if now < self.scheduled_rebalance:
            self.delay = min(self.scheduled_rebalance - now, self.max_delay)
        else:
            self.delay = self.max_delay
        self.scheduled_rebalance = now + self.delay
        return [], []

    def _reset_delay(self) -> None:
        self.candidates = []
        self.scheduled_rebalance = 0
        self.delay = 0

    def _balancing_revocations(self, total_c: int, total_t: int, loads: list[Load]) -> dict[str, Load]:
        if all(load.is_empty() for load in loads) or (total_c == 0 and total_t == 0):
            return {}
        result: dict[str, Load] = {}
        for worker, revoked in _revocations(total_c, loads, lambda load: load.connectors).items():
            result.setdefault(worker, Load(worker)).connectors += revoked
        for worker, revoked in _revocations(total_t, loads, lambda load: load.tasks).items():
            result.setdefault(worker, Load(worker)).tasks += revoked
        return result

    @staticmethod
    def _apply_revocations(balance: dict[str, Load], to_revoke: dict[str, Load], loads: list[Load]) -> None:
        for worker, revoked in balance.items():
            to_revoke[worker].connectors += revoked.connectors
            to_revoke[worker].tasks += revoked.tasks
        for load in loads:
            revoked = balance.get(load.worker)
            if revoked:
                load.connectors = [c for c in load.connectors if c not in revoked.connectors]
                load.tasks = [t for t in load.tasks if t not in revoked.tasks]


def _duplicates(items: list) -> set:
    seen, dup = set(), set()
    for item in items:
        (dup if item in seen else seen).add(item)
    return dup


def _revocations(total: int, loads: list[Load], allocation) -> dict[str, list]:
    workers = len(loads)
    minimum, extras = divmod(total, workers)
    sizes = [len(allocation(load)) for load in loads]
    at_min = sum(1 for s in sizes if s == minimum)
    at_extra = sum(1 for s in sizes if s == minimum + 1)
    if at_extra == extras and at_min + at_extra == workers:
        return {}
    result, given = {}, 0
    for load, size in zip(loads, sizes):
        if size <= minimum:
            continue
        if given < extras:
            given += 1
            if size == minimum + 1:
                continue
            limit = minimum + 1
        else:
            limit = minimum
        result[load.worker] = list(allocation(load))[:size - limit]
    return result


def _spread_connectors(loads: list[Load], connectors: list[str]) -> None:
    for connector in connectors:
        min(loads, key=lambda load: (len(load.connectors), load.worker)).connectors.append(connector)


def _spread_tasks(loads: list[Load], tasks: list[Task]) -> None:
    for task in tasks:
        min(loads, key=lambda load: (len(load.tasks), load.worker)).tasks.append(task)
