"""A real Postgres for tests: Debian's server binaries (initdb, pg_ctl) run a private cluster
on a free loopback port, its data in a directory of its own, stopped and removed afterwards.

    server = PostgresServer().start()
    server.url            # postgres://console:<password>@127.0.0.1:<port>/console
    server.stop()

Postgres refuses to run as root: when the tests run as root (`make test` in CI), the cluster
runs as the `postgres` system user that Debian's package creates. Password authentication on
TCP only (no Unix socket), fsync off: a test database, not a durable one.
"""
from __future__ import annotations

import glob
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support.engine_process import free_port_range

USER, DATABASE = "console", "console"


def server_bin_dir() -> Path:
    """The newest installed server's bin dir (/usr/lib/postgresql/<major>/bin)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError("Postgres's server is not installed (/usr/lib/postgresql/*/bin/pg_ctl): "
                           "apt-get install postgresql (make test installs it)")
    return Path(found[-1]).parent


class PostgresServer:
    def __init__(self) -> None:
        self.bin = server_bin_dir()
        self.password = secrets.token_urlsafe(16)
        self.port = 0
        self.directory: Path | None = None
        self.as_postgres = os.geteuid() == 0

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def url(self) -> str:
        return f"postgres://{USER}:{self.password}@127.0.0.1:{self.port}/{DATABASE}"

    def start(self) -> PostgresServer:
        self.directory = Path(tempfile.mkdtemp(prefix="console-pg-"))
        (self.directory / "pw").write_text(self.password + "\n")
        if self.as_postgres:
            shutil.chown(self.directory, "postgres", "postgres")
            shutil.chown(self.directory / "pw", "postgres", "postgres")
        self._run("initdb", "-D", str(self.data_dir), "-U", USER, "--pwfile", str(self.directory / "pw"),
                  "--auth-host", "scram-sha-256", "--auth-local", "reject", "-E", "UTF8", "--no-sync")
        for _ in range(5):       # a port taken between picking and binding: pick another
            self.port = free_port_range(1)
            options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories='' "
                       "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
            started = self._run("pg_ctl", "-D", str(self.data_dir), "-l", str(self.directory / "server.log"),
                                "-w", "-t", "60", "-o", options, "start", check=False)
            if started.returncode == 0:
                break
        else:
            raise RuntimeError(f"Postgres did not start:\n{self.log_text()}")
        self._create_database()
        return self

    def _create_database(self) -> None:
        import psycopg
        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, password=self.password,
                                     dbname="postgres", autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f"CREATE DATABASE {DATABASE}")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(self.bin / tool), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, cwd=self.directory, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stdout}{done.stderr}")
        return done

    def log_text(self) -> str:
        log = self.directory / "server.log" if self.directory else None
        return log.read_text(errors="replace")[-6000:] if log and log.exists() else ""

    def stop(self) -> None:
        if self.directory is None:
            return
        if (self.data_dir / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None
