"""CMAK's topic figures against values computed by hand for crafted assignments."""
from console.kafka_gateway.records import PartitionInfo
from console.stats import BrokerTopicPartitions, broker_loads, topic_stats

# Six partitions, RF 2, three brokers; every broker is first replica of two partitions.
REPLICAS = {0: (0, 1), 1: (1, 2), 2: (2, 0), 3: (0, 1), 4: (1, 2), 5: (2, 0)}


def balanced() -> list[PartitionInfo]:
    return [PartitionInfo("t", p, leader=r[0], replicas=r, isr=r) for p, r in REPLICAS.items()]


def after_broker_2_stops() -> list[PartitionInfo]:
    """Broker 2 leaves every ISR; the partitions it led (2 and 5) move to broker 0."""
    parts = []
    for p, replicas in REPLICAS.items():
        isr = tuple(b for b in replicas if b != 2)
        leader = replicas[0] if replicas[0] != 2 else isr[0]
        parts.append(PartitionInfo("t", p, leader=leader, replicas=replicas, isr=isr))
    return parts


def test_balanced_topic():
    stats = topic_stats(balanced(), cluster_brokers=3, latest_offsets={0: 10, 1: 20, 2: 30, 3: 0, 4: 5, 5: 1})
    assert stats.partitions == 6 and stats.replication_factor == 2
    assert stats.summed_offsets == 66
    assert stats.brokers == 3
    # Each broker is in 4 ISRs; the bound is ceil(6 / 3 * 2) = 4, and 4 > 4 is false.
    # Each leads 2; the bound is ceil(6 / 3) = 2.
    assert stats.brokers_skewed_percent == 0 and stats.brokers_leader_skewed_percent == 0
    assert stats.preferred_replicas_percent == 100
    assert stats.under_replicated_percent == 0
    assert stats.brokers_spread_percent == 100
    assert stats.partitions_by_broker == (
        BrokerTopicPartitions(0, partitions=(0, 2, 3, 5), leaders=(0, 3), is_skewed=False, is_leader_skewed=False),
        BrokerTopicPartitions(1, partitions=(0, 1, 3, 4), leaders=(1, 4), is_skewed=False, is_leader_skewed=False),
        BrokerTopicPartitions(2, partitions=(1, 2, 4, 5), leaders=(2, 5), is_skewed=False, is_leader_skewed=False),
    )


def test_skew_after_a_broker_stops():
    stats = topic_stats(after_broker_2_stops(), cluster_brokers=2)
    # Brokers for the topic are those in some ISR: 0 and 1.
    assert stats.brokers == 2
    # ISR memberships: broker 0 in {0, 2, 3, 5}, broker 1 in {0, 1, 3, 4}; bound ceil(6 / 2 * 2) = 6.
    assert stats.brokers_skewed_percent == 0
    # Leaders: broker 0 leads {0, 2, 3, 5} = 4 > ceil(6 / 2) = 3; broker 1 leads {1, 4} = 2.
    assert [(b.broker_id, b.leaders, b.is_leader_skewed) for b in stats.partitions_by_broker] == [
        (0, (0, 2, 3, 5), True), (1, (1, 4), False)]
    assert stats.brokers_leader_skewed_percent == 50           # 1 of 2 brokers
    # Partitions 2 and 5 are led by broker 0, not their first replica 2: 4 of 6 preferred.
    assert stats.preferred_replicas_percent == 66             # 400 // 6, truncated like CMAK
    # Partitions 1, 2, 4, 5 lost broker 2 from their ISR.
    assert stats.under_replicated_percent == 66
    # Spread counts live brokers, like CMAK: 2 brokers for the topic of 2 live.
    assert stats.brokers_spread_percent == 100
    assert stats.summed_offsets is None                         # no offsets given


def test_spread_and_skew_on_a_topic_crowded_onto_one_broker():
    # Three partitions, RF 1, all on broker 1, in a 4-broker cluster.
    parts = [PartitionInfo("t", p, leader=1, replicas=(1,), isr=(1,)) for p in range(3)]
    stats = topic_stats(parts, cluster_brokers=4)
    assert stats.brokers == 1 and stats.brokers_spread_percent == 25
    # One broker for the topic: the bound is ceil(3 / 1 * 1) = 3, so it is not "skewed" by CMAK's rule.
    assert stats.brokers_skewed_percent == 0 and stats.brokers_leader_skewed_percent == 0


