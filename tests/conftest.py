"""Shared fixtures: a real engine cluster on free ports."""
from __future__ import annotations

import os
import re
import secrets

import pytest

from tests.support.acls import admin_client as acl_admin_client, start_acl_engine
from tests.support.engine_process import EngineProcess

# One engine admin token for the whole run, set before any engine starts: child engines
# store it in their data dirs (engine/admin_token.py), and the console and Celery workers
# started by the tests read the same value, so they may stop and start brokers.
os.environ.setdefault("ENGINE_ADMIN_TOKEN", secrets.token_urlsafe(32))
# Cluster rows that tests create (not the bundled one) name this variable for the same token,
# as an operator names a CONSOLE_SECRET_* variable for a remote engine.
TEST_ADMIN_TOKEN_ENV = "CONSOLE_SECRET_TEST_ENGINE_ADMIN_TOKEN"
os.environ[TEST_ADMIN_TOKEN_ENV] = os.environ["ENGINE_ADMIN_TOKEN"]


@pytest.fixture(scope="session", autouse=True)
def _console_knows_the_engine_admin_token():
    """pytest-django loads the settings before this file runs; give them the token too."""
    try:
        from django.conf import settings
        if settings.configured:
            settings.ENGINE_ADMIN_TOKEN = os.environ["ENGINE_ADMIN_TOKEN"]
    except ImportError:
        pass


@pytest.fixture(scope="session")
def engine_cluster(tmp_path_factory):
    """A 3-broker engine shared by the tests that only need a working cluster."""
    engine = EngineProcess(tmp_path_factory.mktemp("engine") / "data", brokers=3).start()
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


@pytest.fixture(scope="session")
def acl_engine(tmp_path_factory):
    """A 2-broker SASL engine with the authorizer on (tests/support/acls.py), shared by the ACL tests."""
    engine = start_acl_engine(tmp_path_factory.mktemp("acls"))
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


@pytest.fixture(scope="session")
def acl_admin(acl_engine):
    """kafka-python's admin client logged in as the ACL engine's super user."""
    client = acl_admin_client(acl_engine.bootstrap)
    yield client
    client.close()


@pytest.fixture
def engine_factory(tmp_path):
    """Start private engines (for restart and crash tests); all are stopped afterwards."""
    started: list[EngineProcess] = []

    def make(brokers: int = 1, configs: dict[str, str] | None = None, data_dir=None, admin: bool = True) -> EngineProcess:
        engine = EngineProcess(data_dir or tmp_path / f"data{len(started)}", brokers=brokers, configs=configs,
                               admin=admin)
        started.append(engine)
        return engine.start()

    yield make
    for engine in started:
        engine.kill()


@pytest.fixture
def topic_name(request):
    """A topic name unique to the test."""
    return "t-" + re.sub(r"[^a-zA-Z0-9.-]", "-", request.node.name)[:200]


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """SQLite's test database in a file, not in memory, so that a Celery worker process
    (tests/support/celery_worker.py) opens the same database as the test. On /dev/shm when
    there is one: as fast as memory. One file per pytest process (its pid)."""
    import os
    from pathlib import Path

    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        base = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(settings.BASE_DIR)
        database.setdefault("TEST", {})["NAME"] = str(base / f"console-test-{os.getpid()}.sqlite3")




TRANSACTIONAL = pytest.StashKey[bool]()

# The files that take longest (each several minutes on 2 cores: a Spark cluster, a child pytest on
# Postgres, two Celery hosts with Spark) go first, so that no process starts one of them while the
# others are running out of work. The rest keep their order (the Makefile turns off xdist's
# reordering by test count), so one process runs browser files back to back on one console
# server (tests/browser/conftest.py, package scope) instead of starting a new one per file.
LONGEST_FIRST = ("tests/console/analytics/test_spark_cluster.py", "tests/console/test_postgres.py",
                 "tests/console/test_celery_hosts.py")


# The files that use the session's local Spark (tests/support/spark.py) run in one process, so
# that the suite starts one such JVM rather than one in each of its processes: each took 30 to
# 50 s of CPU. Together they take under half of the suite's time, the Spark cluster's file first.
ONE_LOCAL_SPARK = ("tests/console/analytics/", "tests/console/kafka_gateway/test_spark_source.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class OneLocalSparkScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return ONE_LOCAL_SPARK[0] if path.startswith(ONE_LOCAL_SPARK) else path

    return OneLocalSparkScheduling(config, log)


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: _rank(item.nodeid))
    _serialized_rollback_after_transactional_tests(items)


def _rank(nodeid: str) -> int:
    path = nodeid.split("::", 1)[0]
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


def _serialized_rollback_after_transactional_tests(items) -> None:
    """Transactional tests end with a flush of the test database, which also removes what the
    migrations wrote (the role groups, the bundled cluster's row). Django's runner avoids the
    problem by running them last; with the suite spread over several processes (pytest-xdist,
    whole files per process) a database test may follow one in the same process. So the migrated
    contents are serialized once at set-up (Django's serialized rollback) and loaded again after
    each transactional test (pytest_runtest_teardown below)."""
    for item in items:
        names = getattr(item, "fixturenames", None)
        if names is None:
            continue
        marker = item.get_closest_marker("django_db")
        if ("transactional_db" in names or "live_server" in names
                or (marker is not None and marker.kwargs.get("transaction"))):
            item.stash[TRANSACTIONAL] = True
            if "django_db_serialized_rollback" not in names:
                names.append("django_db_serialized_rollback")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield   # the test's fixtures are gone: its database was flushed
    if nextitem is None or not item.stash.get(TRANSACTIONAL, False):
        return   # (after the last test the database itself is gone)
    from django.db import connections
    from pytest_django.plugin import blocking_manager_key

    with item.config.stash[blocking_manager_key].unblock():
        for connection in connections.all():
            contents = getattr(connection, "_test_serialized_contents", None)
            if contents:
                connection.creation.deserialize_db_from_string(contents)


@pytest.fixture(scope="session")
def poisoned_engine(tmp_path_factory):
    """A one-broker engine whose compacted topic holds a corrupt batch written to disk
    (tests/support/planted_batches.py): its cleaner gives that partition up, readers meet it.
    Tests may add topics; they leave the planted ones as they are."""
    from tests.support.planted_batches import poisoned_engine as start
    planted = start(tmp_path_factory.mktemp("poisoned") / "data")
    yield planted
    planted.engine.kill()
