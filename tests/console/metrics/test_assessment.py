"""Time lag, Burrow's statuses and catch-up estimates over successive observations, checked
against hand-worked numbers (observations built here, as the collector would build them)."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

from console.kafka_gateway.records import BrokerNode, ClusterMetadata, PartitionInfo, TopicInfo
from console.metrics.assessment import Assessor
from console.metrics.observation import GroupObservation, Observation

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
TP = ("orders", 0)


def observation(seconds: float, log_end: int, committed: dict[str, int], members: int = 1,
                leader: int = 0, isr: tuple[int, ...] = (0, 1)) -> Observation:
    partition = PartitionInfo("orders", 0, leader, (0, 1), isr)
    metadata = ClusterMetadata("c", 0, (BrokerNode(0, "h", 1),), (TopicInfo("orders", False, (partition,)),))
    return Observation(collected_at=T0 + timedelta(seconds=seconds), metadata=metadata, oldest={TP: 0},
                       current={TP: log_end},
                       groups={g: GroupObservation("Stable" if members else "Empty", members, {TP: c})
                               for g, c in committed.items()})


def feed(rounds) -> dict:
    assessor = Assessor()
    result = None
    for obs in rounds:
        result = assessor.assess(obs)
    return result.groups


def test_time_lag_is_interpolated_between_the_log_ends_seen():
    # The log end was 100 at t=0 and 200 at t=10; at t=20 (log end 300) a group at 150 is
    # behind by the time since the log end reached 150: t=5, so 15 s.
    groups = feed([observation(0, 100, {}), observation(10, 200, {}), observation(20, 300, {"g": 150})])
    assert groups["g"].partitions[TP].time_lag == 15.0
    assert groups["g"].max_time_lag == 15.0


def test_an_offset_older_than_the_points_is_extrapolated_at_their_rate():
    # 10 records/s between the points: offset 50 was reached 5 s before t=0, 25 s before t=20.
    groups = feed([observation(0, 100, {}), observation(10, 200, {}), observation(20, 200, {"g": 50})])
    assert groups["g"].partitions[TP].time_lag == 25.0


def test_time_lag_is_unknown_with_one_point_and_zero_when_caught_up():
    assert feed([observation(0, 100, {"g": 50})])["g"].partitions[TP].time_lag is None
    assert feed([observation(0, 100, {}), observation(10, 200, {"g": 200})])["g"].partitions[TP].time_lag == 0.0


def test_burrow_statuses():
    # Members keep committing the same offset while the lag grows: STALL; the group is ERR.
    stall = feed([observation(i * 10, 100 + i * 10, {"g": 90}) for i in range(4)])["g"]
    assert stall.partitions[TP].status == "STALL" and stall.status == "ERR"
    # The same without members: STOP.
    stop = feed([observation(i * 10, 100 + i * 10, {"g": 90}, members=0) for i in range(4)])["g"]
    assert stop.partitions[TP].status == "STOP"
    # Moving, but the lag grew at every observation: WARN.
    warn = feed([observation(i * 10, 100 + i * 20, {"g": 90 + i * 5}) for i in range(4)])["g"]
    assert (warn.partitions[TP].status, warn.status) == ("WARN", "WARN")
    # The committed offset went back: REWIND.
    rewind = feed([observation(0, 100, {"g": 90}), observation(10, 100, {"g": 50})])["g"]
    assert rewind.partitions[TP].status == "REWIND"
    # Moving and the lag shrinking or flat at times: OK.
    fine = feed([observation(0, 100, {"g": 90}), observation(10, 110, {"g": 105}), observation(20, 130, {"g": 120})])
    assert fine["g"].status == "OK"


def test_catch_up_time_from_the_rates_over_the_window():
    # Produce 10/s, consume 15/s: gaining 5/s on a lag of 50 -> 10 s.
    groups = feed([observation(0, 100, {"g": 0}), observation(10, 200, {"g": 150})])
    assert groups["g"].lag == 50 and groups["g"].catch_up_seconds == 10.0
    behind = feed([observation(0, 100, {"g": 0}), observation(10, 200, {"g": 50})])
    assert behind["g"].catch_up_seconds == math.inf


def test_partitions_and_brokers():
    assessor = Assessor()
    offline = assessor.assess(observation(0, 10, {}, leader=-1, isr=(1,)))
    assert offline.offline == (TP,) and offline.under_replicated == (TP,) and offline.brokers_down == (1,)
