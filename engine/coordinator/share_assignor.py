"""The share groups' server-side assignor, `simple` (Kafka's SimpleAssignor, KIP-932).

Topic by topic, among the members that subscribe to it:
- fewer members than partitions: each partition goes to one member, and the members' counts
  differ by at most one;
- at least as many members as partitions: each member gets one partition, and each partition
  is shared by as many members as its neighbours, give or take one. A share partition hands
  each record to one member at a time, so sharing a partition is what lets a queue have more
  consumers than partitions.
It is sticky: a member keeps what it had while that stays within the balance, so a join or a
leave moves as few members as possible. A pure function of the subscriptions, the partition
counts and the previous assignment.
"""
from __future__ import annotations

TopicPartition = tuple[str, int]
Subscriptions = dict[str, frozenset[str]]           # member id -> subscribed topic names
Assignment = dict[str, frozenset[TopicPartition]]    # member id -> its partitions
SIMPLE = "simple"


def assign(subscriptions: Subscriptions, partition_counts: dict[str, int], previous: Assignment) -> Assignment:
    result: dict[str, set[TopicPartition]] = {member: set() for member in subscriptions}
    for topic, count in sorted(partition_counts.items()):
        members = sorted(m for m, topics in subscriptions.items() if topic in topics)
        if not members or count <= 0:
            continue
        had = {m: sorted(p for t, p in previous.get(m, ()) if t == topic and p < count) for m in members}
        if len(members) >= count:
            chosen = _share_partitions(members, count, had)
            for member, partition in chosen.items():
                result[member].add((topic, partition))
        else:
            for member, partitions in _split_partitions(members, count, had).items():
                result[member].update((topic, p) for p in partitions)
    return {member: frozenset(tps) for member, tps in result.items()}


def _share_partitions(members: list[str], count: int, had: dict[str, list[int]]) -> dict[str, int]:
    """One partition per member; partition i is shared by quota[i] members."""
    base, extra = divmod(len(members), count)
    quota = [base + (1 if i < extra else 0) for i in range(count)]
    load = [0] * count
    chosen: dict[str, int] = {}
    for member in members:                      # sticky: the first partition it had, if room
        for partition in had[member]:
            if load[partition] < quota[partition]:
                chosen[member] = partition
                load[partition] += 1
                break
    for member in members:
        if member not in chosen:
            partition = min(range(count), key=lambda p: (load[p] - quota[p], p))
            chosen[member] = partition
            load[partition] += 1
    return chosen


def _split_partitions(members: list[str], count: int, had: dict[str, list[int]]) -> dict[str, list[int]]:
    """Each partition to one member; the members' counts differ by at most one."""
    base, extra = divmod(count, len(members))
    quota = {m: base + (1 if i < extra else 0) for i, m in enumerate(members)}
    owned: dict[str, list[int]] = {m: [] for m in members}
    taken: set[int] = set()
    for member in members:                      # sticky first
        for partition in had[member]:
            if partition not in taken and len(owned[member]) < quota[member]:
                owned[member].append(partition)
                taken.add(partition)
    free = [p for p in range(count) if p not in taken]
    for partition in free:
        member = min(members, key=lambda m: (len(owned[m]) - quota[m], m))
        owned[member].append(partition)
    return owned
