"""An engine with the authorizer on, SCRAM users, and helpers to grant them ACLs in tests.

The listener is SASL_PLAINTEXT: `admin` (PLAIN, from the users file) is the super user;
alice, bob and carol are SCRAM users with no ACLs until a test grants some. The brokers
replicate as the engine's internal principal, which the authorizer always allows.
"""
from __future__ import annotations

from pathlib import Path

from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                         ResourcePattern, ResourcePatternFilter, ResourceType)

from tests.support.raw_client import RawClient
from tests.support.sasl import (ADMIN, ADMIN_PASSWORD, add_scram_user, authenticate, handshake, kafka_python_sasl,
                               raw_scram_login, start_sasl_engine)

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
USERS = {"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}


def start_acl_engine(directory: Path, brokers: int = 2, extra_args: list[str] | None = None):
    engine = start_sasl_engine(directory, brokers=brokers, extra_args=[
        "--config", f"authorizer.class.name={STANDARD_AUTHORIZER}", "--config", f"super.users=User:{ADMIN}",
        *(extra_args or [])])
    for user, password in USERS.items():
        add_scram_user(engine.bootstrap, user, password)
    return engine


def kafka_python_login(user: str) -> dict:
    if user == ADMIN:
        return kafka_python_sasl("PLAIN", ADMIN, ADMIN_PASSWORD)
    return kafka_python_sasl("SCRAM-SHA-256", user, USERS[user])


def confluent_login(bootstrap: str, user: str) -> dict:
    mechanism, password = ("PLAIN", ADMIN_PASSWORD) if user == ADMIN else ("SCRAM-SHA-512", USERS[user])
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
            "sasl.username": user, "sasl.password": password}


def connect_as(user: str):
    """A function opening a RawClient to a port, logged in as `user`."""
    def connect(port: int) -> RawClient:
        client = RawClient(port)
        if user == ADMIN:
            assert handshake(client, "PLAIN").error_code == 0
            assert authenticate(client, f"\0{ADMIN}\0{ADMIN_PASSWORD}".encode()).error_code == 0
        else:
            assert raw_scram_login(client, user, USERS[user]).error_code == 0
        return client
    return connect


def admin_client(bootstrap: str, user: str = ADMIN) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000, **kafka_python_login(user))


def grant(admin: KafkaAdminClient, principal: str, operation: str, resource_type: str, name: str,
          pattern: str = "LITERAL", permission: str = "ALLOW") -> None:
    acl = ACL(principal, "*", ACLOperation[operation], ACLPermissionType[permission],
              ResourcePattern(ResourceType[resource_type], name, ACLResourcePatternType[pattern]))
    result = admin.create_acls([acl])
    assert not result["failed"], result


def revoke_all(admin: KafkaAdminClient, principal: str) -> None:
    everything = ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)
    for _, _, error in admin.delete_acls([ACLFilter(principal, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                                    everything)]):
        assert error.errno == 0, error
