"""Run the real engine (`python -m engine serve`) as a child process on free ports."""
from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port_range(count: int, attempts: int = 200) -> int:
    """A base port P such that P..P+count-1 are all free on 127.0.0.1 right now."""
    for _ in range(attempts):
        base = random.randint(20000, 60000 - count)
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


class EngineProcess:
    def __init__(self, data_dir: Path, brokers: int = 3, configs: dict[str, str] | None = None,
                 admin: bool = True) -> None:
        self.data_dir = Path(data_dir)
        self.brokers = brokers
        self.configs = configs or {}
        self.admin = admin            # False: no admin interface, the cluster looks like plain Kafka
        self.port = free_port_range(brokers + 1)  # the brokers and, after them, the admin interface
        self.process: subprocess.Popen | None = None
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}-engine.log"

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.port + i}" for i in range(self.brokers))

    @property
    def ports(self) -> list[int]:
        return [self.port + i for i in range(self.brokers)]

    def start(self, timeout: float = 30.0) -> "EngineProcess":
        cmd = [sys.executable, "-m", "engine", "serve", "--data-dir", str(self.data_dir),
               "--brokers", str(self.brokers), "--host", "127.0.0.1", "--port", str(self.port)]
        for name, value in self.configs.items():
            cmd += ["--config", f"{name}={value}"]
        if not self.admin:
            cmd.append("--no-admin")
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"engine exited with {self.process.returncode}:\n{self.log_text()}")
            if all(_can_connect(p) for p in self.ports):
                return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"engine did not start in {timeout}s:\n{self.log_text()}")

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


def _can_connect(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False
