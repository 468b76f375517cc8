"""Kafka's controller mutation quota (KIP-599): how fast one client may create and delete
partitions.

Each quota bucket is a token bucket of `controller_mutation_rate` partitions per second, with
a burst of that rate times Kafka's quota window (11 windows of 1 s). A topic of CreateTopics,
CreatePartitions or DeleteTopics is accepted while the client's bucket is not empty, and its
partitions are taken from it (the bucket may go negative: one big request is not refused);
once the bucket is empty the topic is refused with THROTTLING_QUOTA_EXCEEDED and
`throttle_time_ms` says when the bucket refills (clients of older versions, which do not know
that error, are accepted and told to back off by throttle_time_ms instead).

The rate of a client is its client quota (AlterClientQuotas, per user / client-id entity,
resolved in Kafka's order by engine/cluster/client_quotas.py); with none set, the broker
config `controller_mutation_rate` (unset: no quota) applies to each client id on its own,
like a `<default>` client-id entity.

Owned by the broker's event loop; not thread-safe.
"""
from __future__ import annotations

import math
import time
from typing import Callable

from engine.cluster import client_quotas as CQ

QUOTA_WINDOW_S = 11.0     # quota.window.num (11) x quota.window.size.seconds (1)
KEY = "controller_mutation_rate"
# (user, client id) -> (partitions per second, the bucket that client shares)
QuotaOf = Callable[[str, str], tuple[float, tuple[str, str]]]


def quota_of(image, config) -> QuotaOf:
    """A broker's quota lookup: the client quotas of the metadata image, else its config."""
    def lookup(user: str, client_id: str) -> tuple[float, tuple[str, str]]:
        found = CQ.resolve(image().client_quotas, KEY, user, client_id)
        return found if found is not None else (config().get(KEY), ("", client_id))
    return lookup


class ControllerMutationQuota:
    def __init__(self, quota: QuotaOf, clock: Callable[[], float] = time.monotonic) -> None:
        self._quota = quota
        self._clock = clock
        self._buckets: dict[tuple[str, str], list[float]] = {}      # bucket -> [tokens, when last refilled]

    def _bucket(self, tags: tuple[str, str], rate: float) -> list[float]:
        now = self._clock()
        burst = rate * QUOTA_WINDOW_S
        bucket = self._buckets.setdefault(tags, [burst, now])
        bucket[0] = min(burst, bucket[0] + (now - bucket[1]) * rate)
        bucket[1] = now
        return bucket

    def throttle_ms(self, client_id: str | None, user: str = CQ.ANONYMOUS) -> int:
        """0 if the client may mutate now, else how long until its bucket is no longer empty."""
        rate, tags = self._quota(user, client_id or "")
        if not math.isfinite(rate):
            return 0
        tokens = self._bucket(tags, rate)[0]
        return 0 if tokens > 0 else max(1, math.ceil(-tokens / rate * 1000))

    def record(self, client_id: str | None, partitions: int, user: str = CQ.ANONYMOUS) -> None:
        rate, tags = self._quota(user, client_id or "")
        if math.isfinite(rate) and partitions > 0:
            self._bucket(tags, rate)[0] -= partitions
