"""DescribeAcls, CreateAcls and DeleteAcls with real clients (kafka-python, confluent-kafka, kafkajs)
on an engine with the authorizer on: filters (ANY, MATCH, principals), Kafka's refusals
(INVALID_REQUEST, CLUSTER_AUTHORIZATION_FAILED, SECURITY_DISABLED), and the principal's own
view in Metadata and DescribeCluster (topics left out, authorized operations computed)."""
import json
import subprocess
import uuid

import kafka.errors as Errors
import pytest
from confluent_kafka import KafkaException, TopicCollection
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   ResourcePatternType, ResourceType)
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, NewTopic,
                         ResourcePattern, ResourcePatternFilter)
from kafka.admin import ResourceType as KResourceType
from kafka.protocol.admin import (CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse,
                                  DescribeAclsRequest, DescribeAclsResponse)

from tests.engine.transactions.test_eos_kafkajs import KAFKAJS
from tests.support.acls import USERS, admin_client, confluent_login, grant, revoke_all
from tests.support.raw_client import RawClient
from tests.support.sasl import ADMIN, ADMIN_PASSWORD, authenticate, handshake


def acl_filter(principal=None, resource_type=KResourceType.ANY, name=None, pattern=ACLResourcePatternType.ANY):
    return ACLFilter(principal, None, ACLOperation.ANY, ACLPermissionType.ANY,
                     ResourcePatternFilter(resource_type, name, pattern))


def described(admin, **filters) -> set[tuple]:
    acls, error = admin.describe_acls(acl_filter(**filters))
    assert error is Errors.NoError
    return {(a.resource_pattern.resource_type.name, a.resource_pattern.resource_name,
             a.resource_pattern.pattern_type.name, a.principal, a.operation.name, a.permission_type.name)
            for a in acls}


def test_kafka_python_creates_describes_with_filters_and_deletes(acl_admin):
    principal = "User:kp-" + uuid.uuid4().hex[:6]
    grant(acl_admin, principal, "READ", "TOPIC", "orders")
    grant(acl_admin, principal, "WRITE", "TOPIC", "ord", pattern="PREFIXED")
    grant(acl_admin, principal, "READ", "GROUP", "*")
    grant(acl_admin, principal, "DESCRIBE", "TOPIC", "orders", permission="DENY")
    assert described(acl_admin, principal=principal, resource_type=KResourceType.TOPIC, name="orders",
                     pattern=ACLResourcePatternType.MATCH) == {
        ("TOPIC", "orders", "LITERAL", principal, "READ", "ALLOW"),
        ("TOPIC", "ord", "PREFIXED", principal, "WRITE", "ALLOW"),
        ("TOPIC", "orders", "LITERAL", principal, "DESCRIBE", "DENY")}
    assert described(acl_admin, principal=principal, resource_type=KResourceType.TOPIC, name="orders",
                     pattern=ACLResourcePatternType.LITERAL) == {
        ("TOPIC", "orders", "LITERAL", principal, "READ", "ALLOW"),
        ("TOPIC", "orders", "LITERAL", principal, "DESCRIBE", "DENY")}
    assert {row[0] for row in described(acl_admin, principal=principal)} == {"TOPIC", "GROUP"}
    ((_, deleted, error),) = acl_admin.delete_acls([acl_filter(principal, KResourceType.GROUP)])
    assert error is Errors.NoError and [a.resource_pattern.resource_name for a in deleted] == ["*"]
    revoke_all(acl_admin, principal)
    assert described(acl_admin, principal=principal) == set()


def test_confluent_kafka_creates_describes_and_deletes(acl_engine):
    client = AdminClient(confluent_login(acl_engine.bootstrap, ADMIN))
    principal = "User:ck-" + uuid.uuid4().hex[:6]
    bindings = [AclBinding(ResourceType.TOPIC, "payments", ResourcePatternType.LITERAL, principal, "*",
                           AclOperation.WRITE, AclPermissionType.ALLOW),
                AclBinding(ResourceType.TRANSACTIONAL_ID, "tx-", ResourcePatternType.PREFIXED, principal, "*",
                           AclOperation.WRITE, AclPermissionType.ALLOW)]
    for future in client.create_acls(bindings).values():
        assert future.result(30) is None
    by_principal = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, principal, None,
                                    AclOperation.ANY, AclPermissionType.ANY)
    assert set(client.describe_acls(by_principal).result(30)) == set(bindings)
    matching = AclBindingFilter(ResourceType.TRANSACTIONAL_ID, "tx-orders", ResourcePatternType.MATCH, principal,
                                None, AclOperation.ANY, AclPermissionType.ANY)
    assert client.describe_acls(matching).result(30) == [bindings[1]]
    (deleted,) = client.delete_acls([by_principal]).values()
    assert set(deleted.result(30)) == set(bindings)
    assert client.describe_acls(by_principal).result(30) == []


