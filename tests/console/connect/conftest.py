"""A real distributed Connect worker for the console's Connect tests, on the shared engine,
with the test plugins (tests/engine/connect/plugins) on its plugin.path."""
from __future__ import annotations

import pytest

from console.connect.models import ConnectCluster
from tests.engine.connect.conftest import PLUGINS
from tests.support.connect_worker import ConnectWorker

# The shared engine keeps Kafka's group session bounds (6 s at least): Connect's defaults fit.
CONSOLE_WORKER = {"plugin.path": str(PLUGINS), "session.timeout.ms": "10000", "consumer.session.timeout.ms": "10000",
                  "consumer.heartbeat.interval.ms": "1000"}


@pytest.fixture(scope="session")
def connect_worker(engine_cluster, tmp_path_factory):
    worker = ConnectWorker(tmp_path_factory.mktemp("console-connect"), engine_cluster.bootstrap,
                           group="console-connect", settings=CONSOLE_WORKER, name="console-worker").start()
    yield worker
    if worker.alive():
        worker.terminate()


@pytest.fixture
def connect_row(cluster, connect_worker):
    """The worker registered as a Connect cluster of the shared engine's row."""
    return ConnectCluster.objects.create(cluster=cluster, name="test connect", url=connect_worker.url)
