"""A broker's outbound Kafka-protocol connection (followers fetching from their leader).

Requests are encoded and responses decoded by kafka.protocol; one request is in flight at a
time, which is all a replica fetcher needs. On a TLS or SASL listener it connects with TLS
and logs in as the internal principal first (engine/security/inter_broker.py).
"""
from __future__ import annotations

import asyncio
import struct

from kafka.protocol.api_message import ApiMessage

from engine.security import inter_broker

_SIZE = struct.Struct(">i")


class BrokerConnection:
    def __init__(self, host: str, port: int, client_id: str, security=None) -> None:
        self.host, self.port, self.client_id = host, port, client_id
        self.security = security         # engine.security.settings.SecuritySettings, None: PLAINTEXT
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._correlation_id = 0

    async def request(self, request: ApiMessage, version: int, response_class: type[ApiMessage],
                      timeout: float = 30.0) -> ApiMessage:
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancellation that
        # arrives as the awaited read completes, and a fetcher being stopped would run on.
        if self._writer is None:
            await self._open(timeout)
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

    async def _open(self, timeout: float) -> None:
        tls = self.security.client_ssl if self.security is not None else None
        async with asyncio.timeout(timeout):
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20, ssl=tls)
        if self.security is not None and self.security.sasl:
            try:
                await inter_broker.login(self, self.security, timeout)
            except BaseException:
                self.close()
                raise

    def close(self) -> None:
        if self._writer is not None:
            self._writer.transport.abort()
        self._reader = self._writer = None
