"""`make run` itself (console/stack.py): every process starts and serves, the first admin and
its password file are created, and Ctrl-C (SIGINT to the terminal's process group) stops
everything it started; `make run SECURE=1` logs the console in to an engine with ACLs on."""
from __future__ import annotations

import contextlib
import http.cookiejar
import os
import re
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.support.engine_process import ROOT, answers_api_versions, free_port_range
from tests.support.waiting import wait_until


def descendants(root: int) -> set[int]:
    """Live pids below `root` in the process tree (honcho starts each child in a session of its
    own, so the tree, not the session, says what the stack started)."""
    children: dict[int, list[int]] = {}
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(stat_file.parent.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                living.add(pid)
        except OSError:   # gone
            pass
    return living


def answers(port: int, payload: bytes, expected: bytes) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(payload)
            return sock.recv(64).startswith(expected)
    except OSError:
        return False


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def log_in(url: str, password: str) -> str:
    """Log in through the login form; the URL the console sends the admin to."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    form = opener.open(url + "/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username": "admin",
                                   "password": password}).encode()
    request = urllib.request.Request(url + "/login/", data=data, headers={"Referer": url + "/login/"})
    return opener.open(request, timeout=30).geturl()


def bundled_bootstrap(database: Path) -> str:
    with contextlib.closing(sqlite3.connect(database)) as connection:
        return connection.execute("SELECT bootstrap_servers FROM clusters_cluster WHERE is_bundled").fetchone()[0]


def bundled_connect(database: Path) -> str:
    with contextlib.closing(sqlite3.connect(database)) as connection:
        return connection.execute("SELECT url FROM connect_connectcluster WHERE is_bundled").fetchone()[0]


def test_make_run_starts_everything_creates_the_first_admin_and_ctrl_c_stops_it_all(tmp_path):
    engine_port, web_port, redis_port = free_port_range(4), free_port_range(1), free_port_range(1)
    connect_port, registry_port = free_port_range(1), free_port_range(1)
    data = tmp_path / "data"
    env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "ENGINE_BOOTSTRAP")}
    env.update(DATA_DIR=str(data), DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
               WEB_PORT=str(web_port), REDIS_PORT=str(redis_port), REGISTRY_PORT=str(registry_port),
               CONNECT_PORT=str(connect_port), DJANGO_SETTINGS_MODULE="console.settings", PYTHONUNBUFFERED="1")
    # An earlier `make run` on the default ports registered the bundled cluster at 9092-9094 ...
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=300)
    assert bundled_bootstrap(tmp_path / "db.sqlite3") == "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"
    env["ENGINE_PORT"] = str(engine_port)      # ... this one moves the engine, and the cluster follows it
    real_ports = ",".join(f"127.0.0.1:{engine_port + i}" for i in range(3))
    log_path = tmp_path / "stack.log"
    with open(log_path, "wb") as log:
        stack = subprocess.Popen([sys.executable, "-m", "console.stack"], cwd=ROOT, env=env, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{web_port}"
    started: set[int] = set()
    try:
        def output() -> str:
            return log_path.read_text(errors="replace")

        def everything_up() -> bool:
            assert stack.poll() is None, output()
            return (all(answers_api_versions(engine_port + i) for i in range(3))
                    and answers(redis_port, b"PING\r\n", b"+PONG")
                    and answers(web_port, b"GET /login/ HTTP/1.0\r\n\r\n", b"HTTP/1.0 200")
                    and answers(registry_port, b"GET /schemas/types HTTP/1.0\r\n\r\n", b"HTTP/1.0 401")
                    and re.search(r"worker\s*\|.*worker@\S+ ready", output()) is not None
                    and "beat: Starting" in output()
                    and answers(connect_port, b"GET / HTTP/1.0\r\n\r\n", b"HTTP/1.1 200"))

        wait_until(everything_up, timeout=120,
                   message="the engine, the registry, Redis, the web server, the worker, beat and the Connect worker")
        started = descendants(stack.pid)
        assert len(started) >= 5   # at least one process per service (the shells and forks add more)
        credentials = data / "console-admin.txt"
        assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
        password = re.search(r"password: (\S+)", credentials.read_text()).group(1)
        assert f"admin / {password}" in output()
        assert "/login/" not in log_in(url, password)
        assert bundled_bootstrap(tmp_path / "db.sqlite3") == real_ports
        assert f"Kafka:    {real_ports}" in output()
        assert bundled_connect(tmp_path / "db.sqlite3") == f"http://127.0.0.1:{connect_port}"
        # The registry and Connect start once the brokers listen, so neither logs a refused
        # connection; the workers' Kafka clients keep their per-connection chatter to themselves.
        assert not re.search(r"^\S+ (registry|connect)\s*\|.*(ERROR|ECONNREFUSED|Unable connect)", output(), re.M)
        wait_until(lambda: re.search(r"analytics_snapshot\[\S+\] succeeded", output()), timeout=60,
                   message="the first analytics snapshot, a task with a Kafka client")
        assert "Initializing connection for node_id" not in output()

        os.killpg(stack.pid, signal.SIGINT)   # what Ctrl-C in the terminal does
        stack.wait(60)
        wait_until(lambda: not alive(started), timeout=30, message="every process of the stack gone")
        assert not any(listening(port) for port in (engine_port, engine_port + 1, engine_port + 2, web_port,
                                                    redis_port, registry_port, connect_port))
    finally:
        for pid in descendants(stack.pid) | alive(started):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if stack.poll() is None:
            stack.kill()
            stack.wait(10)


def test_make_run_secure_logs_the_console_in_and_gives_the_demo_user_its_acls(tmp_path):
    """SECURE=1 (console/secure_stack.py): the engine speaks SASL only, the console logs in to
    it as the admin super user, and the demo user's consumer ACLs are there. The schema registry
    serves only once it has read its topic, so its answer says that it logged in too."""
    engine_port, web_port, redis_port = free_port_range(4), free_port_range(1), free_port_range(1)
    registry_port = free_port_range(1)
    data = tmp_path / "data"
    env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "ENGINE_BOOTSTRAP")}
    env.update(DATA_DIR=str(data), DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", ENGINE_PORT=str(engine_port),
               WEB_PORT=str(web_port), REDIS_PORT=str(redis_port), REGISTRY_PORT=str(registry_port),
               DJANGO_SETTINGS_MODULE="console.settings",
               ENGINE_BOOTSTRAP=",".join(f"127.0.0.1:{engine_port + i}" for i in range(3)), PYTHONUNBUFFERED="1",
               SECURE="1")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=300)
    log_path = tmp_path / "stack.log"
    with open(log_path, "wb") as log:
        stack = subprocess.Popen([sys.executable, "-m", "console.stack"], cwd=ROOT, env=env, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{web_port}"
    try:
        def output() -> str:
            return log_path.read_text(errors="replace")

        wait_until(lambda: (stack.poll() is None or pytest.fail(output())) and "demo may read topic" in output()
                   and answers(web_port, b"GET /login/ HTTP/1.0\r\n\r\n", b"HTTP/1.0 200")
                   and answers(registry_port, b"GET /schemas/types HTTP/1.0\r\n\r\n", b"HTTP/1.0 401"),
                   timeout=120, message="the secure stack, with the demo ACLs and the schema registry")
        users = dict(line.split(": ", 1) for line in (data / "secure-users.txt").read_text().splitlines())
        assert users["admin"] not in output() and users["demo"] not in output()
        password = re.search(r"password: (\S+)", (data / "console-admin.txt").read_text()).group(1)
        acls_page = fetch_as_admin(url, password, "/clusters/1/acls/")
        assert "User:demo" in acls_page and "demo-group" in acls_page and 'id="acl-error"' not in acls_page
    finally:
        for pid in descendants(stack.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if stack.poll() is None:
            stack.kill()
            stack.wait(10)


def fetch_as_admin(url: str, password: str, path: str) -> str:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    form = opener.open(url + "/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username": "admin", "password": password}).encode()
    opener.open(urllib.request.Request(url + "/login/", data=data, headers={"Referer": url + "/login/"}), timeout=30)
    return opener.open(url + path, timeout=60).read().decode()
