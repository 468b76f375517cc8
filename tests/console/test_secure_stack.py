"""`make run SECURE=1`'s pieces (console/secure_stack.py): the users' password files, the engine
it starts (SCRAM only, the authorizer on, admin a super user), and the demo user's consumer
ACLs on one topic - checked with real clients against a real engine."""
import shlex
import stat

import kafka.errors as Errors
import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                         ResourcePatternFilter, ResourceType)

from console import secure_stack
from tests.support.engine_process import EngineProcess


def login(user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> dict:
    return dict(security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism, sasl_plain_username=user,
                sasl_plain_password=password)


def test_the_passwords_are_made_once_and_kept_private(tmp_path):
    users = secure_stack.ensure_users(tmp_path)
    again = secure_stack.ensure_users(tmp_path)
    assert (again.admin_password, again.demo_password) == (users.admin_password, users.demo_password)
    assert users.admin_password != users.demo_password and len(users.admin_password) >= 20
    for path in (users.credentials_file, users.scram_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert users.admin_password not in repr(users) and users.admin_password not in secure_stack.engine_args(users)
    env = secure_stack.console_env(users)
    assert env["ENGINE_SASL_PASSWORD_ENV"] == secure_stack.PASSWORD_ENV and env[secure_stack.PASSWORD_ENV] == \
        users.admin_password


@pytest.fixture(scope="module")
def secure_engine(tmp_path_factory):
    directory = tmp_path_factory.mktemp("secure")
    users = secure_stack.ensure_users(directory)
    engine = EngineProcess(directory / "data", brokers=1, admin=False,
                           extra_args=shlex.split(secure_stack.engine_args(users))).start(timeout=60)
    secure_stack.grant_demo(engine.bootstrap, users)
    yield engine, users
    engine.kill()


def test_demo_reads_its_topic_and_nothing_more_while_admin_may_do_everything(secure_engine):
    engine, users = secure_engine
    producer = KafkaProducer(bootstrap_servers=engine.bootstrap, acks="all",
                             **login("admin", users.admin_password))
    producer.send(secure_stack.DEMO_TOPIC, b"for the demo user").get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(secure_stack.DEMO_TOPIC, bootstrap_servers=engine.bootstrap,
                             group_id=secure_stack.DEMO_GROUP, auto_offset_reset="earliest",
                             consumer_timeout_ms=20000, **login("demo", users.demo_password))
    try:
        assert next(iter(consumer)).value == b"for the demo user"
    finally:
        consumer.close()
    demo_producer = KafkaProducer(bootstrap_servers=engine.bootstrap, enable_idempotence=False, max_block_ms=20000,
                                  **login("demo", users.demo_password, "SCRAM-SHA-256"))
    with pytest.raises(Errors.TopicAuthorizationFailedError):
        demo_producer.send(secure_stack.DEMO_TOPIC, b"demo may not write").get(timeout=30)
    demo_producer.close(timeout=5)
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, **login("admin", users.admin_password))
    try:
        acls, _ = admin.describe_acls(ACLFilter("User:demo", None, ACLOperation.ANY, ACLPermissionType.ANY,
                                                ResourcePatternFilter(ResourceType.ANY, None,
                                                                      ACLResourcePatternType.ANY)))
        assert {(a.resource_pattern.resource_name, a.operation.name) for a in acls} == {
            ("demo", "READ"), ("demo", "DESCRIBE"), ("demo-group", "READ")}
    finally:
        admin.close()


def test_plain_logins_are_not_offered(secure_engine):
    engine, users = secure_engine
    with pytest.raises(Errors.KafkaError):
        KafkaAdminClient(bootstrap_servers=engine.bootstrap, request_timeout_ms=5000, bootstrap_timeout_ms=5000,
                         **login("admin", users.admin_password, "PLAIN"))
