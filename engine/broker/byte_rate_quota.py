"""Kafka's byte-rate client quotas (KIP-13): `producer_byte_rate` and `consumer_byte_rate`.

A client's quota is the first entity in Kafka's order that sets the key, for its user and
client id (engine/cluster/client_quotas.py `resolve`, shared with the controller mutation
quota); clients matched through one entity share one rate, except through a default name,
which gives each user / client id its own (Kafka's quota metric tags). No entity sets it: no
quota (Kafka 3 has no broker-wide default byte rate either).

The rate is measured as Kafka's quota sensors measure it (its `Rate` over a `SampledStat`):
bytes are added to the current sample, a sample lasts `quota.window.size.seconds`, at most
`quota.window.num` samples are kept and older ones are forgotten, and the rate is their sum
over the time they span - counted as at least `quota.window.num - 1` whole windows, so the
first bytes of a new client are not measured over a few milliseconds. When the rate after
recording exceeds the quota, the throttle time is Kafka's ClientQuotaManager's:
(rate - quota) / quota x that window, rounded to ms (unbounded, as Kafka's byte-rate quotas).

Time is the engine's clock (engine/clock.py), so tests can drive it. Rates of clients idle
for longer than the window are dropped when next measured (Kafka expires its sensors after
an hour; here a client's state is a few numbers).

Owned by the broker's event loop; not thread-safe.
"""
from __future__ import annotations

import collections
from typing import Callable

from engine import clock
from engine.cluster import client_quotas as CQ

PRODUCE, FETCH = "producer_byte_rate", "consumer_byte_rate"


class SampledRate:
    """Bytes per second over the last `samples` windows of `window_ms` (Kafka's Rate)."""

    __slots__ = ("_samples",)

    def __init__(self) -> None:
        self._samples: collections.deque[list[int]] = collections.deque()   # [window start ms, bytes]

    def record(self, value: int, now_ms: int, *, samples: int, window_ms: int) -> None:
        self._purge(now_ms, samples, window_ms)
        if not self._samples or now_ms - self._samples[-1][0] >= window_ms:
            self._samples.append([now_ms, 0])
            while len(self._samples) > samples:
                self._samples.popleft()
        self._samples[-1][1] += value

    def measure(self, now_ms: int, *, samples: int, window_ms: int) -> float:
        window_s = self.window_size_ms(now_ms, samples=samples, window_ms=window_ms) / 1000
        return sum(v for _, v in self._samples) / window_s

    def window_size_ms(self, now_ms: int, *, samples: int, window_ms: int) -> int:
        """The time the kept samples span, counted as at least samples - 1 whole windows."""
        self._purge(now_ms, samples, window_ms)
        elapsed = now_ms - self._samples[0][0] if self._samples else 0
        full_windows = elapsed // window_ms
        if full_windows < samples - 1:
            elapsed += (samples - 1 - full_windows) * window_ms
        return max(elapsed, 1)

    def expired(self, now_ms: int, *, samples: int, window_ms: int) -> bool:
        """True once every sample has left the window."""
        self._purge(now_ms, samples, window_ms)
        return not self._samples

    def _purge(self, now_ms: int, samples: int, window_ms: int) -> None:
        while self._samples and now_ms - self._samples[0][0] >= samples * window_ms:
            self._samples.popleft()


class ByteRateQuota:
    """One quota type (`producer_byte_rate` or `consumer_byte_rate`) of one broker."""

    def __init__(self, key: str, image: Callable, config: Callable) -> None:
        self.key = key
        self._image = image          # () -> the broker's metadata image (its client quotas)
        self._config = config        # () -> the broker's config (the quota window)
        self._rates: dict[tuple[str, str], SampledRate] = {}

    def record(self, nbytes: int, *, client_id: str | None, user: str = CQ.ANONYMOUS) -> int:
        """Count `nbytes` against the client's quota; the throttle time in ms (0: within it,
        or no quota). Bytes of clients without a quota are not counted."""
        found = CQ.resolve(self._image().client_quotas, self.key, user, client_id or "")
        if found is None:
            return 0
        quota, tags = found
        samples, window_ms = self._window()
        now = clock.now_ms()
        rate = self._rates.get(tags)
        if rate is None:
            self._forget_idle(now, samples, window_ms)
            rate = self._rates[tags] = SampledRate()
        rate.record(nbytes, now, samples=samples, window_ms=window_ms)
        observed = rate.measure(now, samples=samples, window_ms=window_ms)
        if observed <= quota:
            return 0
        window = rate.window_size_ms(now, samples=samples, window_ms=window_ms)
        return max(1, round((observed - quota) / quota * window))

    def unrecord(self, nbytes: int, *, client_id: str | None, user: str = CQ.ANONYMOUS) -> None:
        """Take back bytes counted by `record` that were never sent (a throttled Fetch is answered
        empty): Kafka records their negative in the current sample."""
        found = CQ.resolve(self._image().client_quotas, self.key, user, client_id or "")
        rate = None if found is None else self._rates.get(found[1])
        if rate is not None:
            samples, window_ms = self._window()
            rate.record(-nbytes, clock.now_ms(), samples=samples, window_ms=window_ms)

    def max_bytes_in_window(self, *, client_id: str | None, user: str = CQ.ANONYMOUS) -> float | None:
        """What the client's quota allows over the quota window's minimum span (quota x
        (quota.window.num - 1) x quota.window.size.seconds), None without a quota: Kafka caps a
        consumer's fetch size to it, so that one response cannot run far past the quota."""
        found = CQ.resolve(self._image().client_quotas, self.key, user, client_id or "")
        if found is None:
            return None
        samples, window_ms = self._window()
        return found[0] * (samples - 1) * window_ms / 1000

    def _window(self) -> tuple[int, int]:
        config = self._config()
        return config.get("quota.window.num"), config.get("quota.window.size.seconds") * 1000

    def _forget_idle(self, now_ms: int, samples: int, window_ms: int) -> None:
        """Drop the rates that measure nothing any more, so forgotten client ids cost nothing."""
        for tags in [t for t, r in self._rates.items() if r.expired(now_ms, samples=samples, window_ms=window_ms)]:
            del self._rates[tags]
