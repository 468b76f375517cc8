"""`make run SECURE=1`: the bundled stack with authentication and authorization on.

- The engine's listeners are SASL_PLAINTEXT with SCRAM-SHA-512 and SCRAM-SHA-256 only (no PLAIN);
- its users are `admin` (a super user: `super.users=User:admin`) and `demo`, with random
  passwords made once and kept in `DATA/secure-users.txt` (mode 0600); the engine reads them
  from `DATA/scram-users.txt` (mode 0600, `--add-scram-file`), so no password is on a command line;
- the authorizer is on (Kafka's StandardAuthorizer; `allow.everyone.if.no.acl.found` stays false);
- the console logs in to the engine as `admin` (ENGINE_SASL_* settings, the password in the
  CONSOLE_SECRET_ENGINE_ADMIN_PASSWORD variable of the stack's processes), and so does the
  schema registry (its password in REGISTRY_KAFKA_SASL_PASSWORD);
- once the engine answers, `demo` gets the consumer ACLs of one topic, `demo` (READ and
  DESCRIBE), and of the group `demo-group` (READ), and the topic is created: through the
  Kafka protocol, as an operator would with kafka-acls.sh.
"""
from __future__ import annotations

import logging
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
MECHANISM = "SCRAM-SHA-512"
PASSWORD_ENV = "CONSOLE_SECRET_ENGINE_ADMIN_PASSWORD"
REGISTRY_PASSWORD_ENV = "REGISTRY_KAFKA_SASL_PASSWORD"     # engine/schema_registry/command.py reads it
DEMO_TOPIC, DEMO_GROUP = "demo", "demo-group"


def enabled(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class SecureUsers:
    admin_password: str
    demo_password: str
    credentials_file: Path          # the passwords, for the person running the stack
    scram_file: Path                # the engine's --add-scram-file

    def __repr__(self) -> str:       # never the passwords, in a traceback or a log line
        return f"SecureUsers(credentials_file={self.credentials_file})"


def ensure_users(data_dir: Path) -> SecureUsers:
    """The two users' passwords: made on the first secure run, read back on the next ones."""
    credentials, scram_file = data_dir / "secure-users.txt", data_dir / "scram-users.txt"
    passwords = {}
    if credentials.exists():
        for line in credentials.read_text().splitlines():
            user, _, password = line.partition(": ")
            passwords[user.strip()] = password.strip()
    if not passwords.get("admin") or not passwords.get("demo"):
        passwords = {"admin": secrets.token_urlsafe(18), "demo": secrets.token_urlsafe(18)}
        _write_private(credentials, "".join(f"{user}: {password}\n" for user, password in passwords.items()))
    _write_private(scram_file, "".join(f"{mechanism}=[name={user},password={password}]\n"
                                       for user, password in passwords.items()
                                       for mechanism in ("SCRAM-SHA-512", "SCRAM-SHA-256")))
    return SecureUsers(passwords["admin"], passwords["demo"], credentials, scram_file)


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(text)


def engine_args(users: SecureUsers) -> str:
    """What `python -m engine serve` adds in the secure profile."""
    return (f" --security-protocol SASL_PLAINTEXT --config sasl.enabled.mechanisms={MECHANISM},SCRAM-SHA-256"
            f" --add-scram-file {users.scram_file} --config authorizer.class.name={AUTHORIZER}"
            " --config super.users=User:admin")


def registry_args() -> str:
    """What `python -m engine registry` adds in the secure profile: it logs in as admin too."""
    return (f" --kafka-security-protocol SASL_PLAINTEXT --kafka-sasl-mechanism {MECHANISM}"
            " --kafka-sasl-username admin")


def console_env(users: SecureUsers) -> dict[str, str]:
    """The stack's processes' settings for logging in to the bundled engine as admin (the
    console's, and the schema registry's password variable)."""
    return {"ENGINE_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "ENGINE_SASL_MECHANISM": MECHANISM,
            "ENGINE_SASL_USERNAME": "admin", "ENGINE_SASL_PASSWORD_ENV": PASSWORD_ENV,
            PASSWORD_ENV: users.admin_password, REGISTRY_PASSWORD_ENV: users.admin_password}


def grant_demo(bootstrap: str, users: SecureUsers, *, timeout_s: float = 120.0) -> None:
    """Create the demo topic and the demo user's consumer ACLs, once the engine answers."""
    from kafka.admin import (ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                             NewTopic, ResourcePattern, ResourceType)
    from kafka.errors import KafkaError, TopicAlreadyExistsError

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, security_protocol="SASL_PLAINTEXT",
                                     sasl_mechanism=MECHANISM, sasl_plain_username="admin",
                                     sasl_plain_password=users.admin_password, request_timeout_ms=15000)
            break
        except KafkaError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
    try:
        try:
            admin.create_topics([NewTopic(DEMO_TOPIC, 1, 1)])
        except TopicAlreadyExistsError:
            pass

        def allow(resource_type, name, operation):
            return ACL("User:demo", "*", operation, ACLPermissionType.ALLOW,
                       ResourcePattern(resource_type, name, ACLResourcePatternType.LITERAL))
        result = admin.create_acls([allow(ResourceType.TOPIC, DEMO_TOPIC, ACLOperation.READ),
                                    allow(ResourceType.TOPIC, DEMO_TOPIC, ACLOperation.DESCRIBE),
                                    allow(ResourceType.GROUP, DEMO_GROUP, ACLOperation.READ)])
        if result["failed"]:
            raise RuntimeError(f"the demo ACLs were refused: {result['failed']}")
    finally:
        admin.close()


def grant_demo_in_background(bootstrap: str, users: SecureUsers) -> threading.Thread:
    def run() -> None:
        try:
            grant_demo(bootstrap, users)
            print(f"  Secure:   demo may read topic {DEMO_TOPIC!r} in group {DEMO_GROUP!r}", flush=True)
        except Exception as exc:  # noqa: BLE001 - the stack keeps running; the operator reads why
            print(f"  Secure:   the demo ACLs could not be created: {type(exc).__name__}: {exc}", flush=True)
    thread = threading.Thread(target=run, name="secure-demo-acls", daemon=True)
    thread.start()
    return thread
