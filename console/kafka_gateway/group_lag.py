"""Every consumer group's lag inputs (committed offsets and their partitions' log end
offsets), for the groups list sorted by lag.

At 2,000 groups committing on 40,000 partitions, reading them costs a page about 1.5 CPU-s
of kafka-python's codec (benchmarks/console_pages.py), while a Kafka operator reads a lag
ranking as a trend. So `group_lags` serves them from `cache.GROUP_LAGS`: collected on a
background thread over a gateway of its own, with the time of collection for the page to
show (see console.kafka_gateway.cache). One group's page reads its offsets live.
"""
from __future__ import annotations

from datetime import datetime, timezone

from console.kafka_gateway import cache
from console.kafka_gateway.cache import GroupLagSnapshot
from console.kafka_gateway.client import Gateway


def group_lags(gateway: Gateway, *, max_age: float, wait_first: float) -> GroupLagSnapshot | None:
    """All groups' lag inputs, at most `max_age` seconds old when a collection is not running
    late; None while the first collection of this process is still running after
    `wait_first` seconds. max_age 0: collected now over `gateway`."""
    if max_age <= 0 or gateway.reopen is None or gateway.cache_key is None:
        return collect(gateway)

    def in_background() -> GroupLagSnapshot:
        with gateway.reopen() as own:
            return collect(own)
    return cache.GROUP_LAGS.get(gateway.cache_key, max_age=max_age, wait_first=wait_first, collect=in_background)


def collect(gateway: Gateway) -> GroupLagSnapshot:
    """ListGroups, then `GroupCalls.lag_snapshot` of them all without descriptions (offsets only)."""
    collected_at = datetime.now(timezone.utc)
    listed = gateway.groups.list_groups() or []
    lag = gateway.groups.lag_snapshot([g.group_id for g in listed], describe=False)
    return GroupLagSnapshot(collected_at=collected_at, lag=lag)