def test_uneven_assignment_is_skewed():
    # Four partitions RF 1 on brokers 0, 0, 0, 1: broker 0 holds 3 > ceil(4 / 2) = 2.
    parts = [PartitionInfo("t", p, leader=b, replicas=(b,), isr=(b,)) for p, b in enumerate((0, 0, 0, 1))]
    stats = topic_stats(parts, cluster_brokers=3)
    assert stats.brokers_skewed_percent == 50 and stats.brokers_leader_skewed_percent == 50
    assert stats.brokers_spread_percent == 66                 # 2 of 3 brokers


def test_an_offline_partition_is_counted_offline_and_under_replicated_and_held_by_no_live_broker():
    parts = [PartitionInfo("t", 0, leader=-1, replicas=(2,), isr=(2,)),      # Kafka keeps the last ISR member
             PartitionInfo("t", 1, leader=0, replicas=(0,), isr=(0,))]
    stats = topic_stats(parts, cluster_brokers=2, latest_offsets={1: 10}, live_brokers={0, 1})
    assert stats.preferred_replicas_percent == 50
    assert (stats.offline_partitions, stats.under_replicated_partitions, stats.under_replicated_percent) == (1, 1, 50)
    assert (stats.summed_offsets, stats.offsets_unknown) == (10, 1)           # the sum says what it leaves out
    assert stats.brokers == 1 and [b.broker_id for b in stats.partitions_by_broker] == [0]


def test_spread_never_passes_100_with_a_broker_down():
    """Broker 2 stopped: the partition it led alone is offline but keeps it in its ISR."""
    parts = [PartitionInfo("t", 0, leader=-1, replicas=(2,), isr=(2,)),
             PartitionInfo("t", 1, leader=0, replicas=(0,), isr=(0,)),
             PartitionInfo("t", 2, leader=1, replicas=(1,), isr=(1,))]
    assert topic_stats(parts, cluster_brokers=2, live_brokers={0, 1}).brokers_spread_percent == 100
    assert topic_stats(parts, cluster_brokers=2).brokers_spread_percent == 100   # capped even without live ids


def test_empty_topic_and_empty_cluster():
    stats = topic_stats([], cluster_brokers=0)
    assert (stats.partitions, stats.brokers, stats.brokers_spread_percent, stats.preferred_replicas_percent) == (
        0, 0, 100, 0)


def test_broker_loads_count_assigned_replicas_even_of_a_stopped_broker():
    loads = broker_loads(after_broker_2_stops(), broker_ids=[0, 1, 2])
    assert {b: len(load.replicas) for b, load in loads.items()} == {0: 4, 1: 4, 2: 4}
    assert {b: load.leaders for b, load in loads.items()} == {0: 4, 1: 2, 2: 0}
    # 12 replicas / 3 brokers: 4 each, no deviation. 6 leaders / 3: mean 2, and 10 % either way
    # is no whole partition more or less: broker 0 leads 4, the stopped broker 2 none.
    assert [b for b, load in loads.items() if load.is_skewed] == []
    assert [b for b, load in loads.items() if load.is_leader_skewed] == [0, 2]
    assert [load.leaders_deviation_percent for load in loads.values()] == [100.0, 0.0, -100.0]
    assert loads[2].replicas == (("t", 1), ("t", 2), ("t", 4), ("t", 5))


def test_broker_loads_include_brokers_without_partitions():
    loads = broker_loads([PartitionInfo("t", 0, leader=0, replicas=(0,), isr=(0,))], broker_ids=[0, 1])
    assert loads[1].replicas == () and loads[1].leaders == 0
    # 1 replica on 2 brokers: 1 and 0 is as even as one partition divides.
    assert not any(load.is_skewed or load.is_leader_skewed for load in loads.values())


