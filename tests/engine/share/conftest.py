"""One real 1-broker engine for the share group tests that need a running cluster."""
from __future__ import annotations

import pytest

from tests.support.engine_process import EngineProcess
from tests.support.share import SHARE_TEST_CONFIGS


@pytest.fixture(scope="session")
def share_engine(tmp_path_factory):
    engine = EngineProcess(tmp_path_factory.mktemp("share") / "data", brokers=1, configs=SHARE_TEST_CONFIGS).start()
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()
