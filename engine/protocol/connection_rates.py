"""One broker's connection creation rates (KIP-612), as Kafka's ConnectionQuotas measures them.

Three limits, each measured as Kafka's quota sensors measure (engine/broker/byte_rate_quota.py's
SampledRate: `quota.window.num` samples of `quota.window.size.seconds`):

- `max.connection.creation.rate` (default 2^31-1): the connections all of the broker's listeners
  accept, except those of the inter-broker listener when there is more than one listener (Kafka's
  protected listener, so that clients cannot use up the rate replication and tools need);
- `listener.name.<listener>.max.connection.creation.rate`: one listener's. A listener without its
  own takes the broker-wide value (Kafka's listener configs fall back to the unprefixed name), so
  the inter-broker listener is held to that number too, by its own rate, apart from the others';
- `connection_creation_rate` of an IP entity (AlterClientQuotas; the address's own, else the
  default IP's).

Over its listener's or the broker's rate, the connection just accepted waits before it is served
- the throttle time, (rate - quota) / quota x window, at most one quota window, the longer of the
two - and the listener accepts nothing meanwhile, as Kafka's Acceptor blocks: later clients wait
in the kernel's accept backlog, and nobody is refused. Over its address's rate, a connection is
accepted, held unserved for its throttle time and then closed, as Kafka's Acceptor delays the
close of a throttled connection, so that a client's reconnects slow down instead of storming; it
is taken back out of its address's, listener's and broker's rates, as Kafka un-records it.

The quotas are read on every accept, so a change at run time (per broker or cluster-wide) applies
to the next connection; one already waiting keeps its wait, as in Kafka. Every accept is counted
whatever the quotas, for the metrics (Kafka's `connection-accept-rate` and
`connection-accept-throttle-time`, engine/metrics/collector.py). Time is the engine's clock.
One per broker, for all its listeners; owned by the event loop.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from engine import clock
from engine.broker.byte_rate_quota import SampledRate
from engine.cluster import client_quotas as CQ

RATE = "max.connection.creation.rate"


@dataclass
class Throttles:
    """Kafka's throttle-time sensor of a listener: how many accepts it throttled, for how long."""
    count: int = 0
    total_ms: int = 0

    def record(self, ms: int) -> None:
        self.count += 1
        self.total_ms += ms


@dataclass
class ListenerRate:
    """One listener's: the connections it accepted, and what throttled them."""
    rate: SampledRate = field(default_factory=SampledRate)
    throttles: Throttles = field(default_factory=Throttles)      # by its own or the broker's rate
    ip_throttles: Throttles = field(default_factory=Throttles)   # by an address's connection_creation_rate


class _Window:
    """The quota window of one measurement, read from the config once."""
    __slots__ = ("now", "samples", "window_ms")

    def __init__(self, config) -> None:
        self.now = clock.now_ms()
        self.samples = config.get("quota.window.num")
        self.window_ms = config.get("quota.window.size.seconds") * 1000

    def record(self, rate: SampledRate, value: int) -> None:
        rate.record(value, self.now, samples=self.samples, window_ms=self.window_ms)

    def measure(self, rate: SampledRate) -> float:
        return rate.measure(self.now, samples=self.samples, window_ms=self.window_ms)

    def throttle_ms(self, rate: SampledRate, quota: float) -> int:
        """Count one connection; the time that brings the rate back to `quota`, 0 if within it
        (Kafka's QuotaUtils.boundedThrottleTime, bounded by one quota window)."""
        self.record(rate, 1)
        observed = self.measure(rate)
        if observed <= quota:
            return 0
        if quota <= 0:
            return self.window_ms
        span = rate.window_size_ms(self.now, samples=self.samples, window_ms=self.window_ms)
        return min(max(1, round((observed - quota) / quota * span)), self.window_ms)


class ConnectionRates:
    def __init__(self, image: Callable[[], Any], config: Callable[[], Any]) -> None:
        self._image = image          # () -> the broker's metadata image (its client quotas)
        self._config = config        # () -> the broker's BrokerConfig
        self._broker = SampledRate()
        self._listeners: dict[str, ListenerRate] = {}
        self._ips: dict[str, SampledRate] = {}

    def listener(self, name: str) -> ListenerRate:
        found = self._listeners.get(name)
        if found is None:
            found = self._listeners[name] = ListenerRate()
        return found

    def accept(self, listener: str, *, protected: bool) -> int:
        """Count a connection `listener` accepted; how long (ms) it waits before it is served,
        0 if within the listener's and the broker's rates. `protected`: the inter-broker
        listener of a broker with several, which the broker-wide rate neither counts nor holds."""
        config = self._config()
        window = _Window(config)
        broker_ms = 0 if protected else window.throttle_ms(self._broker, config.get(RATE))
        own = self.listener(listener)
        throttle_ms = max(broker_ms, window.throttle_ms(own.rate, config.listener_value(listener, RATE)))
        if throttle_ms:
            own.throttles.record(throttle_ms)
        return throttle_ms

    def ip_throttle_ms(self, listener: str, address: str, *, protected: bool) -> int:
        """Count a connection accepted from `address`; how long (ms) to hold it before closing it,
        0 if it is within its address's rate (or there is none)."""
        quota = CQ.ip_rate(self._image().client_quotas, address)
        if quota is None:
            return 0
        window = _Window(self._config())
        rate = self._ips.get(address)
        if rate is None:
            for idle in [a for a, r in self._ips.items()
                         if r.expired(window.now, samples=window.samples, window_ms=window.window_ms)]:
                del self._ips[idle]
            rate = self._ips[address] = SampledRate()
        throttle_ms = window.throttle_ms(rate, quota)
        if throttle_ms:      # never served: out of every rate it was counted in
            own = self.listener(listener)
            window.record(rate, -1)
            window.record(own.rate, -1)
            if not protected:
                window.record(self._broker, -1)
            own.ip_throttles.record(throttle_ms)
        return throttle_ms

    def accept_rate(self, listener: str | None = None) -> float:
        """Connections per second over the quota window: one listener's, or (None) the broker's."""
        rate = self._broker if listener is None else self.listener(listener).rate
        return max(0.0, _Window(self._config()).measure(rate))