def run_kafkajs(bootstrap: str, user: str, *args: str) -> dict:
    mechanism, password = ("PLAIN", ADMIN_PASSWORD) if user == ADMIN else ("SCRAM-SHA-256", USERS[user])
    done = subprocess.run(["node", "acl_client.js", bootstrap, mechanism, user, password, *args], cwd=KAFKAJS,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_kafkajs_creates_describes_with_a_match_filter_and_deletes(acl_engine):
    principal = "User:js-" + uuid.uuid4().hex[:6]
    result = run_kafkajs(acl_engine.bootstrap, ADMIN, "acls", principal, "jstopic")
    found = {(r["resourceName"], r["resourcePatternType"], acl["operation"], acl["permissionType"])
             for r in result["described"] for acl in r["acls"]}
    assert found == {("jstopic", 3, 3, 3), ("jst", 4, 4, 2)}     # LITERAL READ ALLOW, PREFIXED WRITE DENY
    (deleted,) = result["deleted"]
    assert deleted["errorCode"] == 0 and len(deleted["matchingAcls"]) == 2
    assert result["after"] == []


def test_a_principal_without_alter_on_the_cluster_cannot_change_acls(acl_engine, acl_admin):
    alice = admin_client(acl_engine.bootstrap, "alice")
    wanted = ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                 ResourcePattern(KResourceType.GROUP, "alice-group", ACLResourcePatternType.LITERAL))
    try:
        with pytest.raises(Errors.ClusterAuthorizationFailedError):
            alice.describe_acls(acl_filter())
        assert alice.create_acls([wanted])["failed"] == [Errors.ClusterAuthorizationFailedError]
        grant(acl_admin, "User:alice", "ALTER", "CLUSTER", "kafka-cluster")
        grant(acl_admin, "User:alice", "DESCRIBE", "CLUSTER", "kafka-cluster")
        assert alice.create_acls([wanted])["failed"] == []
        acls, error = alice.describe_acls(acl_filter("User:alice", KResourceType.GROUP))
        assert error is Errors.NoError and [a.resource_pattern.resource_name for a in acls] == ["alice-group"]
    finally:
        revoke_all(acl_admin, "User:alice")
        alice.close()


def test_scram_credentials_need_alter_and_describe_on_the_cluster(acl_engine, acl_admin):
    """No user may change another's password, or list who has one, without the cluster's ACLs."""
    from kafka.admin._users import UserScramCredentialDeletion, UserScramCredentialUpsertion
    newcomer = f"newcomer-{uuid.uuid4().hex[:6]}"
    bob = admin_client(acl_engine.bootstrap, "bob")
    try:
        with pytest.raises(Errors.ClusterAuthorizationFailedError):
            bob.describe_user_scram_credentials()
        refused = bob.alter_user_scram_credentials([UserScramCredentialUpsertion("alice", "SCRAM-SHA-256", "x" * 12)])
        assert refused["alice"] and "not authorized" in refused["alice"].lower()
        alice = admin_client(acl_engine.bootstrap, "alice")      # her password still logs in
        try:
            assert alice.list_topics() == []                        # and she may describe no topic
        finally:
            alice.close()
        grant(acl_admin, "User:bob", "DESCRIBE", "CLUSTER", "kafka-cluster")
        assert "alice" in bob.describe_user_scram_credentials()
        still = bob.alter_user_scram_credentials([UserScramCredentialUpsertion(newcomer, "SCRAM-SHA-256", "y" * 12)])
        assert still[newcomer] and "not authorized" in still[newcomer].lower()     # DESCRIBE is not ALTER
        grant(acl_admin, "User:bob", "ALTER", "CLUSTER", "kafka-cluster")
        assert bob.alter_user_scram_credentials([UserScramCredentialUpsertion(newcomer, "SCRAM-SHA-256", "y" * 12)]) \
            == {newcomer: None}
        assert bob.alter_user_scram_credentials([UserScramCredentialDeletion(newcomer, "SCRAM-SHA-256")]) \
            == {newcomer: None}
    finally:
        revoke_all(acl_admin, "User:bob")
        bob.close()


