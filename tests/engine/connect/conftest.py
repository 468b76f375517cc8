"""One engine for the Connect tests (a broker, short group timers), and a Connect cluster of
two distributed workers on it, with the test plugins on their plugin.path."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.connect_worker import ConnectWorker, start_all
from tests.support.engine_process import EngineProcess
from tests.support.groups import GROUP_TEST_CONFIGS

PLUGINS = Path(__file__).parent / "plugins"


@pytest.fixture(scope="session")
def connect_engine(tmp_path_factory):
    engine = EngineProcess(tmp_path_factory.mktemp("connect") / "data", brokers=1, configs=GROUP_TEST_CONFIGS).start()
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


@pytest.fixture(scope="session")
def connect_cluster(connect_engine, tmp_path_factory):
    """Two workers of the group `rest`: [leader-or-not, other]; tests find the leader by asking."""
    directory = tmp_path_factory.mktemp("connect-cluster")
    workers = start_all([ConnectWorker(directory, connect_engine.bootstrap, group="rest", name=f"rest{i}",
                                       settings={"plugin.path": str(PLUGINS)}) for i in range(2)])
    yield workers
    for worker in workers:
        if worker.alive():
            assert worker.terminate() == 0, worker.log_text()[-3000:]
