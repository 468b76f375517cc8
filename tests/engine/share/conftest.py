"""One real 1-broker engine for the share group tests that need a running cluster."""
from __future__ import annotations

import pytest

from tests.support.engine_process import EngineProcess, free_port_range
from tests.support.share import SHARE_TEST_CONFIGS


@pytest.fixture(scope="session")
def share_engine(tmp_path_factory):
    metrics_port = free_port_range(1)
    engine = EngineProcess(tmp_path_factory.mktemp("share") / "data", brokers=1, configs=SHARE_TEST_CONFIGS,
                           extra_args=["--metrics-port", str(metrics_port)]).start()
    engine.metrics_port = metrics_port
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()
