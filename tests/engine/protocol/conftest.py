"""Admin clients shared by the protocol tests, one per test module, on the shared engine."""
import pytest
from confluent_kafka.admin import AdminClient

from tests.engine.protocol.admin_support import admin_client


@pytest.fixture(scope="module")
def admin(engine_cluster):
    client = admin_client(engine_cluster.bootstrap)
    yield client
    client.close()


@pytest.fixture(scope="module")
def confluent_admin(engine_cluster):
    return AdminClient({"bootstrap.servers": engine_cluster.bootstrap})