def cluster_of(led: dict[int, int], followers: dict[tuple[int, int], int]) -> list[PartitionInfo]:
    """`led[b]` partitions led by broker b; `followers[(b, f)]` of them have a replica on f too."""
    parts = []
    for leader, count in led.items():
        for i in range(count):
            replicas = (leader,) + tuple(f for (b, f), n in sorted(followers.items()) if b == leader and i < n)
            parts.append(PartitionInfo(f"led-by-{leader}", i, leader=leader, replicas=replicas, isr=replicas))
    return parts


def test_skew_is_a_tolerance_around_the_mean_both_ways():
    """The brokers page's figures: replicas 113 / 113 / 110 are even (CMAK's ceil(336 / 3) = 112
    flagged the two brokers one over it); leaderships 55 / 53 / 25 are not, and broker 2, far
    under, is the one to look at (CMAK's rule never flags a broker under the mean)."""
    parts = cluster_of({0: 55, 1: 53, 2: 25}, {(0, 1): 35, (0, 2): 45, (1, 0): 33, (1, 2): 40, (2, 0): 25, (2, 1): 25})
    loads = broker_loads(parts, broker_ids=[0, 1, 2])
    assert [(len(load.replicas), load.leaders) for load in loads.values()] == [(113, 55), (113, 53), (110, 25)]
    assert [load.is_skewed for load in loads.values()] == [False, False, False]
    assert [round(load.replicas_deviation_percent, 1) for load in loads.values()] == [0.9, 0.9, -1.8]
    # Mean 44.3 leaderships: 10 % either way is 39.9 to 48.8.
    assert [load.is_leader_skewed for load in loads.values()] == [True, True, True]
    assert [round(load.leaders_deviation_percent) for load in loads.values()] == [24, 20, -44]


def test_skew_allows_what_whole_partitions_cannot_divide_evenly():
    # 4 partitions on 3 brokers: 2 / 1 / 1 is the best there is (mean 1.33; 2 is +50 %).
    parts = [PartitionInfo("t", p, leader=b, replicas=(b,), isr=(b,)) for p, b in enumerate((0, 0, 1, 2))]
    loads = broker_loads(parts, broker_ids=[0, 1, 2])
    assert not any(load.is_skewed or load.is_leader_skewed for load in loads.values())
    # 6 on 3 brokers: 3 / 2 / 1 is not, though each is only one partition off the mean of 2.
    parts = [PartitionInfo("t", p, leader=b, replicas=(b,), isr=(b,)) for p, b in enumerate((0, 0, 0, 1, 1, 2))]
    assert [b for b, load in broker_loads(parts, broker_ids=[0, 1, 2]).items() if load.is_skewed] == [0, 2]
    # Mean 10 on 10 brokers: 9 to 11 is within 10 %, 8 and 12 are not (10 * 1.1 is 11.000000000000002
    # in floating point: its ceiling must still be 11).
    def spread(counts):
        return [PartitionInfo(f"t{b}", p, leader=b, replicas=(b,), isr=(b,)) for b, n in enumerate(counts)
                for p in range(n)]
    loads = broker_loads(spread([12, 8] + [10] * 8), broker_ids=range(10))
    assert [b for b, load in loads.items() if load.is_skewed] == [0, 1]
    loads = broker_loads(spread([11, 9] + [10] * 8), broker_ids=range(10))
    assert [b for b, load in loads.items() if load.is_skewed] == []


def test_the_spread_is_flagged_only_when_the_topic_could_spread_further():
    one = [PartitionInfo("t", 0, leader=0, replicas=(0,), isr=(0,))]
    stats = topic_stats(one, cluster_brokers=3)
    assert (stats.brokers_spread_percent, stats.could_spread_further) == (33, False)     # 1 replica, 1 broker
    two = [PartitionInfo("t", p, leader=0, replicas=(0, 1), isr=(0, 1)) for p in range(3)]
    stats = topic_stats(two, cluster_brokers=3)
    assert (stats.brokers_spread_percent, stats.could_spread_further) == (66, True)      # 6 replicas on 2 of 3
    crowded = [PartitionInfo("t", p, leader=1, replicas=(1,), isr=(1,)) for p in range(3)]
    stats = topic_stats(crowded, cluster_brokers=4)
    assert (stats.brokers_spread_percent, stats.could_spread_further) == (25, True)      # 3 replicas, 1 broker
    assert topic_stats(balanced(), cluster_brokers=3).could_spread_further is False
