"""A real Celery worker process for tests (never eager mode), on a real Redis.

How to use it (the fixtures in tests/console/conftest.py do all of this):

    redis = RedisServer(tmp / "redis").start()             # tests/support/redis_server.py
    with celery_broker(redis.url):                          # this process sends tasks there
        worker = CeleryWorker(broker_url=redis.url, log_path=tmp / "worker.log", queues=("celery",)).start()
        ...                                                 # task.delay(...); poll the database
        worker.kill()                                       # kill -9, as a crash would
        worker.stop()                                       # SIGTERM: Celery's warm shutdown

The worker is another process, so two things must hold for it to see the test's data:
- The test database must be one that another process can open. pytest-django keeps SQLite's
  test database in memory; `tests/conftest.py` overrides `django_db_modify_db_settings` to put
  it in a file (on /dev/shm when there is one). With DATABASE_URL=postgres://... the test
  database (`test_<name>`) is used as it is. `worker_database_url()` names it for the worker.
- The rows must be committed: tests that use a worker need
  `pytest.mark.django_db(transaction=True, serialized_rollback=True)` (serialized_rollback
  keeps the rows the migrations create, such as the role groups, for the tests that follow).

Queues: pass `queues=` to consume only yours (the analytics tasks have their own queue).
The worker gets the same settings module as the console; `extra_env` adds to its environment
(e.g. timeouts). Its log (`log_text()`) is worth printing in an assertion message.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def worker_database_url() -> str:
    """The database this test process uses, as a DATABASE_URL another process can open."""
    from django.db import connection

    settings = connection.settings_dict
    if settings["ENGINE"].endswith("sqlite3"):
        name = str(settings["NAME"])
        if name == ":memory:" or "mode=memory" in name:
            raise RuntimeError("The SQLite test database is in memory: a worker process cannot see it "
                               "(see tests/conftest.py django_db_modify_db_settings).")
        return f"sqlite:///{name}"
    if "postgresql" in settings["ENGINE"]:
        user, password = settings.get("USER", ""), settings.get("PASSWORD", "")
        auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
        return f"postgres://{auth}{settings.get('HOST') or 'localhost'}:{settings.get('PORT') or 5432}/{settings['NAME']}"
    raise RuntimeError(f"No DATABASE_URL form known for {settings['ENGINE']}")


@contextmanager
def celery_broker(url: str) -> Iterator[None]:
    """Point this process's Celery app (console.celery.app) at `url` for the block, then back."""
    from console.celery import app

    # Import every app's tasks module now (as a worker does at start), so that the tasks this
    # process sends are all registered whichever test finalizes the app first.
    app.loader.import_default_modules()
    before = app.conf.broker_url
    _point_at(app, url)
    try:
        yield
    finally:
        _point_at(app, before)


def _point_at(app, url: str) -> None:
    app.conf.update(broker_url=url)
    # Drop the connections pooled for the old URL: app.close() forgets the connection pool but
    # not the producer pool built on it, whose producers would still publish to the old Redis.
    app.close()
    app.amqp._producer_pool = None


class CeleryWorker:
    """`celery -A console worker` as a child process, ready once it logs that it is."""

    READY = " ready."

    def __init__(self, *, broker_url: str, log_path: Path, queues: Sequence[str] = ("celery",),
                 concurrency: int = 2, pool: str = "threads", extra_env: dict[str, str] | None = None,
                 database_url: str | None = None, node_name: str = "") -> None:
        self.broker_url = broker_url
        self.log_path = Path(log_path)
        self.queues = tuple(queues)
        self.concurrency = concurrency
        self.pool = pool
        self.extra_env = dict(extra_env or {})
        self.database_url = database_url
        # A unique node name by default: a restarted worker must not look like a duplicate of the killed one.
        self.node_name = node_name or f"test-{uuid.uuid4().hex[:8]}@%h"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60.0) -> CeleryWorker:
        # The settings module of this test run (pytest-django exports it), so the worker sees the same.
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "console.settings"),
               "PYTHONUNBUFFERED": "1",
               "REDIS_URL": self.broker_url, "DATABASE_URL": self.database_url or worker_database_url(),
               **self.extra_env}
        command = self.command()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code, self.process = self.process.returncode, None
                raise RuntimeError(f"celery worker exited with {code}:\n{self.log_text()}")
            if self.READY in self._log_since(log_start):
                return self
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"celery worker not ready after {timeout}s:\n{self.log_text()}")

    def command(self) -> list[str]:
        return [sys.executable, "-m", "celery", "-A", "console", "worker", "--loglevel", "INFO",
                "--pool", self.pool, "--concurrency", str(self.concurrency), "-Q", ",".join(self.queues),
                "-n", self.node_name, "--without-gossip", "--without-mingle"]

    def kill(self) -> None:
        """SIGKILL (kill -9): no warm shutdown, tasks in progress stay unacknowledged."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM: Celery's warm shutdown (finish the tasks in progress); SIGKILL after `timeout`."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self.process = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _log_since(self, offset: int) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")[-8000:] if self.log_path.exists() else ""


class CeleryBeat(CeleryWorker):
    """`celery -A console beat` with the settings' scheduler (django-celery-beat's database
    scheduler behind a lock in Redis, console/beat.py), as `make run` starts it: it reads the
    test database's PeriodicTask rows (same rules as the worker)."""

    READY = "beat: Starting..."

    def command(self) -> list[str]:
        return [sys.executable, "-m", "celery", "-A", "console", "beat", "--loglevel", "INFO",
                "--pidfile", str(self.log_path.with_suffix(".pid"))]
