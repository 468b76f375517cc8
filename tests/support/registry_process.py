"""Run the real schema registry (`python -m engine registry`) as a child process on a free port."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.engine_process import ROOT, free_port_range

READY_MARKER = "registry ready:"
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class RegistryProcess:
    def __init__(self, bootstrap: str, log_dir: Path, extra_args: list[str] | None = None, name: str = "registry",
                 env: dict[str, str] | None = None) -> None:
        self.bootstrap = bootstrap
        self.extra_args = list(extra_args or [])
        self.port = free_port_range(1)
        self.log_path = Path(log_dir) / f"{name}.log"
        self.env = env or {}
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        scheme = "https" if "--tls-cert" in self.extra_args else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> "RegistryProcess":
        for _ in range(5):
            if self._start_once(timeout):
                return self
            self.port = free_port_range(1)
        raise RuntimeError(f"registry did not start:\n{self.log_text()}")

    def _start_once(self, timeout: float) -> bool:
        cmd = [sys.executable, "-m", "engine", "registry", "--bootstrap", self.bootstrap, "--port", str(self.port),
               *self.extra_args]
        start = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self._log_since(start)
            if self.process.poll() is not None:
                self.process = None
                if "address already in use" in text.lower():
                    return False
                raise RuntimeError(f"registry exited:\n{self.log_text()}")
            if READY_MARKER in text:
                return True
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"registry did not start in {timeout}s:\n{self.log_text()}")

    def _log_since(self, offset: int) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:] if self.log_path.exists() else ""

    def is_primary(self) -> bool:
        """What this instance logged last about the election."""
        lines = [line for line in self.log_text().splitlines() if "Primary" in line]
        return bool(lines) and "(this instance)" in lines[-1]

    def terminate(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(30)
        self.process = None
        return code

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None


def call(url: str, method: str = "GET", body=None, headers: dict | None = None, timeout: float = 60.0):
    """One REST call: (status, decoded JSON or text, response headers)."""
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": CONTENT_TYPE, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw, response_headers = response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        status, raw, response_headers = exc.code, exc.read(), exc.headers
    try:
        return status, json.loads(raw), response_headers
    except ValueError:
        return status, raw.decode(errors="replace"), response_headers
