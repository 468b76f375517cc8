"""The console served for real by daphne, as a child process on a free port."""
from __future__ import annotations

import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.support.engine_process import free_port_range
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    """`manage.py ARGS` in a child process with `env` (its DATABASE_URL, REDIS_URL...)."""
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True,
                          text=True)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/login/", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def start_daphne(env: dict, log_path: Path) -> tuple[subprocess.Popen, str]:
    """daphne on a free port, and its URL. If another process took the port before daphne bound
    it, daphne exits and gets a fresh port; its own "Listening" line tells that the server
    answering is ours."""
    for _ in range(5):
        port = free_port_range(1)
        start = log_path.stat().st_size if log_path.exists() else 0
        with open(log_path, "ab") as log:
            daphne = subprocess.Popen([str(Path(sys.executable).parent / "daphne"), "-b", "127.0.0.1", "-p",
                                       str(port), "console.asgi:application"], cwd=ROOT, env=env, stdout=log,
                                      stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"

        def listening() -> bool:
            with open(log_path, "rb") as log:
                log.seek(start)
                return f"Listening on TCP address 127.0.0.1:{port}".encode() in log.read()

        wait_until(lambda: daphne.poll() is not None or (listening() and _answers(url)), timeout=60,
                   message="daphne to answer")
        if daphne.poll() is None:
            return daphne, url
        with open(log_path, "rb") as log:
            log.seek(start)
            if b"Address already in use" not in log.read():
                raise AssertionError(log_path.read_text())
    raise RuntimeError("daphne found no free port after 5 tries")


def stop_daphne(daphne: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if daphne is still up after its graceful shutdown had its time:
    it waits up to its application close timeout (10 s) for open websockets - a page a test
    left open - and longer on a loaded machine."""
    daphne.terminate()
    try:
        daphne.wait(30)
    except subprocess.TimeoutExpired:
        daphne.kill()
        daphne.wait(10)