def raw_admin(port: int) -> RawClient:
    client = RawClient(port)
    assert handshake(client, "PLAIN").error_code == 0
    assert authenticate(client, f"\0{ADMIN}\0{ADMIN_PASSWORD}".encode()).error_code == 0
    return client


def test_unknown_codes_are_invalid_request_and_the_valid_entries_still_apply(acl_engine):
    client = raw_admin(acl_engine.ports[0])
    try:
        creation = CreateAclsRequest.AclCreation
        response = client.request(CreateAclsRequest(creations=[
            creation(resource_type=9, resource_name="x", resource_pattern_type=3, principal="User:raw", host="*",
                     operation=3, permission_type=3),
            creation(resource_type=2, resource_name="x", resource_pattern_type=2, principal="User:raw", host="*",
                     operation=3, permission_type=3),
            creation(resource_type=2, resource_name="raw-topic", resource_pattern_type=3, principal="User:raw",
                     host="*", operation=3, permission_type=3)]), 3, CreateAclsResponse)
        assert [r.error_code for r in response.results] == [42, 42, 0]
        assert "Invalid patternType MATCH" in response.results[1].error_message
        described_raw = client.request(DescribeAclsRequest(
            resource_type_filter=1, resource_name_filter=None, pattern_type_filter=7, principal_filter=None,
            host_filter=None, operation=1, permission_type=1), 3, DescribeAclsResponse)
        assert described_raw.error_code == 42 and described_raw.resources == []
        deleted = client.request(DeleteAclsRequest(filters=[
            DeleteAclsRequest.DeleteAclsFilter(resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
                                               principal_filter="User:raw", host_filter=None, operation=0,
                                               permission_type=1),
            DeleteAclsRequest.DeleteAclsFilter(resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
                                               principal_filter="User:raw", host_filter=None, operation=1,
                                               permission_type=1)]), 1, DeleteAclsResponse)
        assert [r.error_code for r in deleted.filter_results] == [42, 0]
        assert [a.resource_name for a in deleted.filter_results[1].matching_acls] == ["raw-topic"]
    finally:
        client.close()


def test_without_an_authorizer_the_acl_apis_say_security_disabled(engine_cluster):
    client = RawClient(engine_cluster.ports[0])
    try:
        response = client.request(DescribeAclsRequest(
            resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
            host_filter=None, operation=1, permission_type=1), 2, DescribeAclsResponse)
        assert response.error_code == Errors.SecurityDisabledError.errno
        created = client.request(CreateAclsRequest(creations=[CreateAclsRequest.AclCreation(
            resource_type=2, resource_name="t", resource_pattern_type=3, principal="User:a", host="*", operation=3,
            permission_type=3)]), 2, CreateAclsResponse)
        assert [r.error_code for r in created.results] == [Errors.SecurityDisabledError.errno]
    finally:
        client.close()


def test_metadata_shows_a_principal_only_what_it_may_describe_with_its_operations(acl_engine, acl_admin):
    visible, hidden = f"seen-{uuid.uuid4().hex[:6]}", f"hidden-{uuid.uuid4().hex[:6]}"
    acl_admin.create_topics([NewTopic(visible, 1, 2), NewTopic(hidden, 1, 2)])
    grant(acl_admin, "User:bob", "WRITE", "TOPIC", visible)
    grant(acl_admin, "User:bob", "ALTER_CONFIGS", "TOPIC", visible)
    bob = admin_client(acl_engine.bootstrap, "bob")
    try:
        topics = bob.list_topics()
        assert visible in topics and hidden not in topics
        (topic,) = bob.describe_topics([visible])
        assert set(topic["authorized_operations"]) == {"WRITE", "DESCRIBE", "ALTER_CONFIGS", "DESCRIBE_CONFIGS"}
        assert bob.describe_cluster()["authorized_operations"] == []     # no DESCRIBE on the cluster: none
        grant(acl_admin, "User:bob", "IDEMPOTENT_WRITE", "CLUSTER", "kafka-cluster")
        grant(acl_admin, "User:bob", "DESCRIBE", "CLUSTER", "kafka-cluster")
        assert set(bob.describe_cluster()["authorized_operations"]) == {"DESCRIBE", "IDEMPOTENT_WRITE"}
        confluent = AdminClient(confluent_login(acl_engine.bootstrap, "bob"))
        with pytest.raises(KafkaException) as denied:
            confluent.describe_topics(TopicCollection([hidden]))[hidden].result(30)
        assert denied.value.args[0].code() == Errors.TopicAuthorizationFailedError.errno
    finally:
        revoke_all(acl_admin, "User:bob")
        bob.close()
