"""`python -m engine acls`: kafka-acls.sh's options and output, over the Kafka protocol only, logged
in with a --command-config properties file; usage mistakes exit 2, a refusal exits 1. The
command's main() runs in the test's process (a new interpreter per call cost ~2 s each)."""
import io
import sys
import uuid
from dataclasses import dataclass

import pytest
from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePatternFilter
from kafka.admin import ResourceType

from engine.__main__ import main
from tests.support.sasl import ADMIN, ADMIN_PASSWORD


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def acls_cli(capsys, monkeypatch):
    """`python -m engine acls --bootstrap-server B ARGS`, run in this process (the same main())."""
    def run(bootstrap: str, *args: str, config=None, stdin: str = "") -> Run:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        command = ["acls", "--bootstrap-server", bootstrap, *(["--command-config", str(config)] if config else [])]
        try:
            code = main(command + list(args))
        except SystemExit as exc:       # argparse's own usage errors
            code = exc.code
        out, err = capsys.readouterr()
        return Run(code, out, err)
    return run


@pytest.fixture(scope="module")
def admin_properties(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "admin.properties"
    path.write_text("# Kafka client properties\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
                    f'    username="{ADMIN}" password="{ADMIN_PASSWORD}";\n')
    return path


def acls_of(admin, principal: str) -> set[tuple]:
    acls, _ = admin.describe_acls(ACLFilter(principal, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                            ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)))
    return {(a.resource_pattern.resource_type.name, a.resource_pattern.resource_name,
             a.resource_pattern.pattern_type.name, a.operation.name, a.permission_type.name) for a in acls}


def test_producer_and_consumer_shortcuts_add_kafkas_sets(acl_engine, acl_admin, admin_properties, acls_cli):
    principal = f"User:cli-{uuid.uuid4().hex[:6]}"
    added = acls_cli(acl_engine.bootstrap, "--add", "--producer", "--consumer", "--allow-principal", principal,
                     "--topic", "events", "--group", "readers", "--transactional-id", "tx",
                     "--idempotent", config=admin_properties)
    assert added.returncode == 0, added.stderr
    assert ("Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=events, patternType=LITERAL)`:"
            in added.stdout)
    assert f"(principal={principal}, host=*, operation=WRITE, permissionType=ALLOW)" in added.stdout
    assert acls_of(acl_admin, principal) == {
        ("TOPIC", "events", "LITERAL", op, "ALLOW") for op in ("WRITE", "DESCRIBE", "CREATE", "READ")} | {
        ("GROUP", "readers", "LITERAL", "READ", "ALLOW"), ("TRANSACTIONAL_ID", "tx", "LITERAL", "WRITE", "ALLOW"),
        ("TRANSACTIONAL_ID", "tx", "LITERAL", "DESCRIBE", "ALLOW"),
        ("CLUSTER", "kafka-cluster", "LITERAL", "IDEMPOTENT_WRITE", "ALLOW")}

    listed = acls_cli(acl_engine.bootstrap, "--list", "--topic", "events-1", "--resource-pattern-type", "match",
                      "--principal", principal, config=admin_properties)
    assert listed.returncode == 0 and listed.stdout.startswith(f"ACLs for principal `{principal}`")
    assert "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=events" not in listed.stdout

    removed = acls_cli(acl_engine.bootstrap, "--remove", "--allow-principal", principal, "--operation", "Write",
                       "--topic", "events", config=admin_properties, stdin="y\n")
    assert removed.returncode == 0 and "Are you sure you want to remove ACLs" in removed.stdout
    assert ("TOPIC", "events", "LITERAL", "WRITE", "ALLOW") not in acls_of(acl_admin, principal)
    kept = acls_cli(acl_engine.bootstrap, "--remove", "--topic", "events", config=admin_properties, stdin="n\n")
    assert kept.returncode == 0 and ("TOPIC", "events", "LITERAL", "READ", "ALLOW") in acls_of(acl_admin, principal)
    everything = acls_cli(acl_engine.bootstrap, "--remove", "--force", "--topic", "events", "--group", "readers",
                          "--transactional-id", "tx", "--cluster", config=admin_properties)
    assert everything.returncode == 0 and acls_of(acl_admin, principal) == set()


def test_prefixed_deny_and_listing(acl_engine, acl_admin, admin_properties, acls_cli):
    principal = f"User:cli-{uuid.uuid4().hex[:6]}"
    assert acls_cli(acl_engine.bootstrap, "--add", "--deny-principal", principal, "--operation", "IdempotentWrite",
                    "--cluster", config=admin_properties).returncode == 0
    assert acls_cli(acl_engine.bootstrap, "--add", "--allow-principal", principal, "--allow-host", "10.0.0.1",
                    "--operation", "read", "--operation", "DESCRIBE_CONFIGS", "--topic", "logs-",
                    "--resource-pattern-type", "prefixed", config=admin_properties).returncode == 0
    listed = acls_cli(acl_engine.bootstrap, "--list", "--topic", "logs-", "--resource-pattern-type", "prefixed",
                      config=admin_properties)
    assert listed.stdout == (
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=logs-, patternType=PREFIXED)`: \n"
        f" \t(principal={principal}, host=10.0.0.1, operation=READ, permissionType=ALLOW)\n"
        f" \t(principal={principal}, host=10.0.0.1, operation=DESCRIBE_CONFIGS, permissionType=ALLOW) \n\n")
    assert ("CLUSTER", "kafka-cluster", "LITERAL", "IDEMPOTENT_WRITE", "DENY") in acls_of(acl_admin, principal)
    assert acls_cli(acl_engine.bootstrap, "--remove", "--force", "--topic", "logs-", "--resource-pattern-type",
                    "prefixed", "--cluster", config=admin_properties).returncode == 0


@pytest.mark.parametrize("args, message", [
    (["--add", "--topic", "t"], "You must specify one of: --allow-principal, --deny-principal"),
    (["--add", "--allow-principal", "User:a"], "You must provide at least one resource"),
    (["--add", "--allow-principal", "User:a", "--operation", "Write", "--group", "g"],
     "ResourceType GROUP only supports operations"),
    (["--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"],
     "is not valid when adding acls"),
    (["--add", "--consumer", "--allow-principal", "User:a", "--topic", "t"], "With --consumer you must specify"),
    (["--add", "--allow-principal", "alice", "--topic", "t"], "principalType:principalName"),
    (["--list", "--producer", "--topic", "t"], "--list takes no"),
])
def test_usage_mistakes_exit_2_with_kafkas_message(args, message, acls_cli):
    done = acls_cli("127.0.0.1:1", *args)
    assert done.returncode == 2 and message in done.stderr


def test_a_refusal_exits_1_with_kafkas_error(acl_engine, tmp_path, acls_cli):
    bob = tmp_path / "bob.properties"
    bob.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                   'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
                   'username="bob" password="bob-secret";\n')
    done = acls_cli(acl_engine.bootstrap, "--list", config=bob)
    assert done.returncode == 1
    assert done.stdout.startswith("Error while executing ACL command: CLUSTER_AUTHORIZATION_FAILED (31)")
    assert "bob-secret" not in done.stdout + done.stderr


def test_without_an_authorizer_the_answer_is_security_disabled(engine_cluster, acls_cli):
    done = acls_cli(engine_cluster.bootstrap, "--list")
    assert done.returncode == 1 and "SECURITY_DISABLED (54)" in done.stdout
