"""Kafka's StandardAuthorizer (KIP-801): whether a principal may perform an operation on a resource.

The rules, as StandardAuthorizerData applies them:
- a principal listed in the super users may do everything;
- the bindings that apply are those on the resource's literal name, the `*` wildcard, and
  every PREFIXED prefix of the name, for the principal itself or `User:*`, from its host or `*`;
- one matching DENY refuses, whatever ALLOWs match (DENY beats ALLOW);
- an ALLOW of READ, WRITE, DELETE or ALTER also grants DESCRIBE, and an ALLOW of
  ALTER_CONFIGS grants DESCRIBE_CONFIGS; ALL matches every operation; a DENY implies nothing;
- with no matching ALLOW the answer is no - unless no binding at all (for anyone) applies
  to the resource and `allow.everyone.if.no.acl.found` is true (default false).
`decide` also names the rule that gave the answer (the audit log's "based on rule").
`authorize_by_resource_type` is Kafka's Authorizer.authorizeByResourceType: may the principal
do the operation on at least one resource of the type (idempotent producers without
IDEMPOTENT_WRITE, KIP-679).

Pure: reads an AclIndex (kafka_rules/acl_index.py); no I/O, no caching. The engine decides
requests with it (engine/security/authorize.py keeps a connection's answers), and the console
explains a principal's permissions with it.
"""
from __future__ import annotations

from kafka_rules.acl_index import AclIndex
from kafka_rules.acls import (ALL, ALLOW, DENY, DESCRIBE, DESCRIBE_CONFIGS, IMPLIES_DESCRIBE, IMPLIES_DESCRIBE_CONFIGS,
                              LITERAL, SUPPORTED_OPERATIONS, WILDCARD, WILDCARD_PRINCIPAL, AclBinding)


# The rules that decide without a binding, named as Kafka's audit log names them.
SUPER_USER, DEFAULT_ALLOW, DEFAULT_DENY = "SuperUser", "DefaultAllow", "DefaultDeny"


def rule_text(rule: AclBinding | str) -> str:
    """A decision's rule as Kafka's audit log ends its line: `MatchingAcl(acl=StandardAcl(...))`
    for a binding, `SuperUser`, `DefaultAllow` or `DefaultDeny` otherwise."""
    return f"MatchingAcl(acl={rule.standard_acl()})" if isinstance(rule, AclBinding) else rule


class StandardAuthorizer:
    def __init__(self, acls: AclIndex, *, super_users: frozenset[str] = frozenset(),
                 allow_if_no_acl: bool = False) -> None:
        self.acls = acls
        self.super_users = super_users
        self.allow_if_no_acl = allow_if_no_acl

    def is_super_user(self, principal: str) -> bool:
        return principal in self.super_users

    def authorize(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        return self.decide(principal, host, operation, resource_type, name)[0]

    def decide(self, principal: str, host: str, operation: int, resource_type: int,
               name: str) -> tuple[bool, AclBinding | str]:
        """The answer and the rule that gave it, as Kafka's MatchingRule: SUPER_USER, the first
        matching DENY binding, else the first matching ALLOW binding, else DEFAULT_ALLOW (no
        binding applies to the resource and `allow.everyone.if.no.acl.found`) or DEFAULT_DENY."""
        if principal in self.super_users:
            return True, SUPER_USER
        allowing = None
        any_acl = False
        for acl in self.acls.applying_to(resource_type, name):
            any_acl = True
            verdict = _verdict(acl, principal, host, operation)
            if verdict is DENIED:
                return False, acl
            if verdict is ALLOWED and allowing is None:
                allowing = acl
        if allowing is not None:
            return True, allowing
        if not any_acl and self.allow_if_no_acl:
            return True, DEFAULT_ALLOW
        return False, DEFAULT_DENY

    def authorized_operations(self, principal: str, host: str, resource_type: int, name: str) -> set[int]:
        """The supported operations of the resource type that the principal may perform
        (KIP-430's `authorized_operations`)."""
        return {op for op in SUPPORTED_OPERATIONS[resource_type]
                if self.authorize(principal, host, op, resource_type, name)}

    def authorize_by_resource_type(self, principal: str, host: str, operation: int, resource_type: int) -> bool:
        """True if some resource of this type allows the operation (Kafka's default
        Authorizer.authorizeByResourceType): a hard-coded name first, so super users and
        `allow.everyone.if.no.acl.found` pass; then a wildcard DENY refuses, a wildcard
        ALLOW passes, and otherwise an ALLOW passes unless a DENY of the same literal name
        or of one of its prefixes covers it."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        deny_literal, deny_prefixed, allow_literal, allow_prefixed = set(), set(), set(), set()
        wildcard_allow = False
        for acl in self.acls.of_type(resource_type):
            if acl.host != WILDCARD and acl.host != host:
                continue
            if acl.principal != WILDCARD_PRINCIPAL and acl.principal != principal:
                continue
            if acl.operation != operation and acl.operation != ALL:
                continue
            literal = acl.pattern_type == LITERAL
            if acl.permission_type == DENY:
                if literal and acl.resource_name == WILDCARD:
                    return False
                (deny_literal if literal else deny_prefixed).add(acl.resource_name)
            elif acl.permission_type == ALLOW:
                if literal and acl.resource_name == WILDCARD:
                    wildcard_allow = True      # a wildcard DENY met later still refuses
                    continue
                (allow_literal if literal else allow_prefixed).add(acl.resource_name)
        if wildcard_allow:
            return True
        for name in allow_literal:
            if name not in deny_literal and not _dominated(name, deny_prefixed):
                return True
        return any(not _dominated(name, deny_prefixed) for name in allow_prefixed)


ALLOWED, DENIED = object(), object()


def _verdict(acl: AclBinding, principal: str, host: str, operation: int):
    """ALLOWED, DENIED or None (the binding does not apply), as Kafka's findResult."""
    if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
        return None
    if acl.host != WILDCARD and acl.host != host:
        return None
    if acl.operation != ALL and acl.operation != operation:
        if acl.permission_type != ALLOW:
            return None
        if operation == DESCRIBE:
            if acl.operation not in IMPLIES_DESCRIBE:
                return None
        elif operation == DESCRIBE_CONFIGS:
            if acl.operation not in IMPLIES_DESCRIBE_CONFIGS:
                return None
        else:
            return None
    return ALLOWED if acl.permission_type == ALLOW else DENIED


def _dominated(name: str, deny_prefixes: set[str]) -> bool:
    return any(name[:i] in deny_prefixes for i in range(1, len(name) + 1))
