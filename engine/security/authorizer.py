"""Turning the authorizer on: Kafka's broker configs `authorizer.class.name`, `super.users` and
`allow.everyone.if.no.acl.found`, read at start (kafka_rules/authorizer.py has the rules).

On when `authorizer.class.name` names Kafka's class,
org.apache.kafka.metadata.authorizer.StandardAuthorizer; with no authorizer every request is
allowed, as before. The engine's own inter-broker principal on SASL listeners
(engine/security/settings.py), whose password exists only in the engine's memory, is always
a super user.
"""
from __future__ import annotations

from engine.config import InvalidConfigError
from engine.security.settings import INTER_BROKER_USER
from kafka_rules.acl_index import AclIndex
from kafka_rules.acls import parse_principal
from kafka_rules.authorizer import StandardAuthorizer

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def build(configs, acls: AclIndex) -> StandardAuthorizer | None:
    """None when `authorizer.class.name` is empty; the authorizer over `acls` otherwise.
    `configs`: a BrokerConfig. Fails loudly on a class the engine does not have."""
    class_name = (configs.get("authorizer.class.name") or "").strip()
    if not class_name:
        return None
    if class_name != STANDARD_AUTHORIZER:
        raise InvalidConfigError(f"authorizer.class.name: only {STANDARD_AUTHORIZER} is supported, not {class_name!r}")
    internal = f"User:{INTER_BROKER_USER}"
    return StandardAuthorizer(acls, super_users=parse_super_users(configs.get("super.users") or "") | {internal},
                              allow_if_no_acl=bool(configs.get("allow.everyone.if.no.acl.found")))


def parse_super_users(value: str) -> frozenset[str]:
    """`super.users`: principals separated by `;` (Kafka's syntax), each `Type:name`."""
    users = set()
    for item in value.split(";"):
        item = item.strip()
        if not item:
            continue
        try:
            parse_principal(item)
        except ValueError as exc:
            raise InvalidConfigError(f"super.users: {exc}") from None
        users.add(item)
    return frozenset(users)
