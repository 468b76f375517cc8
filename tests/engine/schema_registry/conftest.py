"""A session engine and a registry on it, shared by the registry tests (each uses its own subjects)."""
from __future__ import annotations

import re

import pytest

from tests.support.engine_process import EngineProcess
from tests.support.groups import GROUP_TEST_CONFIGS
from tests.support.registry_process import RegistryProcess


@pytest.fixture(scope="session")
def registry_engine(tmp_path_factory):
    """One broker with quick group rebalances, so registry elections take well under a second."""
    engine = EngineProcess(tmp_path_factory.mktemp("registry-engine") / "data", brokers=1,
                           configs=GROUP_TEST_CONFIGS).start()
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


@pytest.fixture(scope="session")
def registry(registry_engine, tmp_path_factory):
    process = RegistryProcess(registry_engine.bootstrap, tmp_path_factory.mktemp("registry")).start()
    yield process
    if process.process is not None:
        assert process.terminate() == 0, process.log_text()


@pytest.fixture
def subject(request):
    """A subject name unique to the test."""
    return "s-" + re.sub(r"[^A-Za-z0-9_.-]", "-", request.node.name)[:80]
