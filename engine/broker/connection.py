"""A broker's outbound Kafka-protocol connection (followers fetching from their leader).

Requests are encoded and responses decoded by kafka.protocol; one request is in flight at a
time, which is all a replica fetcher needs.
"""
from __future__ import annotations

import asyncio
import struct

from kafka.protocol.api_message import ApiMessage

_SIZE = struct.Struct(">i")


class BrokerConnection:
    def __init__(self, host: str, port: int, client_id: str) -> None:
        self.host, self.port, self.client_id = host, port, client_id
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._correlation_id = 0

    async def request(self, request: ApiMessage, version: int, response_class: type[ApiMessage],
                      timeout: float = 30.0) -> ApiMessage:
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancellation that
        # arrives as the awaited read completes, and a fetcher being stopped would run on.
        if self._writer is None:
            async with asyncio.timeout(timeout):
                self._reader, self._writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
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
