"""A TCP proxy that holds every connection until the test opens its gate: a cluster that hangs
(accepts connections, answers nothing) and later recovers, without any timing in the test."""
from __future__ import annotations

import socket
import threading


class GatedProxy:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.target = (host, target_port)
        self._listener = socket.create_server((host, 0))
        self.port = self._listener.getsockname()[1]
        self._gate = threading.Event()
        self._sockets: list[socket.socket] = [self._listener]
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def open(self) -> None:
        """From now on, held and new connections are forwarded to the target."""
        self._gate.set()

    def close(self) -> None:
        self._gate.set()
        with self._lock:
            for sock in self._sockets:
                sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._sockets.append(client)
            threading.Thread(target=self._hold_then_forward, args=(client,), daemon=True).start()

    def _hold_then_forward(self, client: socket.socket) -> None:
        self._gate.wait()
        try:
            upstream = socket.create_connection(self.target)
        except OSError:
            client.close()
            return
        with self._lock:
            self._sockets.append(upstream)
        threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()
        _pump(client, upstream)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
