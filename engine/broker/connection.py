"""A broker's outbound Kafka-protocol connection to another broker of the process (followers
fetching from their leader, the transaction coordinator's markers).

It runs over the inter-broker network (engine/protocol/inter_broker.py): `open_streams`
returns the two streams of a fresh connection. Requests are encoded and responses decoded by
kafka.protocol; one request is in flight at a time, which is all its users need.
"""
from __future__ import annotations

import asyncio
import struct
from typing import Awaitable, Callable

from kafka.protocol.api_message import ApiMessage

_SIZE = struct.Struct(">i")
StreamOpener = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


class BrokerConnection:
    def __init__(self, open_streams: StreamOpener, client_id: str) -> None:
        self._open_streams = open_streams
        self.client_id = client_id
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._correlation_id = 0

    async def request(self, request: ApiMessage, version: int, response_class: type[ApiMessage],
                      timeout: float = 30.0) -> ApiMessage:
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancellation that
        # arrives as the awaited read completes, and a fetcher being stopped would run on.
        if self._writer is None:
            async with asyncio.timeout(timeout):
                self._reader, self._writer = await self._open_streams()
        self._correlation_id += 1
        request.API_VERSION = version
        request.with_header(correlation_id=self._correlation_id, client_id=self.client_id)
        try:
            self._writer.write(request.encode(header=True, framed=True))
            await self._writer.drain()
            async with asyncio.timeout(timeout):
                (size,) = _SIZE.unpack(await self._reader.readexactly(4))
                frame = await self._reader.readexactly(size)
        except BaseException:
            self.close()
            raise
        return response_class.decode(frame, version=version, header=True)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.transport.abort()
        self._reader = self._writer = None
