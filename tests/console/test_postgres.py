"""The console on Postgres (DATABASE_URL=postgres://...): Debian's server started once for the
module on loopback, then migrations, a representative subset of the console's own tests, beat's
database scheduler, and two console processes serving at once, all on it.

The subset (POSTGRES_SUBSET) runs in a child pytest process, because the database is chosen
when Django's settings load: every app's service tests (the writes of each domain, and their
audit rows, with real engines), the selector tests of the apps whose selectors read the
database (READ_ONLY_FROM_KAFKA's selectors read only the cluster's row and Kafka, which the
rest of the subset covers), the analytics tests that write run rows, and the reassignment
schedules, whose real beat and worker read the PeriodicTask rows from Postgres.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading

import psycopg
import pytest
import requests

from tests.support.console_process import ROOT, manage, start_daphne, stop_daphne
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.timeout(1200)

READ_ONLY_FROM_KAFKA = ("brokers", "groups", "topics")
POSTGRES_SUBSET = sorted(str(p.relative_to(ROOT)) for p in [
    *ROOT.glob("tests/console/*/test_services.py"),
    *(p for p in ROOT.glob("tests/console/*/test_selectors.py") if p.parent.name not in READ_ONLY_FROM_KAFKA),
    ROOT / "tests/console/analytics/test_liveness.py",
    ROOT / "tests/console/reassignments/test_schedules.py",
])
ADMIN_PASSWORD = "postgres-admin-password-1"


@pytest.fixture(scope="module")
def postgres():
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def console_env(postgres, tmp_path_factory):
    """The environment of a console process on the module's Postgres, migrated, with an admin."""
    tmp = tmp_path_factory.mktemp("pg-console")
    env = {**os.environ, "DATABASE_URL": postgres.url, "DJANGO_SETTINGS_MODULE": "console.settings",
           "PYTHONUNBUFFERED": "1", "ENGINE_BOOTSTRAP": "127.0.0.1:1", "CONSOLE_WARMUP_WAIT_SECONDS": "0",
           "ANALYTICS_LAKE": str(tmp / "lake"), "ADMIN_PASSWORD": ADMIN_PASSWORD}
    env.pop("REDIS_URL", None)
    manage(env, "migrate", "--noinput")
    manage(env, "console_user", "pgadmin", "--role", "admin", "--password-env", "ADMIN_PASSWORD")
    return env


def test_migrations_leave_every_model_in_postgres(console_env, postgres):
    pending = manage(console_env, "migrate", "--check", "--plan").stdout
    assert "No planned migration operations" in pending, pending
    with psycopg.connect(postgres.url) as conn:
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        bundled = conn.execute("SELECT name, bootstrap_servers FROM clusters_cluster").fetchall()
        roles = {row[0] for row in conn.execute("SELECT name FROM auth_group")}
    assert {"clusters_cluster", "analytics_analyticsrun", "reassignments_reassignment", "alerts_alertrule",
            "django_celery_beat_periodictask", "axes_accessattempt", "django_session"} <= tables
    assert [server for _, server in bundled] == ["127.0.0.1:1"]            # the data migration ran too
    assert {"viewer", "operator", "admin"} <= roles


def test_the_console_subset_passes_on_postgres(postgres):
    """Every test of POSTGRES_SUBSET, in a child pytest whose settings point at Postgres
    (pytest-django creates and migrates test_console there)."""
    env = {**os.environ, "DATABASE_URL": postgres.url}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                           "-o", "addopts=", *POSTGRES_SUBSET], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1100)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:]
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= 80 and not re.search(r"failed|error|skipped", summary), summary
    # The child really used Postgres: its test database was created there (and dropped after).
    assert "postgresql" in _engine_of(env)


def _engine_of(env: dict) -> str:
    code = "import django; django.setup(); from django.db import connection; print(connection.vendor)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={**env, "DJANGO_SETTINGS_MODULE": "tests.settings"}).stdout


class Session(requests.Session):
    """A browser-like client of one console: logs in with the form and posts with CSRF."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url

    def login(self, username: str, password: str) -> None:
        self.get(f"{self.url}/login/")
        answer = self.post(f"{self.url}/login/", data={"username": username, "password": password,
                                                       "csrfmiddlewaretoken": self.cookies["csrftoken"]},
                           headers={"Referer": f"{self.url}/login/"}, allow_redirects=False)
        assert answer.status_code == 302, answer.text[:2000]

    def post_form(self, path: str, data: dict) -> requests.Response:
        self.get(f"{self.url}{path}")
        return self.post(f"{self.url}{path}", data={**data, "csrfmiddlewaretoken": self.cookies["csrftoken"]},
                         headers={"Referer": f"{self.url}{path}"}, allow_redirects=False)


def test_two_console_processes_serve_one_postgres_at_once(console_env, tmp_path):
    first, second = (start_daphne(console_env, tmp_path / f"daphne-{n}.log") for n in (1, 2))
    try:
        on_first, on_second = Session(first[1]), Session(second[1])
        on_first.login("pgadmin", ADMIN_PASSWORD)
        # The session lives in the database: the second process knows the login of the first.
        on_second.cookies.update(on_first.cookies)
        assert on_second.get(f"{second[1]}/api/clusters").status_code == 200

        errors: list[str] = []

        def add_clusters(client: Session, prefix: str) -> None:
            for n in range(8):
                answer = client.post_form("/clusters/add", {"name": f"{prefix}-{n}", "bootstrap_servers": "127.0.0.1:1",
                                                            "security_protocol": "PLAINTEXT"})
                if answer.status_code != 302:
                    errors.append(f"{prefix}-{n}: {answer.status_code} {answer.text[:500]}")
        writers = [threading.Thread(target=add_clusters, args=(client, prefix))
                   for client, prefix in ((on_first, "first"), (on_second, "second"))]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(120)
        assert errors == []
        # Each process sees every write of both, and the audit trail has them all.
        for client, url in ((on_first, first[1]), (on_second, second[1])):
            names = {c["name"] for c in client.get(f"{url}/api/clusters").json()}
            assert {f"{p}-{n}" for p in ("first", "second") for n in range(8)} <= names
        audit = on_first.get(f"{first[1]}/api/audit?action=cluster.add").json()
        added = [e["target"] for e in audit["entries"] if e["action"] == "cluster.add"]
        assert sorted(added) == sorted(f"{p}-{n}" for p in ("first", "second") for n in range(8))
    finally:
        for process, _ in (first, second):
            stop_daphne(process)
