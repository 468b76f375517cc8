"""One broker's connection limits across its listeners, as Kafka's ConnectionQuotas applies them
(KIP-402, KIP-308).

- `max.connections` (default 2^31-1): the connections of all the broker's listeners together;
  `listener.name.<listener>.max.connections`: one listener's (a listener without its own takes
  `max.connections`, as Kafka's listener configs fall back to the unprefixed name). While its
  listener's or the broker's limit is reached, a listener's acceptor holds the connection it just
  accepted, unserved, and accepts nothing more: later clients wait in the kernel's accept backlog,
  as Kafka's Acceptor blocks in `waitForConnectionSlot`. Nothing is accepted only to be closed.
- Kafka's protected listener: the inter-broker listener of a broker with several is held by its
  own limit only. A connection it admits past the broker's limit makes room: the least recently
  used connection of another listener is closed (Kafka's `maxConnectionsExceeded`, which each of
  its processors checks on every poll, closing the Selector's `lowestPriorityChannel`). So does a
  `max.connections` lowered below the connections open, as Kafka's processors close the excess
  on the other listeners; a lowered listener or per-address limit closes nothing and only holds
  the next connections.
- `max.connections.per.ip` (default 2^31-1) and `max.connections.per.ip.overrides`
  (`host:count,host:count`, a host name or an address; the names are resolved when the value
  changes, as Kafka resolves them when the config is read): an address's connections on all the
  broker's listeners. A connection over its address's limit is accepted, then closed at once
  (Kafka's TooManyConnectionsException). 0 is allowed, for addresses that only an override lets in.
- A connection counts from the moment it is admitted, through its TLS handshake and its SASL
  login, until it is closed, so a client that never finishes a handshake still holds a place.
- The brokers' own connections (engine/protocol/inter_broker.py) are socket pairs that no
  acceptor sees, and are not counted. In Kafka they are TCP connections to the protected
  listener, counted and never held; either way clients that take every place cannot stop
  replication. Clients that connect to the inter-broker listener's port are counted, protected.
- Connection creation rates (KIP-612) are engine/protocol/connection_rates.py's.

The limits are read from the broker config on each use; the broker calls `reconfigured` on every
config change (per broker or cluster-wide), which wakes the waiting acceptors and closes the
excess of a lowered `max.connections` at once. One per broker, for all its listeners; the counts
are only its own, the connections their listeners'. Event-loop only.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import socket
from dataclasses import dataclass
from typing import Any, Callable

log = logging.getLogger(__name__)
MAX_CONNECTIONS = "max.connections"


def parse_overrides(value: str) -> dict[str, int]:
    """`host:count,host:count` -> {host: count}; the count follows the last ':' (IPv6 hosts)."""
    overrides = {}
    for entry in (part.strip() for part in value.split(",")):
        if not entry:
            continue
        host, sep, count = entry.rpartition(":")
        if not sep or not host or not count.strip().isdigit():
            raise ValueError(f"entry {entry!r} is not host:count")
        overrides[host.strip()] = int(count)
    return overrides


@dataclass
class ListenerConnections:
    """One listener's: its connections counted, and how long its acceptor held accepted ones
    (Kafka's AcceptorBlockedPercent meter, marked in nanoseconds)."""
    count: int = 0
    blocked_ns: int = 0


class ConnectionQuotas:
    def __init__(self, config: Callable[[], Any], listeners: Callable[[], list]) -> None:
        self._config = config          # () -> the broker's BrokerConfig
        self._listeners = listeners    # () -> the broker's Listeners (engine/protocol/listener.py)
        self.total = 0
        self._counts: dict[str, ListenerConnections] = {}
        self._per_ip: collections.Counter = collections.Counter()
        self._freed = asyncio.Event()
        self._overrides: tuple[str, dict[str, int]] = ("", {})

    def listener(self, name: str) -> ListenerConnections:
        found = self._counts.get(name)
        if found is None:
            found = self._counts[name] = ListenerConnections()
        return found

    # --- max.connections, broker-wide and per listener ----------------------------------------

    def slot_available(self, listener: str, *, protected: bool) -> bool:
        """Kafka's connectionSlotAvailable: under the listener's own limit and, unless it is the
        protected listener, under the broker's."""
        config = self._config()
        if self.listener(listener).count >= config.listener_value(listener, MAX_CONNECTIONS):
            return False
        return protected or self.total < config.get(MAX_CONNECTIONS)

    async def wait_for_slot(self, listener: str, *, protected: bool) -> None:
        """Return once `listener` may admit one more connection; the caller admits it before it
        awaits anything else, so that no other acceptor takes the place meanwhile."""
        while not self.slot_available(listener, protected=protected):
            self._freed.clear()
            await self._freed.wait()

    def blocked(self, listener: str, ns: int) -> None:
        self.listener(listener).blocked_ns += ns

    def reconfigured(self) -> None:
        """The broker's config changed: waiting acceptors recheck their limits, and a broker over
        a lowered max.connections closes its excess."""
        self._freed.set()
        self.close_excess()

    def close_excess(self) -> None:
        """Kafka's closeExcessConnections: while the broker holds more than max.connections,
        close the least recently used connection of a listener other than the protected one."""
        while self.total > self._config().get(MAX_CONNECTIONS):
            candidates = [(found, listener) for listener in self._listeners() if not listener.protected
                          for found in [listener.least_recently_used()] if found is not None]
            if not candidates:
                return
            (_, connection), listener = min(candidates, key=lambda candidate: candidate[0][0])
            listener.close_for_room(connection)      # takes it out of the counts at once, as Kafka's close

    # --- max.connections.per.ip ------------------------------------------------------------

    def max_for(self, address: str) -> int:
        return self._resolved_overrides().get(address, self._config().get("max.connections.per.ip"))

    def add(self, listener: str, address: str) -> str | None:
        """Count a connection `listener` just admitted from `address`; the reason it must be
        closed instead."""
        limit = self.max_for(address)
        if self._per_ip[address] >= limit:
            return f"max.connections.per.ip ({limit}) reached for {address}"
        self._per_ip[address] += 1
        self.listener(listener).count += 1
        self.total += 1
        return None

    def remove(self, listener: str, address: str) -> None:
        self.total -= 1
        self.listener(listener).count -= 1
        self._per_ip[address] -= 1
        if not self._per_ip[address]:
            del self._per_ip[address]
        self._freed.set()

    def _resolved_overrides(self) -> dict[str, int]:
        raw = self._config().get("max.connections.per.ip.overrides")
        if raw != self._overrides[0]:
            self._overrides = (raw, _resolve(parse_overrides(raw)))
        return self._overrides[1]


def _resolve(overrides: dict[str, int]) -> dict[str, int]:
    """Each host's addresses, as the peer addresses of accepted sockets read."""
    by_address = {}
    for host, count in overrides.items():
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except OSError as exc:
            log.warning("max.connections.per.ip.overrides: cannot resolve %s (%s); its override is not applied",
                        host, exc)
            continue
        for info in infos:
            by_address[info[4][0]] = count
    return by_address
