"""One listener's connection limits, as Kafka's ConnectionQuotas applies them.

- `max.connections` (default 2^31-1): at the limit the listener stops accepting until a
  connection closes; new clients wait in the kernel's accept backlog, as Kafka's Acceptor
  blocks in `waitForConnectionSlot`. Nothing is accepted only to be closed.
- `max.connections.per.ip` (default 2^31-1) and `max.connections.per.ip.overrides`
  (`host:count,host:count`, a host name or an address; the names are resolved when the
  value changes, as Kafka resolves them when the config is read): a connection over its
  address's limit is accepted, then closed at once (Kafka's TooManyConnectionsException).
  0 is allowed, for addresses that only an override lets in.
- A connection counts from the moment it is accepted, through its TLS handshake and its
  SASL login, until it is closed, so a client that never finishes a handshake still holds
  a place.
- The brokers' own connections (engine/protocol/inter_broker.py) are not counted, as Kafka
  exempts its inter-broker listener: a client that takes every place cannot stop replication.
- Connection creation rates (KIP-612: `max.connection.creation.rate`, per listener and per
  address) are engine/protocol/connection_rates.py's.

The limits are read from the broker config on each use, so dynamic changes apply at once; a
listener waiting for a place rechecks `max.connections` every second. Event-loop only.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import socket
from typing import Any, Callable

log = logging.getLogger(__name__)
_RECHECK_S = 1.0


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


class ConnectionQuotas:
    def __init__(self, config: Callable[[str], Any]) -> None:
        self._config = config
        self.count = 0
        self._per_ip: collections.Counter = collections.Counter()
        self._freed = asyncio.Event()
        self._overrides: tuple[str, dict[str, int]] = ("", {})

    # --- max.connections ---------------------------------------------------------------------

    def full(self) -> bool:
        return self.count >= self._config("max.connections")

    async def wait_for_slot(self) -> None:
        """Return once the listener may accept one more connection."""
        while self.full():
            self._freed.clear()
            try:
                await asyncio.wait_for(self._freed.wait(), _RECHECK_S)
            except asyncio.TimeoutError:
                pass

    # --- max.connections.per.ip ------------------------------------------------------------

    def max_for(self, address: str) -> int:
        return self._resolved_overrides().get(address, self._config("max.connections.per.ip"))

    def add(self, address: str) -> str | None:
        """Count a connection just accepted from `address`; the reason it must be closed instead."""
        limit = self.max_for(address)
        if self._per_ip[address] >= limit:
            return f"max.connections.per.ip ({limit}) reached for {address}"
        self._per_ip[address] += 1
        self.count += 1
        return None

    def remove(self, address: str) -> None:
        self.count -= 1
        self._per_ip[address] -= 1
        if not self._per_ip[address]:
            del self._per_ip[address]
        self._freed.set()

    def _resolved_overrides(self) -> dict[str, int]:
        raw = self._config("max.connections.per.ip.overrides")
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
