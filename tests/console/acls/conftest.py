"""The ACL console tests use the session's ACL engine (tests/support/acls.py: SASL, the
authorizer on, `admin` its super user) through a cluster row logged in as that admin; each
test's own principals are made unique, and their ACLs removed after it."""
import os
import uuid

import pytest

from console.clusters.services import cluster_create
from tests.support.acls import revoke_all
from tests.support.sasl import ADMIN, ADMIN_PASSWORD

SECRET_ENV = "CONSOLE_SECRET_TEST_ACL_ADMIN"
os.environ[SECRET_ENV] = ADMIN_PASSWORD


@pytest.fixture
def acl_cluster(db, acl_engine):
    return cluster_create(name="acl engine", bootstrap_servers=acl_engine.bootstrap, security_protocol="SASL_PLAINTEXT",
                          sasl_mechanism="PLAIN", sasl_username=ADMIN, sasl_password_env=SECRET_ENV)


@pytest.fixture
def principal(acl_admin):
    """A principal unique to the test, with every ACL it was given taken back afterwards."""
    name = f"User:console-{uuid.uuid4().hex[:8]}"
    yield name
    revoke_all(acl_admin, name)
