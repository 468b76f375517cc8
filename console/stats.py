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

The topics list warns about the spread only when the topic could spread further: when fewer
brokers hold it than its replicas (partitions x replication factor) could reach, at most the
live brokers (`TopicStats.could_spread_further`); a 1-partition topic on one broker of three
is as spread as it can be.

`broker_loads` is for the brokers page, over the whole cluster: there a broker's partitions are
the replicas **assigned** to it, so a stopped broker still shows what it should host. CMAK's
"more than ceil(average)" rule flags a broker one replica over an uneven division (113 of 336
on three brokers) and never one far under (25 leaderships where the others have 55), so the
brokers page uses a tolerance instead, as Kafka's `leader.imbalance.per.broker.percentage`
(10 %) does: a broker is skewed when its count is more than 10 % above or below the mean of
the brokers, beyond what dividing whole partitions allows (the mean rounded up or down). The
deviation from the mean is given in %, signed.
"""
from __future__ import annotations

import math
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
    cluster_brokers: int = 0         # live brokers the spread counts against

    @property
    def could_spread_further(self) -> bool:
        """Fewer brokers hold the topic than its replicas could reach: as many brokers as it has
        replicas (partitions x replication factor), at most the live ones. A topic with fewer
        replicas than brokers cannot reach 100 %, and is not flagged for it."""
        return self.brokers < min(self.partitions * self.replication_factor, self.cluster_brokers)


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
        cluster_brokers=cluster_brokers,
    )


# Kafka's leader.imbalance.per.broker.percentage default: how far from the mean a broker's
# replicas or leaderships may be before the brokers page calls it skewed.
SKEW_TOLERANCE_PERCENT = 10


def deviation_percent(value: int, mean: float) -> float:
    """How far `value` is from `mean`, in % of the mean (0 when the mean is 0)."""
    return 100.0 * (value - mean) / mean if mean else 0.0


def is_off_balance(value: int, mean: float, tolerance_percent: float = SKEW_TOLERANCE_PERCENT) -> bool:
    """More than `tolerance_percent` above or below `mean`, and outside the mean rounded down
    and up, which whole partitions cannot avoid: 2 of 4 partitions on three brokers (mean 1.33,
    +50 %) is as even as 4 divides."""
    # Rounded first: 10 * 1.1 is 11.000000000000002 in floating point, and 11 is within 10 % of 10.
    high = max(math.ceil(mean), round(mean * (1 + tolerance_percent / 100), 9))
    low = min(math.floor(mean), round(mean * (1 - tolerance_percent / 100), 9))
    return value > high or value < low


@dataclass(frozen=True)
class BrokerLoad:
    broker_id: int
    replicas: tuple[tuple[str, int], ...]   # (topic, partition) assigned to this broker
    leaders: int
    is_skewed: bool                          # replicas off the mean by more than the tolerance
    is_leader_skewed: bool                   # leaderships off the mean by more than the tolerance
    offline: int = 0                         # assigned partitions that have no leader
    replicas_deviation_percent: float = 0.0  # signed: + above the mean of the brokers, - below
    leaders_deviation_percent: float = 0.0


def broker_loads(partitions: Iterable[PartitionInfo], broker_ids: Iterable[int], *,
                 tolerance_percent: float = SKEW_TOLERANCE_PERCENT) -> dict[int, BrokerLoad]:
    """Per broker: assigned replicas and leaderships, their deviation from the mean of the
    brokers, and whether that passes `tolerance_percent` either way (module docstring).
    Brokers are `broker_ids` plus any that appear in an assignment."""
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
    mean_replicas = total_replicas / len(assigned)
    mean_led = total_led / len(assigned)
    return {b: BrokerLoad(broker_id=b, replicas=tuple(sorted(replicas)), leaders=leaders[b],
                          is_skewed=is_off_balance(len(replicas), mean_replicas, tolerance_percent),
                          is_leader_skewed=is_off_balance(leaders[b], mean_led, tolerance_percent),
                          offline=offline[b],
                          replicas_deviation_percent=deviation_percent(len(replicas), mean_replicas),
                          leaders_deviation_percent=deviation_percent(leaders[b], mean_led))
            for b, replicas in sorted(assigned.items())}
