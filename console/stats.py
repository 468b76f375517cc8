"""CMAK's topic and broker statistics, computed from partition state alone (pure functions).

The topic figures follow CMAK's `TopicIdentity` (app/kafka/manager/model/ActorModel.scala):

- A broker "holds" a partition of the topic when it is in the partition's **ISR**; the brokers
  for the topic are the brokers holding at least one partition.
- replication factor: the replica count of the first partition.
- preferred replicas %: partitions whose leader is the first replica, * 100 / partitions.
- under-replicated %: partitions whose ISR size differs from the replica count, or that have no
  leader at all, * 100 / partitions (Kafka's tools list offline partitions as under-replicated).
- offline partitions: partitions without a leader, as Kafka's OfflinePartitionsCount.
- a broker is skewed when it holds more than ceil(partitions / brokers for topic * RF)
  partitions, and leader-skewed when it leads more than ceil(partitions / brokers for topic).
- brokers skewed % and brokers leader skewed %: such brokers * 100 / brokers for the topic
  (0 when no broker holds anything).
- brokers spread %: brokers for the topic * 100 / brokers in the cluster (100 for no brokers).
  Like CMAK, "brokers in the cluster" are the live ones (CMAK read them from ZooKeeper's
  ephemeral /brokers/ids; we read them from Metadata). A stopped broker can stay in the ISR
  of a partition that went offline with it (Kafka keeps the last ISR), so when the live
  brokers are given only they count as holding: the spread can never pass 100 %.
- sum of partition offsets: the sum of the latest offsets we know; `offsets_unknown` says how
  many partitions (the offline ones) it leaves out, so a shrinking sum is never silent.

All percentages are integers truncated toward zero, as CMAK's Int arithmetic does. CMAK
computes the averages in doubles; we use exact integer ceilings (the same for any sizes a
cluster can have).

`broker_loads` applies CMAK's per-topic skew rule to the whole cluster for the brokers page;
there a broker's partitions are the replicas **assigned** to it, so a stopped broker still
shows what it should host.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from console.kafka_gateway.records import PartitionInfo


def is_preferred_leader(partition: PartitionInfo) -> bool:
    return bool(partition.replicas) and partition.leader == partition.replicas[0]


def is_under_replicated(partition: PartitionInfo) -> bool:
    return partition.is_offline or len(partition.isr) != len(partition.replicas)


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


@dataclass(frozen=True)
class BrokerTopicPartitions:
    broker_id: int
    partitions: tuple[int, ...]      # partitions of the topic whose ISR includes this broker
    leaders: tuple[int, ...]         # ... of which this broker is the leader
    is_skewed: bool
    is_leader_skewed: bool


@dataclass(frozen=True)
class TopicStats:
    partitions: int
    replication_factor: int
    summed_offsets: int | None       # None when no offsets were given
    brokers: int                     # brokers for the topic
    preferred_replicas_percent: int
    under_replicated_percent: int
    brokers_skewed_percent: int
    brokers_leader_skewed_percent: int
    brokers_spread_percent: int
    partitions_by_broker: tuple[BrokerTopicPartitions, ...]
    offline_partitions: int = 0
    under_replicated_partitions: int = 0
    offsets_unknown: int = 0         # partitions left out of summed_offsets (no leader to ask)


def topic_stats(partitions: Sequence[PartitionInfo], *, cluster_brokers: int,
                latest_offsets: Mapping[int, int] | None = None,
                live_brokers: Collection[int] | None = None) -> TopicStats:
    """CMAK's TopicIdentity figures for one topic. `latest_offsets`: {partition: offset};
    `live_brokers`: the brokers in Metadata (only they hold partitions when given)."""
    partitions = sorted(partitions, key=lambda p: p.partition)
    count = len(partitions)
    replication_factor = len(partitions[0].replicas) if partitions else 0

    held: dict[int, list[int]] = defaultdict(list)
    led: dict[int, list[int]] = defaultdict(list)
    for p in partitions:
        for broker in p.isr:
            if live_brokers is not None and broker not in live_brokers:
                continue
            held[broker].append(p.partition)
            if broker == p.leader:
                led[broker].append(p.partition)
    topic_brokers = len(held)
    by_broker: tuple[BrokerTopicPartitions, ...] = ()
    if topic_brokers:
        max_held = _ceil_div(count * replication_factor, topic_brokers)
        max_led = _ceil_div(count, topic_brokers)
        by_broker = tuple(
            BrokerTopicPartitions(broker_id=b, partitions=tuple(sorted(held[b])), leaders=tuple(sorted(led[b])),
                                  is_skewed=len(held[b]) > max_held, is_leader_skewed=len(led[b]) > max_led)
            for b in sorted(held))

    def percent(n: int, of: int, empty: int = 0) -> int:
        return 100 * n // of if of else empty

    return TopicStats(
        partitions=count,
        replication_factor=replication_factor,
        summed_offsets=None if latest_offsets is None else sum(
            latest_offsets[p.partition] for p in partitions if p.partition in latest_offsets),
        offsets_unknown=0 if latest_offsets is None else sum(p.partition not in latest_offsets for p in partitions),
        offline_partitions=sum(p.is_offline for p in partitions),
        under_replicated_partitions=sum(map(is_under_replicated, partitions)),
        brokers=topic_brokers,
        preferred_replicas_percent=percent(sum(map(is_preferred_leader, partitions)), count),
        under_replicated_percent=percent(sum(map(is_under_replicated, partitions)), count),
        brokers_skewed_percent=percent(sum(b.is_skewed for b in by_broker), topic_brokers),
        brokers_leader_skewed_percent=percent(sum(b.is_leader_skewed for b in by_broker), topic_brokers),
        brokers_spread_percent=min(100, percent(topic_brokers, cluster_brokers, empty=100)),
        partitions_by_broker=by_broker,
    )


@dataclass(frozen=True)
class BrokerLoad:
    broker_id: int
    replicas: tuple[tuple[str, int], ...]   # (topic, partition) assigned to this broker
    leaders: int
    is_skewed: bool
    is_leader_skewed: bool
    offline: int = 0                         # assigned partitions that have no leader


def broker_loads(partitions: Iterable[PartitionInfo], broker_ids: Iterable[int]) -> dict[int, BrokerLoad]:
    """Per broker: assigned replicas and leaderships, and CMAK's skew rule over the cluster:
    skewed when holding more than ceil(replicas / brokers), leader-skewed when leading more
    than ceil(partitions with a leader / brokers). Brokers are `broker_ids` plus any that
    appear in an assignment."""
    assigned: dict[int, list[tuple[str, int]]] = {b: [] for b in broker_ids}
    leaders: dict[int, int] = defaultdict(int)
    offline: dict[int, int] = defaultdict(int)
    total_replicas = total_led = 0
    for p in partitions:
        for broker in p.replicas:
            assigned.setdefault(broker, []).append((p.topic, p.partition))
            total_replicas += 1
            if p.is_offline:
                offline[broker] += 1
        if not p.is_offline:
            leaders[p.leader] += 1
            assigned.setdefault(p.leader, [])
            total_led += 1
    if not assigned:
        return {}
    max_replicas = _ceil_div(total_replicas, len(assigned))
    max_led = _ceil_div(total_led, len(assigned))
    return {b: BrokerLoad(broker_id=b, replicas=tuple(sorted(replicas)), leaders=leaders[b],
                          is_skewed=len(replicas) > max_replicas, is_leader_skewed=leaders[b] > max_led,
                          offline=offline[b])
            for b, replicas in sorted(assigned.items())}
