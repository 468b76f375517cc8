"""Kafka's controller mutation quota (KIP-599): how fast one client may create and delete
partitions.

Each client id has a token bucket of `controller_mutation_rate` partitions per second, with a
burst of that rate times Kafka's quota window (11 windows of 1 s). A topic of CreateTopics,
CreatePartitions or DeleteTopics is accepted while the client's bucket is not empty, and its
partitions are taken from it (the bucket may go negative: one big request is not refused);
once the bucket is empty the topic is refused with THROTTLING_QUOTA_EXCEEDED and
`throttle_time_ms` says when the bucket refills (clients of older versions, which do not know
that error, are accepted and told to back off by throttle_time_ms instead).

Kafka sets the quota per user or client id (`kafka-configs --entity-type clients`); with no
AlterClientQuotas here yet, the broker config `controller_mutation_rate` is every client's
quota, like Kafka's `<default>` entity. Unset: no quota.

Owned by the broker's event loop; not thread-safe.
"""
from __future__ import annotations

import math
import time
from typing import Callable

QUOTA_WINDOW_S = 11.0     # quota.window.num (11) x quota.window.size.seconds (1)


class ControllerMutationQuota:
    def __init__(self, rate_of: Callable[[], float], clock: Callable[[], float] = time.monotonic) -> None:
        self._rate_of = rate_of
        self._clock = clock
        self._buckets: dict[str, list[float]] = {}      # client id -> [tokens, when last refilled]

    def _bucket(self, client_id: str, rate: float) -> list[float]:
        now = self._clock()
        burst = rate * QUOTA_WINDOW_S
        bucket = self._buckets.setdefault(client_id, [burst, now])
        bucket[0] = min(burst, bucket[0] + (now - bucket[1]) * rate)
        bucket[1] = now
        return bucket

    def throttle_ms(self, client_id: str | None) -> int:
        """0 if the client may mutate now, else how long until its bucket is no longer empty."""
        rate = self._rate_of()
        if not math.isfinite(rate):
            return 0
        tokens = self._bucket(client_id or "", rate)[0]
        return 0 if tokens > 0 else max(1, math.ceil(-tokens / rate * 1000))

    def record(self, client_id: str | None, partitions: int) -> None:
        rate = self._rate_of()
        if math.isfinite(rate) and partitions > 0:
            self._bucket(client_id or "", rate)[0] -= partitions
