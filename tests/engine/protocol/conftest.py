"""Admin clients shared by the protocol tests, one per test module, on the shared engine."""
import pytest
from confluent_kafka.admin import AdminClient

from tests.engine.protocol.admin_support import admin_client
from tests.support.acls import admin_client as acl_admin_client, start_acl_engine


@pytest.fixture(scope="module")
def admin(engine_cluster):
    client = admin_client(engine_cluster.bootstrap)
    yield client
    client.close()


@pytest.fixture(scope="module")
def confluent_admin(engine_cluster):
    return AdminClient({"bootstrap.servers": engine_cluster.bootstrap})


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
