"""Run the real engine (`python -m engine serve`) as a child process on free ports."""
from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

ROOT = Path(__file__).resolve().parents[2]


# Below Linux's ephemeral range (32768-60999 by default), so a port that was free when we
# checked is not handed to some client's outgoing connection before the engine binds it.
PORT_LOW, PORT_HIGH = 10000, 32000
# Ports in that range that browsers refuse to open (Chromium's restricted ports: ERR_UNSAFE_PORT).
BROWSER_UNSAFE_PORTS = frozenset({10080})
READY_MARKER = "engine ready:"   # `python -m engine serve` prints it once every listener is bound


def free_port_range(count: int, attempts: int = 200) -> int:
    """A base port P such that P..P+count-1 are all free on 127.0.0.1 right now.

    Another process may still take one before our child binds it: `EngineProcess.start`
    retries on fresh ports when the engine exits because of that."""
    for _ in range(attempts):
        base = random.randint(PORT_LOW, PORT_HIGH - count)
        if BROWSER_UNSAFE_PORTS.intersection(range(base, base + count)):
            continue
        sockets = []
        try:
            for port in range(base, base + count):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", port))
                sockets.append(sock)
            return base
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    raise RuntimeError("no free port range found")


@contextlib.contextmanager
def refused_port():
    """A port on which nothing listens and nothing can: it is bound (so no other process gets
    it) but never listens, so connecting to it is refused at once - for "cluster down" tests."""
    for _ in range(200):
        sock = socket.socket()
        try:
            sock.bind(("127.0.0.1", random.randint(PORT_LOW, PORT_HIGH)))
        except OSError:
            sock.close()
            continue
        try:
            yield sock.getsockname()[1]
        finally:
            sock.close()
        return
    raise RuntimeError("no free port found")


class EngineProcess:
    def __init__(self, data_dir: Path, brokers: int = 3, configs: dict[str, str] | None = None,
                 admin: bool = True, extra_args: list[str] | None = None, tls=None) -> None:
        self.tls = tls                # an ssl.SSLContext for the readiness check of SSL / SASL_SSL listeners
        self.extra_args = list(extra_args or [])     # more `engine serve` options, e.g. ["--rack", "0=a"]
        self.data_dir = Path(data_dir)
        self.brokers = brokers
        self.configs = configs or {}
        self.admin = admin            # False: no admin interface, the cluster looks like plain Kafka
        self.port = free_port_range(brokers + 1)  # the brokers and, after them, the admin interface
        self.process: subprocess.Popen | None = None
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}-engine.log"
        self._started_before = False

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.port + i}" for i in range(self.brokers))

    @property
    def admin_token(self) -> str:
        """The admin interface's token, as the engine stored it in its data dir."""
        return (self.data_dir / "admin.token").read_text().strip()

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.port + self.brokers}"

    @property
    def ports(self) -> list[int]:
        return [self.port + i for i in range(self.brokers)]

    def start(self, timeout: float = 30.0) -> "EngineProcess":
        """Start the engine and wait until every broker answers ApiVersions.

        On its first start the engine may find a port taken by another process since we
        picked it; it then gets a fresh range. A restart keeps its ports, as clients expect."""
        for _ in range(5):
            try:
                return self._start_once(timeout)
            except PortTakenError:
                if self._started_before:
                    raise
                self.port = free_port_range(self.brokers + 1)
        raise RuntimeError(f"no free ports after 5 tries:\n{self.log_text()}")

    def _start_once(self, timeout: float) -> "EngineProcess":
        cmd = [sys.executable, "-m", "engine", "serve", "--data-dir", str(self.data_dir),
               "--brokers", str(self.brokers), "--host", "127.0.0.1", "--port", str(self.port)]
        for name, value in self.configs.items():
            cmd += ["--config", f"{name}={value}"]
        if not self.admin:
            cmd.append("--no-admin")
        cmd += self.extra_args
        log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code, self.process = self.process.returncode, None
                if "address already in use" in self._log_since(log_start).lower():
                    raise PortTakenError(self.port)
                raise RuntimeError(f"engine exited with {code}:\n{self.log_text()}")
            # Our engine printed that it bound its ports, so the brokers answering are ours and
            # not another test run's that happened to pick the same ports.
            if READY_MARKER in self._log_since(log_start) and all(answers_api_versions(p, self.tls) for p in self.ports):
                self._started_before = True
                return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"engine did not start in {timeout}s:\n{self.log_text()}")

    def _log_since(self, offset: int) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:] if self.log_path.exists() else ""

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM and wait: the clean shutdown path. Returns the exit code."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout)
        self.process = None
        return code

    def kill(self) -> None:
        """SIGKILL: no flush, no checkpoint, no clean-shutdown marker."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


class PortTakenError(RuntimeError):
    pass


def answers_api_versions(port: int, tls=None) -> bool:
    """True once the broker on `port` answers an ApiVersions request (a listening socket
    alone is not enough: the broker may not serve requests yet)."""
    request = ApiVersionsRequest[0]()
    request.with_header(correlation_id=1, client_id="engine-ready")
    try:
        with contextlib.ExitStack() as stack:
            sock = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=1.0))
            if tls is not None:
                sock = stack.enter_context(tls.wrap_socket(sock, server_hostname="127.0.0.1"))
            sock.sendall(request.encode(version=0, header=True, framed=True))
            head = _recv_exactly(sock, 4)
            if head is None:
                return False
            frame = _recv_exactly(sock, struct.unpack(">i", head)[0])
            return frame is not None and ApiVersionsResponse.decode(frame, version=0, header=True).error_code == 0
    except (OSError, ValueError):
        return False


def _recv_exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = sock.recv(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
