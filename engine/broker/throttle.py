"""Replication throttles: `leader.replication.throttled.rate` / `follower.replication.throttled.rate`.

A rate in bytes per second over a short sliding window, as Kafka's ReplicationQuotaManager:
while the measured rate is above the limit, throttled partitions are left out of replica
fetches (follower side) or answered with no data (leader side). Only partitions named by
the topic's `leader.replication.throttled.replicas` / `follower.replication.throttled.replicas`
("*" or "partition:broker,...") are throttled, so reassignment traffic can be capped while
normal replication runs free.
"""
from __future__ import annotations

import time
from collections import deque
from typing import Callable

WINDOW_S = 1.0
LONG_MAX = 2**63 - 1


class ReplicationThrottle:
    def __init__(self, rate: Callable[[], int], clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate
        self._clock = clock
        self._samples: deque[tuple[float, int]] = deque()

    def record(self, size: int) -> None:
        if self._rate() < LONG_MAX:
            self._samples.append((self._clock(), size))

    def exceeded(self) -> bool:
        rate = self._rate()
        if rate >= LONG_MAX:
            return False
        now = self._clock()
        while self._samples and self._samples[0][0] < now - WINDOW_S:
            self._samples.popleft()
        return sum(size for _, size in self._samples) > rate * WINDOW_S


def is_throttled(replicas_config: str, partition: int, broker_id: int) -> bool:
    """Does a `*.replication.throttled.replicas` value name this partition on this broker?"""
    value = (replicas_config or "").strip()
    if not value:
        return False
    if value == "*":
        return True
    return f"{partition}:{broker_id}" in {item.strip() for item in value.split(",") if item.strip()}
