"""Kafka's ACL model: bindings, filters and their rules, with Kafka's codes and names.

An ACL binding is a resource pattern (resource type, name, LITERAL or PREFIXED) and an entry
(principal, host, operation, ALLOW or DENY). A LITERAL name of `*` is the wildcard: it
matches every resource of its type. Filters (DescribeAcls, DeleteAcls) add ANY and MATCH:
a MATCH filter with a name finds every binding that would apply to that resource - the
literal name, the `*` wildcard and every PREFIXED prefix of it (Kafka's ResourcePatternFilter).

The numeric codes are Kafka's (ResourceType, PatternType, AclOperation, AclPermissionType),
as the wire carries them. Pure functions and frozen values; no I/O. The engine stores and
decides with them, the console checks and explains with them: one model for both.
"""
from __future__ import annotations

from dataclasses import dataclass


# ResourceType
UNKNOWN, ANY = 0, 1
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = 2, 3, 4, 5, 6, 7
# PatternType (UNKNOWN and ANY as above)
MATCH, LITERAL, PREFIXED = 2, 3, 4
# AclOperation (UNKNOWN and ANY as above)
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION = 2, 3, 4, 5, 6, 7, 8, 9
DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS = 10, 11, 12, 13, 14
# AclPermissionType (UNKNOWN and ANY as above)
DENY, ALLOW = 2, 3

WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"
ANONYMOUS = "User:ANONYMOUS"

RESOURCE_TYPES = {TOPIC: "TOPIC", GROUP: "GROUP", CLUSTER: "CLUSTER", TRANSACTIONAL_ID: "TRANSACTIONAL_ID",
                  DELEGATION_TOKEN: "DELEGATION_TOKEN", USER: "USER"}
PATTERN_TYPES = {LITERAL: "LITERAL", PREFIXED: "PREFIXED"}
OPERATIONS = {ALL: "ALL", READ: "READ", WRITE: "WRITE", CREATE: "CREATE", DELETE: "DELETE", ALTER: "ALTER",
              DESCRIBE: "DESCRIBE", CLUSTER_ACTION: "CLUSTER_ACTION", DESCRIBE_CONFIGS: "DESCRIBE_CONFIGS",
              ALTER_CONFIGS: "ALTER_CONFIGS", IDEMPOTENT_WRITE: "IDEMPOTENT_WRITE", CREATE_TOKENS: "CREATE_TOKENS",
              DESCRIBE_TOKENS: "DESCRIBE_TOKENS"}
PERMISSIONS = {DENY: "DENY", ALLOW: "ALLOW"}

