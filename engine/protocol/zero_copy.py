"""Writing a Fetch answer zero-copy: the encoded headers through the transport, the record
bytes from the segment file to the socket with sendfile (`loop.sendfile`), in place of the
markers k01_fetch put in the frame. Under TLS the kernel cannot encrypt, so the bytes are
read and written in chunks instead, as Kafka does for SSL listeners (asyncio's own sendfile
fallback stalled on TLS transports).
"""
from __future__ import annotations

import asyncio
import os
import struct

from kafka.protocol.schemas.fields.codecs.types import Int32, UnsignedVarInt32

from engine.protocol.dispatch import ZeroCopyResponse

_SIZE = struct.Struct(">i")
_COPY_CHUNK = 1 << 20


async def _write_copied(writer: asyncio.StreamWriter, file_slice) -> None:
    """A slice's bytes through the transport (TLS), a chunk at a time so memory stays bounded."""
    done = 0
    while done < file_slice.size:
        chunk = os.pread(file_slice.fileno(), min(_COPY_CHUNK, file_slice.size - done), file_slice.position + done)
        if not chunk:
            raise ConnectionError("segment file ended before the slice did")   # truncated under us: drop the connection
        writer.write(chunk)
        done += len(chunk)
        await writer.drain()



async def write_zero_copy(writer: asyncio.StreamWriter, response: ZeroCopyResponse) -> None:
    """Write the encoded parts, and sendfile each slice's bytes in place of its marker.
    The markers appear in the frame in the order of `response.markers` (k01_fetch)."""
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
        tls = writer.get_extra_info("ssl_object") is not None
        for placeholder, file_slice in zip(placeholders, response.slices):
            at = frame.index(placeholder, position)
            writer.write(bytes(frame[position:at]) + prefix_of(file_slice.size))
            position = at + len(placeholder)
            await writer.drain()
            if tls:
                await _write_copied(writer, file_slice)
            else:
                with open(file_slice.fileno(), "rb", buffering=0, closefd=False) as handle:
                    await loop.sendfile(writer.transport, handle, file_slice.position, file_slice.size)
        writer.write(bytes(frame[position:]))
        await writer.drain()
    finally:
        for file_slice in response.slices:
            file_slice.close()
