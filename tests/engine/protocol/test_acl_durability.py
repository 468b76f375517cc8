"""ACLs are metadata records: every broker answers the same DescribeAcls, and they survive kill -9
(the journal replayed) and a clean restart (the snapshot), and still decide what a user may do."""
import uuid

import kafka.errors as Errors
import pytest
from kafka import KafkaProducer
from kafka.admin import NewTopic
from kafka.protocol.admin import DescribeAclsRequest, DescribeAclsResponse

from tests.support.acls import admin_client, grant, kafka_python_login, start_acl_engine
from tests.support.raw_client import RawClient
from tests.support.sasl import ADMIN, ADMIN_PASSWORD, authenticate, handshake


def acls_on(port: int) -> set[tuple]:
    """DescribeAcls (everything) asked of the broker on `port` alone."""
    client = RawClient(port)
    try:
        assert handshake(client, "PLAIN").error_code == 0
        assert authenticate(client, f"\0{ADMIN}\0{ADMIN_PASSWORD}".encode()).error_code == 0
        response = client.request(DescribeAclsRequest(
            resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
            host_filter=None, operation=1, permission_type=1), 3, DescribeAclsResponse)
        assert response.error_code == 0
        return {(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.operation, a.permission_type)
                for r in response.resources for a in r.acls}
    finally:
        client.close()


def can_write(bootstrap: str, user: str, topic: str) -> bool:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=False, max_block_ms=20000,
                             **kafka_python_login(user))
    try:
        producer.send(topic, b"x").get(timeout=30)
        return True
    except Errors.TopicAuthorizationFailedError:
        return False
    finally:
        producer.close(timeout=5)


@pytest.mark.timeout(300)
def test_acls_are_the_same_on_every_broker_and_survive_kill_and_restart(tmp_path):
    engine = start_acl_engine(tmp_path, brokers=3)
    try:
        topic = f"durable-{uuid.uuid4().hex[:6]}"
        admin = admin_client(engine.bootstrap)
        admin.create_topics([NewTopic(topic, 1, 3)])
        grant(admin, "User:alice", "WRITE", "TOPIC", topic)
        grant(admin, "User:alice", "READ", "TOPIC", "durable-", pattern="PREFIXED")
        grant(admin, "User:bob", "ALL", "GROUP", "*", permission="DENY")
        admin.close()
        expected = {(2, topic, 3, "User:alice", 4, 3), (2, "durable-", 4, "User:alice", 3, 3),
                    (3, "*", 3, "User:bob", 2, 2)}
        assert [acls_on(port) for port in engine.ports] == [expected] * 3

        engine.kill()                            # SIGKILL: no snapshot, the journal is replayed
        engine.start(timeout=60)
        assert [acls_on(port) for port in engine.ports] == [expected] * 3
        assert can_write(engine.bootstrap, "alice", topic) and not can_write(engine.bootstrap, "bob", topic)

        assert engine.terminate() == 0           # a clean stop writes a snapshot with the ACLs
        engine.start(timeout=60)
        assert [acls_on(port) for port in engine.ports] == [expected] * 3
    finally:
        engine.kill()
