"""Server-side assignors of the consumer group protocol (KIP-848): `uniform` and `range`.

An assignor maps the group's members to partitions, given each member's subscribed topics,
the partition count of every subscribed topic and the previous target assignment. It is a
pure function: the coordinator (consumer_protocol.py) calls it whenever the group epoch
passes the assignment epoch, and reconciliation moves members towards its answer.

- `uniform` (Kafka's default, UniformAssignor): every partition of a subscribed topic goes
  to one of its subscribers, and the counts differ by at most one among members that could
  take each other's partitions. It is sticky: a member keeps the partitions it had as long
  as that stays balanced, so a join or leave moves as few partitions as possible.
- `range` (RangeAssignor): per topic, its subscribers sorted by member id each get a
  contiguous range, the first `partitions % members` one more. Members keep nothing.
Gaps: rack-aware assignment (the members' rack ids are not used).
"""
from __future__ import annotations

TopicPartition = tuple[str, int]
Subscriptions = dict[str, frozenset[str]]           # member id -> subscribed topic names
Assignment = dict[str, frozenset[TopicPartition]]    # member id -> its partitions

UNIFORM = "uniform"
RANGE = "range"
_CLASS_NAMES = {"org.apache.kafka.coordinator.group.assignor.UniformAssignor": UNIFORM,
                "org.apache.kafka.coordinator.group.assignor.RangeAssignor": RANGE}


def assignor_name(configured: str) -> str | None:
    """The assignor a `group.consumer.assignors` entry names (a short or a Kafka class name)."""
    name = _CLASS_NAMES.get(configured.strip(), configured.strip())
    return name if name in (UNIFORM, RANGE) else None


def assign(name: str, subscriptions: Subscriptions, partition_counts: dict[str, int],
           previous: Assignment) -> Assignment:
    """The target assignment of assignor `name` (UNIFORM or RANGE)."""
    if name == RANGE:
        return range_assign(subscriptions, partition_counts)
    return uniform_assign(subscriptions, partition_counts, previous)


def range_assign(subscriptions: Subscriptions, partition_counts: dict[str, int]) -> Assignment:
    result: dict[str, set[TopicPartition]] = {member: set() for member in subscriptions}
    for topic, count in sorted(partition_counts.items()):
        members = sorted(m for m, topics in subscriptions.items() if topic in topics)
        if not members:
            continue
        size, extra = divmod(count, len(members))
        start = 0
        for i, member in enumerate(members):
            length = size + (1 if i < extra else 0)
            result[member].update((topic, p) for p in range(start, start + length))
            start += length
    return {member: frozenset(tps) for member, tps in result.items()}


def uniform_assign(subscriptions: Subscriptions, partition_counts: dict[str, int],
                   previous: Assignment) -> Assignment:
    owned: dict[str, set[TopicPartition]] = {member: set() for member in subscriptions}
    owner: dict[TopicPartition, str] = {}
    # Sticky first: each member keeps what it had and may still have.
    for member in sorted(subscriptions):
        for topic, partition in sorted(previous.get(member, ())):
            tp = (topic, partition)
            if topic in subscriptions[member] and partition < partition_counts.get(topic, 0) and tp not in owner:
                owned[member].add(tp)
                owner[tp] = member
    # Then every free partition to its least loaded subscriber.
    for topic, count in sorted(partition_counts.items()):
        subscribers = sorted(m for m, topics in subscriptions.items() if topic in topics)
        for partition in range(count):
            if subscribers and (topic, partition) not in owner:
                member = min(subscribers, key=lambda m: (len(owned[m]), m))
                owned[member].add((topic, partition))
                owner[(topic, partition)] = member
    _balance(subscriptions, owned, owner)
    return {member: frozenset(tps) for member, tps in owned.items()}


def _balance(subscriptions: Subscriptions, owned: dict[str, set[TopicPartition]],
             owner: dict[TopicPartition, str]) -> None:
    """Move partitions from a member to one with at least two fewer that also subscribes to
    the partition's topic, until no such move exists: each move shrinks the spread, so it ends."""
    moved = True
    while moved:
        moved = False
        for tp in sorted(owner, key=lambda tp: (-len(owned[owner[tp]]), tp)):
            giver = owner[tp]
            takers = [m for m, topics in subscriptions.items()
                      if tp[0] in topics and len(owned[m]) + 1 < len(owned[giver])]
            if takers:
                taker = min(takers, key=lambda m: (len(owned[m]), m))
                owned[giver].discard(tp)
                owned[taker].add(tp)
                owner[tp] = taker
                moved = True
