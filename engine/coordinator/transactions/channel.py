"""The transaction coordinator's outbound requests to other brokers: WriteTxnMarkers to the
leaders of a transaction's partitions (Kafka's TransactionMarkerChannelManager) and, from
Produce, AddPartitionsToTxn's verify-only form to a transaction's coordinator (KIP-890).

One connection per peer broker over the inter-broker network (engine/protocol/inter_broker.py),
one request in flight on it at a time (a lock), reopened when the connection breaks. A peer that cannot be reached raises
ApiError(NOT_LEADER_OR_FOLLOWER / COORDINATOR_NOT_AVAILABLE as the caller says), so callers
treat it as "retry later".
"""
from __future__ import annotations

import asyncio
import logging

import kafka.errors as Errors
from kafka.protocol.api_message import ApiMessage

from engine.broker.connection import BrokerConnection
from engine.errors import ApiError

log = logging.getLogger(__name__)


class PeerChannel:
    def __init__(self, broker) -> None:
        self._broker = broker
        self._connections: dict[int, BrokerConnection] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    async def request(self, node_id: int, request: ApiMessage, version: int, response_class: type[ApiMessage], *,
                      timeout_s: float, unreachable=Errors.NotLeaderForPartitionError) -> ApiMessage:
        if node_id not in self._broker.image.brokers:
            raise ApiError(unreachable, f"broker {node_id} is not in the metadata")
        async with self._locks.setdefault(node_id, asyncio.Lock()):
            connection = self._connections.get(node_id)
            if connection is None:
                connection = self._connections[node_id] = BrokerConnection(
                    lambda: self._broker.inter_broker.connect(self._broker.node_id, node_id),
                    f"broker-{self._broker.node_id}-txn")
            try:
                return await connection.request(request, version, response_class, timeout=timeout_s)
            except (OSError, EOFError, asyncio.IncompleteReadError, TimeoutError) as exc:
                self._connections.pop(node_id, None)
                connection.close()
                raise ApiError(unreachable, f"broker {node_id}: {type(exc).__name__} {exc}") from None

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()
