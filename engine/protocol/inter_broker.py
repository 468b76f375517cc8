"""The brokers' own connections to each other, inside the process.

Kafka's brokers talk over an inter-broker listener, and only a principal with ClusterAction on
the cluster may fetch as a replica there. The engine's brokers share one process, so a
broker connects to another with a socket pair instead of a TCP port: each end is a real
socket carrying the Kafka protocol (framing, kafka.protocol codecs, zero-copy Fetch), but no
client socket can reach one. The serving listener knows which broker opened it, so a Fetch
with that broker's replica id is known to come from that replica (k01_fetch.py), and the
connection is not counted against `max.connections`, so clients that take every place cannot
stop replication (Kafka counts its inter-broker connections but never holds them: its
protected listener; engine/protocol/connection_quotas.py).

The connecting side gets the streams a TCP connection would give; a broker whose listener is
not serving refuses, as a stopped broker's port would.
"""
from __future__ import annotations

import asyncio


class InterBrokerNetwork:
    def __init__(self) -> None:
        self._listeners: dict[int, object] = {}     # node id -> engine.protocol.listener.Listener

    def attach(self, node_id: int, listener) -> None:
        self._listeners[node_id] = listener

    async def connect(self, from_node: int, to_node: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        listener = self._listeners.get(to_node)
        if listener is None or not listener.serving:
            raise ConnectionRefusedError(f"broker {to_node} is not serving")
        return await listener.accept_inter_broker(from_node)
