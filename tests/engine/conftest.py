"""Fixtures shared by the engine tests that use consumer groups."""
from __future__ import annotations

import re

import pytest

from engine.storage import filesystem
from tests.support.engine_process import EngineProcess
from tests.support.groups import GROUP_TEST_CONFIGS


@pytest.fixture(scope="session")
def group_cluster(tmp_path_factory):
    """A 3-broker engine for group tests: a short initial rebalance delay, short session
    timeouts allowed, and a log cleaner that runs often (GROUP_TEST_CONFIGS)."""
    engine = EngineProcess(tmp_path_factory.mktemp("groups") / "data", brokers=3, configs=GROUP_TEST_CONFIGS).start()
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


@pytest.fixture
def group_id(request):
    """A consumer group id unique to the test."""
    return "g-" + re.sub(r"[^a-zA-Z0-9.-]", "-", request.node.name)[:200]


@pytest.fixture
def faulty_fs():
    """The storage layer's FileSystem, failing what the test asks: `faulty_fs.fail("write",
    errno.ENOSPC, path_contains=".index", torn_bytes=10, times=1)`. Request it before the
    fixtures that open files, so it knows their paths."""
    with filesystem.use(filesystem.FaultyFileSystem()) as fs:
        yield fs

