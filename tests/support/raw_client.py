"""A bare Kafka protocol client over a socket, for sending exactly the bytes a test wants."""
from __future__ import annotations

import socket
import struct

from kafka.protocol.api_message import ApiMessage


class RawClient:
    def __init__(self, port: int, timeout: float = 10.0, client_id: str = "raw-test") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.correlation_id = 0
        self.client_id = client_id

    def close(self) -> None:
        self.sock.close()

    def send_bytes(self, payload: bytes) -> None:
        self.sock.sendall(payload)

    def request(self, request: ApiMessage, version: int, response_class: type[ApiMessage]):
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id=self.client_id)
        self.sock.sendall(request.encode(version=version, header=True, framed=True))
        frame = self.read_frame()
        if frame is None:
            return None
        return response_class.decode(frame, version=version, header=True)

    def read_frame(self) -> bytes | None:
        """The next response frame, or None if the broker closed the connection."""
        head = self._read_exactly(4)
        if head is None:
            return None
        (size,) = struct.unpack(">i", head)
        return self._read_exactly(size)

    def is_closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            return True

    def _read_exactly(self, size: int) -> bytes | None:
        chunks, remaining = [], size
        while remaining:
            try:
                chunk = self.sock.recv(remaining)
            except (ConnectionResetError, BrokenPipeError):
                return None
            if not chunk:
                return None
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
