"""The broker's listener: asyncio TCP server, request framing and response writing.

Each connection is served by one task that reads a frame, answers it, then reads the next,
so responses leave in request order, as Kafka's SocketServer guarantees by muting a
channel while its request is in flight. Clients pipeline; pipelined frames wait in the
socket buffer.

Framing enforces `socket.request.max.bytes` on the 4-byte size prefix before reading the
body, so a huge or negative prefix costs nothing and closes only that connection.

Fetch responses are written zero-copy: the encoded headers go through the transport and the
record bytes go from the segment file to the socket with sendfile (`loop.sendfile`).
"""
from __future__ import annotations

import asyncio
import logging
import struct

from kafka.protocol.schemas.fields.codecs.types import Int32, UnsignedVarInt32

from engine.protocol.dispatch import CloseConnection, ZeroCopyResponse, dispatch

log = logging.getLogger(__name__)
_SIZE = struct.Struct(">i")


class BrokerListener:
    def __init__(self, broker, host: str, port: int, max_request_bytes: int) -> None:
        self.broker = broker
        self.host = host
        self.port = port
        self.max_request_bytes = max_request_bytes
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task] = set()
        self._closing = False

    async def start(self) -> None:
        self._closing = False
        self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True,
                                                  limit=1 << 20)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._closing = True   # a connection accepted from here on is closed at once
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        try:
            await asyncio.wait_for(self._server.wait_closed(), 5)
        except asyncio.TimeoutError:
            log.warning("Listener on port %d: connections still open after close", self.port)
        self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        peer = writer.get_extra_info("peername") or ("?", 0)
        try:
            await self._serve_requests(reader, writer, peer[0])
        except CloseConnection as exc:
            log.warning("Closing connection from %s: %s", peer, exc)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            pass
        except Exception:  # noqa: BLE001 - one bad request must not take the listener down
            log.exception("Unexpected error serving %s; closing the connection", peer)
        finally:
            self._connections.discard(task)
            writer.transport.abort()

    async def _serve_requests(self, reader, writer, client_host: str) -> None:
        while not self._closing:
            (size,) = _SIZE.unpack(await reader.readexactly(4))
            if size <= 0 or size > self.max_request_bytes:
                raise CloseConnection(f"request size {size} outside 1..{self.max_request_bytes} "
                                      "(socket.request.max.bytes)")
            frame = await reader.readexactly(size)
            response = await dispatch(self.broker, frame, client_host)
            if response is None:
                continue
            if isinstance(response, ZeroCopyResponse):
                await _write_zero_copy(writer, response)
            else:
                writer.write(response)
                await writer.drain()


async def _write_zero_copy(writer: asyncio.StreamWriter, response: ZeroCopyResponse) -> None:
    """Write the encoded parts, and sendfile each slice's bytes in place of its marker."""
    try:
        frame = response.frame
        prefix_of = (lambda n: UnsignedVarInt32.encode(n + 1)) if response.compact else Int32.encode
        placeholders = [prefix_of(len(m)) + m for m in response.markers]
        sizes = [s.size for s in response.slices]
        # The frame's size field counted the markers; recount with the real prefixes and bytes.
        total = len(frame) - 4 - sum(map(len, placeholders)) + sum(len(prefix_of(n)) + n for n in sizes)
        writer.write(_SIZE.pack(total))
        position = 4
        loop = asyncio.get_running_loop()
        for placeholder, file_slice in zip(placeholders, response.slices):
            at = frame.index(placeholder, position)
            writer.write(bytes(frame[position:at]) + prefix_of(file_slice.size))
            position = at + len(placeholder)
            await writer.drain()
            with open(file_slice.fileno(), "rb", buffering=0, closefd=False) as handle:
                await loop.sendfile(writer.transport, handle, file_slice.position, file_slice.size)
        writer.write(bytes(frame[position:]))
        await writer.drain()
    finally:
        for file_slice in response.slices:
            file_slice.close()
