"""Browser tests: the console served for real (daphne, a real Redis channel layer, a private
3-broker engine) and driven by Debian's Chromium through Playwright."""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.console.conftest import STOPPABLE_ENGINE_CONFIGS
from tests.support.console_process import manage, start_daphne, stop_daphne
from tests.support.engine_process import EngineProcess
from tests.support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
PASSWORDS = {"admin": "admin-password-1", "operator": "operator-password-1", "viewer": "viewer-password-1"}


@dataclass
class Console:
    url: str
    engine: EngineProcess
    log_path: Path
    env: dict = field(default_factory=dict)     # DATABASE_URL, REDIS_URL...: for a Celery worker of the test's
    lake: Path | None = None  # the console's ANALYTICS_LAKE

# Assertions wait as long as actions do (the context's default timeout below): on a machine
# whose cores are all busy a live update can take longer than Playwright's 5 s default.
expect.set_options(timeout=30_000)


def _manage(env: dict, *args: str) -> None:
    manage(env, *args)


# Package scope, not session: Playwright's sync API keeps an event loop running in this
# thread while it is open, which would break every later test that calls asyncio.run().
@pytest.fixture(scope="package")
def console_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("console")
    engine = EngineProcess(tmp / "engine", brokers=3, configs=STOPPABLE_ENGINE_CONFIGS).start()
    redis = RedisServer(tmp / "redis").start()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}", "ENGINE_BOOTSTRAP": engine.bootstrap,
           # The bundled engine's admin token, where the engine writes it (engine/admin_token.py).
           "ENGINE_ADMIN_TOKEN_FILE": str(engine.data_dir / "admin.token"),
           "REDIS_URL": redis.url, "ANALYTICS_LAKE": str(tmp / "lake"), "DJANGO_SETTINGS_MODULE": "console.settings", "PYTHONUNBUFFERED": "1",
           # Tests change the cluster from their own process too: the console sees it at once.
           "KAFKA_METADATA_MAX_AGE_SECONDS": "0", "LOG_DIR_SIZES_MAX_AGE_SECONDS": "0",
           "TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS": "0", "GROUP_LAG_MAX_AGE_SECONDS": "0",
           # The overview's health figures renewed every 2 s: its throughput moves within a test.
           "CLUSTER_HEALTH_MAX_AGE_SECONDS": "2",
           # Static files from the checkout (plain names), never from a collectstatic left in it.
           "STATIC_ROOT": str(tmp / "static"),
           **{f"PASSWORD_{role.upper()}": password for role, password in PASSWORDS.items()}}
    daphne = None
    log_path = tmp / "daphne.log"
    try:
        _manage(env, "migrate", "--noinput")
        for role in PASSWORDS:
            _manage(env, "console_user", role, "--role", role, "--password-env", f"PASSWORD_{role.upper()}")
        daphne, url = start_daphne(env, log_path)
        yield Console(url=url, engine=engine, log_path=log_path, env=env, lake=tmp / "lake")
    finally:
        if daphne is not None:
            stop_daphne(daphne)
        redis.stop()
        engine.kill()


@pytest.fixture(scope="package")
def quiet_console(console_server):
    """A second console process on the same database, Redis and engine whose overview never polls
    (LIVE_POLL_SECONDS=3600): a change made through the first console can reach its sockets
    only as an event over Redis."""
    log_path = console_server.log_path.with_name("daphne-quiet.log")
    daphne, url = start_daphne({**console_server.env, "LIVE_POLL_SECONDS": "3600", "LIVE_MAX_BACKOFF_SECONDS": "3600"}, log_path)
    try:
        yield Console(url=url, engine=console_server.engine, log_path=log_path, env=console_server.env)
    finally:
        stop_daphne(daphne)