# The operations Kafka defines for each resource type (AclEntry.supportedOperations): what
# `authorized_operations` answers are computed over, and what kafka-acls.sh lets one grant.
SUPPORTED_OPERATIONS: dict[int, tuple[int, ...]] = {
    TOPIC: (READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    GROUP: (READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    CLUSTER: (CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE),
    TRANSACTIONAL_ID: (DESCRIBE, WRITE),
    DELEGATION_TOKEN: (DESCRIBE,),
    USER: (CREATE_TOKENS, DESCRIBE_TOKENS),
}
# An ALLOW of one of these grants DESCRIBE (resp. DESCRIBE_CONFIGS) too; a DENY implies nothing.
IMPLIES_DESCRIBE = frozenset({DESCRIBE, READ, WRITE, DELETE, ALTER})
IMPLIES_DESCRIBE_CONFIGS = frozenset({DESCRIBE_CONFIGS, ALTER_CONFIGS})


class InvalidAcl(ValueError):
    """A binding or filter Kafka refuses (INVALID_REQUEST); the message is Kafka's."""


@dataclass(frozen=True, slots=True)
class AclBinding:
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int

    def standard_acl(self) -> str:
        """The binding as Kafka's StandardAcl prints itself (the authorizer's audit log)."""
        return (f"StandardAcl(resourceType={RESOURCE_TYPES[self.resource_type]}, resourceName={self.resource_name}, "
                f"patternType={PATTERN_TYPES[self.pattern_type]}, principal={self.principal}, host={self.host}, "
                f"operation={OPERATIONS[self.operation]}, permissionType={PERMISSIONS[self.permission_type]})")

    def describe(self) -> str:
        """Kafka's way of printing a binding (kafka-acls.sh, log lines)."""
        return (f"(principal={self.principal}, host={self.host}, operation={OPERATIONS[self.operation]}, "
                f"permissionType={PERMISSIONS[self.permission_type]}) on "
                f"{RESOURCE_TYPES[self.resource_type]}:{PATTERN_TYPES[self.pattern_type]}:{self.resource_name}")


@dataclass(frozen=True, slots=True)
class AclFilter:
    """An AclBindingFilter: None names, principals and hosts match anything."""
    resource_type: int = ANY
    resource_name: str | None = None
    pattern_type: int = ANY
    principal: str | None = None
    host: str | None = None
    operation: int = ANY
    permission_type: int = ANY

    def matches(self, binding: AclBinding) -> bool:
        return self.matches_pattern(binding) and self.matches_entry(binding)

    def matches_pattern(self, binding: AclBinding) -> bool:
        """Kafka's ResourcePatternFilter.matches."""
        if self.resource_type != ANY and self.resource_type != binding.resource_type:
            return False
        if self.pattern_type not in (ANY, MATCH) and self.pattern_type != binding.pattern_type:
            return False
        name = self.resource_name
        if name is None:
            return True
        if self.pattern_type in (ANY, binding.pattern_type):
            return name == binding.resource_name
        if binding.pattern_type == LITERAL:       # MATCH from here on
            return name == binding.resource_name or binding.resource_name == WILDCARD
        return name.startswith(binding.resource_name)

    def matches_entry(self, binding: AclBinding) -> bool:
        """Kafka's AccessControlEntryFilter.matches."""
        return ((self.principal is None or self.principal == binding.principal)
                and (self.host is None or self.host == binding.host)
                and (self.operation == ANY or self.operation == binding.operation)
                and (self.permission_type == ANY or self.permission_type == binding.permission_type))


def parse_principal(principal: str) -> tuple[str, str]:
    """`Type:name` -> (type, name), as Kafka's SecurityUtils.parseKafkaPrincipal."""
    kind, sep, name = principal.partition(":")
    if not sep:
        raise ValueError(f"expected a string in format principalType:principalName but got {principal}")
    return kind, name


def validate_binding(binding: AclBinding) -> None:
    """Raise InvalidAcl for a binding CreateAcls may not store, with Kafka's messages
    (AclControlManager.validateNewAcl and AclApis)."""
    def refuse(message: str):
        raise InvalidAcl(message)
    if binding.resource_type not in RESOURCE_TYPES:
        refuse(f"Invalid resourceType {_name(RESOURCE_TYPES, binding.resource_type)}")
    if binding.pattern_type not in PATTERN_TYPES:
        refuse(f"Invalid patternType {_name(PATTERN_TYPES, binding.pattern_type, {MATCH: 'MATCH'})}")
    if binding.operation not in OPERATIONS:
        refuse(f"Invalid operation {_name(OPERATIONS, binding.operation)}")
    if binding.permission_type not in PERMISSIONS:
        refuse(f"Invalid permissionType {_name(PERMISSIONS, binding.permission_type)}")
    if not binding.resource_name:
        refuse("Resource name should not be empty")
    if binding.resource_type == CLUSTER and binding.resource_name != CLUSTER_NAME:
        refuse(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if binding.resource_type == USER and binding.permission_type == DENY and (
            binding.pattern_type != LITERAL or binding.resource_name == WILDCARD):
        refuse("A DENY ACL on USER resources must name one user (LITERAL, not a prefix or the wildcard)")
    try:
        kind, name = parse_principal(binding.principal)
    except ValueError as exc:
        refuse(f"Invalid principal: {exc}")
    if not kind or not name:
        refuse(f"Invalid principal {binding.principal!r}: the type and the name must not be empty")
    if not binding.host:
        refuse("Invalid empty host (use * for any host)")


def validate_filter(acl_filter: AclFilter) -> None:
    """Raise InvalidAcl for a filter with an UNKNOWN (or out-of-range) code, as Kafka's
    AclControlManager.validateFilter (and the request parsers) refuse it."""
    if acl_filter.resource_type not in (ANY, *RESOURCE_TYPES):
        raise InvalidAcl(f"Unknown patternFilter: unknown resource type {acl_filter.resource_type}.")
    if acl_filter.pattern_type not in (ANY, MATCH, LITERAL, PREFIXED):
        raise InvalidAcl(f"Unknown patternFilter: unknown pattern type {acl_filter.pattern_type}.")
    if acl_filter.operation not in (ANY, *OPERATIONS):
        raise InvalidAcl(f"Unknown entryFilter: unknown operation {acl_filter.operation}.")
    if acl_filter.permission_type not in (ANY, *PERMISSIONS):
        raise InvalidAcl(f"Unknown entryFilter: unknown permission type {acl_filter.permission_type}.")


def _name(names: dict[int, str], code: int, others: dict[int, str] | None = None) -> str:
    """A code's name for an error message; codes outside Kafka's enum read as UNKNOWN."""
    return names.get(code) or (others or {}).get(code) or {ANY: "ANY"}.get(code, "UNKNOWN")


def code_of(names: dict[int, str], label: str) -> int:
    """The code of a name such as 'TOPIC' or 'prefixed' (case-insensitive), else ValueError."""
    wanted = label.strip().upper().replace("-", "_")
    for code, name in names.items():
        if name == wanted:
            return code
    raise ValueError(f"unknown value {label!r}; expected one of {', '.join(names.values())}")
