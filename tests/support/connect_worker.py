"""Run a real Connect worker (`python -m engine connect distributed|standalone`) as a child
process on a free port, and talk to its REST API with a plain HTTP client (urllib)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.engine_process import ROOT, free_port_range
from tests.support.waiting import wait_until

READY_MARKER = "connect ready:"

# Short timers so a test sees rebalances and commits in seconds (the engine under test allows
# sessions this short: tests.support.groups.GROUP_TEST_CONFIGS).
FAST_WORKER = {
    "session.timeout.ms": "3000",
    "heartbeat.interval.ms": "500",
    "scheduled.rebalance.max.delay.ms": "1500",
    "offset.flush.interval.ms": "1000",
    "consumer.session.timeout.ms": "3000",
    "consumer.heartbeat.interval.ms": "500",
    "config.storage.replication.factor": "1",
    "offset.storage.replication.factor": "1",
    "status.storage.replication.factor": "1",
    "offset.storage.partitions": "3",
    "status.storage.partitions": "2",
}


class ConnectWorker:
    def __init__(self, directory: Path, bootstrap: str, *, group: str, mode: str = "distributed",
                 settings: dict[str, str] | None = None, connectors: list[dict[str, str]] | None = None,
                 name: str = "worker") -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.mode = mode
        self.name = name
        self.port = free_port_range(1)
        props = {"bootstrap.servers": bootstrap, "listeners": f"http://127.0.0.1:{self.port}", **FAST_WORKER}
        if mode == "distributed":
            props.update({"group.id": group, "config.storage.topic": f"{group}-configs",
                          "offset.storage.topic": f"{group}-offsets", "status.storage.topic": f"{group}-status"})
        else:
            props["offset.storage.file.filename"] = str(self.directory / f"{name}.offsets")
        props.update(settings or {})
        self.properties = self.directory / f"{name}.properties"
        self.properties.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.connector_files = []
        for i, connector in enumerate(connectors or []):
            path = self.directory / f"{name}-connector-{i}.properties"
            path.write_text("".join(f"{k}={v}\n" for k, v in connector.items()))
            self.connector_files.append(path)
        self.log_path = self.directory / f"{name}.log"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> "ConnectWorker":
        self.spawn()
        return self.wait_ready(timeout)

    def spawn(self) -> "ConnectWorker":
        log = open(self.log_path, "ab")
        cmd = [sys.executable, "-m", "engine", "connect", self.mode, str(self.properties),
               *map(str, self.connector_files)]
        self.process = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        return self

    def wait_ready(self, timeout: float = 60.0) -> "ConnectWorker":
        wait_until(lambda: self._ready(), timeout, message=f"{self.name} to start")
        return self

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.name} exited with {self.process.returncode}:\n{self.log_text()}")
        return READY_MARKER in self.log_text() and request(self, "GET", "/")[0] == 200

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def terminate(self, timeout: float = 60.0) -> int:
        assert self.process is not None
        self.process.terminate()
        code = self.process.wait(timeout)
        self.process = None
        return code

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


def start_all(workers: list[ConnectWorker]) -> list[ConnectWorker]:
    """Start workers side by side (each takes a few seconds to open its stores)."""
    for worker in workers:
        worker.spawn()
    return [worker.wait_ready() for worker in workers]


def request(worker, method: str, path: str, body=None, *, raw: bytes | None = None):
    """(status, parsed JSON or None, headers) of one REST call; errors are answers, not raises."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(worker.url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as response:
            text = response.read()
            return response.status, json.loads(text) if text else None, dict(response.headers)
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, json.loads(text) if text else None, dict(error.headers)
    except OSError:
        return 0, None, {}


def status_of(worker, connector: str) -> dict | None:
    code, body, _ = request(worker, "GET", f"/connectors/{connector}/status")
    return body if code == 200 else None


def running(worker, connector: str, tasks: int = 1) -> dict | None:
    """The connector's status once it and `tasks` tasks are RUNNING, else None."""
    status = status_of(worker, connector)
    if status and status["connector"]["state"] == "RUNNING" and len(status["tasks"]) == tasks and \
            all(t["state"] == "RUNNING" for t in status["tasks"]):
        return status
    return None