@pytest.fixture
def snapshot_console(console_server, tmp_path):
    """A console process on the same database, Redis and engine with the background snapshots
    on, as deployed (console.kafka_gateway.cache), and short max ages: every page a test opens
    after changing the cluster finds its snapshot older than it may be shown."""
    env = {**console_server.env, "KAFKA_METADATA_MAX_AGE_SECONDS": "0.5", "LOG_DIR_SIZES_MAX_AGE_SECONDS": "0.5",
           "TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS": "0.5", "GROUP_LAG_MAX_AGE_SECONDS": "0.5"}
    log_path = tmp_path / "daphne-snapshots.log"
    daphne, url = start_daphne(env, log_path)
    try:
        yield Console(url=url, engine=console_server.engine, log_path=log_path, env=env)
    finally:
        stop_daphne(daphne)


@pytest.fixture
def collected_console(console_server, tmp_path):
    """A console process on the same database, Redis and engine, serving static files as `make
    run` does: collected first (hashed names, gzip copies), cached for good by browsers."""
    env = {**console_server.env, "STATIC_ROOT": str(tmp_path / "static")}
    _manage(env, "collectstatic", "--noinput")
    log_path = tmp_path / "daphne-collected.log"
    daphne, url = start_daphne(env, log_path)
    try:
        yield Console(url=url, engine=console_server.engine, log_path=log_path, env=env)
    finally:
        stop_daphne(daphne)


@contextlib.contextmanager
def registered_cluster(console: Console, name: str, bootstrap: str):
    """Register a cluster in the shared console for one test; yields its /clusters/<id>/ path and
    removes it afterwards, so that other tests still land on the bundled cluster after login."""
    out = subprocess.run([sys.executable, "manage.py", "cluster_add", name, bootstrap], cwd=ROOT, env=console.env,
                         capture_output=True, text=True, check=True).stdout
    cluster_id = int(re.search(r"\(id (\d+)\)", out).group(1))
    try:
        yield f"/clusters/{cluster_id}/"
    finally:
        _manage(console.env, "shell", "-c",
                f"from console.clusters.models import Cluster; Cluster.objects.filter(id={cluster_id}).delete()")


@pytest.fixture(scope="package")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="package")
def signed_in() -> dict[tuple[str, str], dict]:
    """The cookies of each role's first login on each console, for the package's later logins."""
    return {}


@pytest.fixture
def login(browser, console_server, signed_in):
    """`login(role, console=None, **context_options)` -> a page of a fresh browser context (color_scheme=,
    viewport=...), logged in as that role's user, on the page a login lands on.

    A role's first login on a console fills in the form; later contexts start with its cookies
    and open the console's home page: a login took 2.9 s of CPU (the password's hash, the form,
    the redirect), a context with the cookies takes 1.2 s. Should the console no longer know the
    cookies (another database on a reused port), the form is filled in again."""
    contexts = []

    def make(role: str, console: Console | None = None, **context_options):
        base_url = (console or console_server).url
        cookies = signed_in.get((role, base_url))
        context = browser.new_context(base_url=base_url, storage_state=cookies, **context_options)
        context.set_default_timeout(30_000)
        contexts.append(context)
        page = context.new_page()
        if cookies is not None:
            page.goto("/")
            if "/login/" not in page.url:
                return page
        page.goto("/login/")
        page.fill("input[name=username]", role)
        page.fill("input[name=password]", PASSWORDS[role])
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/login/" not in url)
        signed_in[(role, base_url)] = context.storage_state()
        return page

    yield make
    for context in contexts:
        context.close()


SCREENSHOTS = ROOT / "artifacts" / "screenshots"


@pytest.fixture(scope="package")
def shoot():
    """`shoot(page, name)` -> artifacts/screenshots/<name>-<theme>-<width>.png (CI keeps the folder)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        theme = page.evaluate("document.documentElement.dataset.theme")
        path = SCREENSHOTS / f"{name}-{theme}-{page.viewport_size['width']}.png"
        page.screenshot(path=str(path), full_page=True)
        return path
    return take
