"""How a group member's client host reads. Kafka gives it as Java's InetAddress.toString(): "/ip",
or "hostname/ip" when the broker resolved the name; the console shows "ip" or "hostname (ip)"."""
from __future__ import annotations


def client_host_shown(client_host: str) -> str:
    name, slash, address = (client_host or "").partition("/")
    if not slash:
        return client_host or ""
    return f"{name} ({address})" if name else address
