"""A 3-broker engine shared by the transaction tests of a module."""
from __future__ import annotations

import pytest

from tests.support.engine_process import EngineProcess
from tests.support.transactions import TXN_TEST_CONFIGS


@pytest.fixture(scope="module")
def txn_cluster(tmp_path_factory):
    engine = EngineProcess(tmp_path_factory.mktemp("txn") / "data", brokers=3, configs=TXN_TEST_CONFIGS).start()
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()
