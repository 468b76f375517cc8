"""Kafka's ACL rules as the ACLs page needs them: names, checks, the wizards' binding sets, the
CSV format, and a principal's effective permissions. Pure functions, no I/O.

The model and the decision rules are shared with the engine (kafka_rules: acls.py,
authorizer.py), which follow Kafka's StandardAuthorizer, so the page computes exactly what a broker decides -
except `super.users`, which no API reveals, and `allow.everyone.if.no.acl.found` (assumed off,
Kafka's default), both said on the page.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from console.errors import InvalidInput
from kafka_rules.acl_index import AclIndex
from kafka_rules.acls import (ALL, ALLOW, ALTER, ALTER_CONFIGS, CLUSTER, CLUSTER_NAME, CREATE, DELETE,
                              DESCRIBE, DESCRIBE_CONFIGS, GROUP, IDEMPOTENT_WRITE, LITERAL, OPERATIONS,
                              PATTERN_TYPES, PERMISSIONS, PREFIXED, READ, RESOURCE_TYPES, SUPPORTED_OPERATIONS,
                              TOPIC, TRANSACTIONAL_ID, WRITE, AclBinding, InvalidAcl, code_of, validate_binding)
from kafka_rules.authorizer import StandardAuthorizer

MAX_IMPORT_ROWS = 10_000
MAX_NAME = 1000
CSV_HEADER = ("Principal", "ResourceType", "PatternType", "ResourceName", "Operation", "PermissionType", "Host")


def label(names: dict[int, str], code: int) -> str:
    return names.get(code, f"UNKNOWN({code})")


def binding_check(binding: AclBinding) -> AclBinding:
    """Kafka's refusals (engine/security/acls.validate_binding) and kafka-acls.sh's: an operation
    the resource type does not have. Raises InvalidInput with a sentence."""
    try:
        validate_binding(binding)
    except InvalidAcl as exc:
        raise InvalidInput(f"{str(exc).rstrip('.')}.") from None
    if binding.operation != ALL and binding.operation not in SUPPORTED_OPERATIONS[binding.resource_type]:
        allowed = ", ".join(OPERATIONS[op] for op in (ALL, *SUPPORTED_OPERATIONS[binding.resource_type]))
        raise InvalidInput(f"A {RESOURCE_TYPES[binding.resource_type]} ACL cannot grant "
                           f"{OPERATIONS[binding.operation]}: it takes {allowed}.")
    if len(binding.resource_name) > MAX_NAME or len(binding.principal) > MAX_NAME or len(binding.host) > MAX_NAME:
        raise InvalidInput(f"Names, principals and hosts are at most {MAX_NAME} characters.")
    return binding


def describe(binding: AclBinding) -> str:
    """One line, as a person reads it: "ALLOW User:alice READ on TOPIC orders (LITERAL) from *"."""
    return (f"{label(PERMISSIONS, binding.permission_type)} {binding.principal} "
            f"{label(OPERATIONS, binding.operation)} on {label(RESOURCE_TYPES, binding.resource_type)} "
            f"{binding.resource_name} ({label(PATTERN_TYPES, binding.pattern_type)}) from {binding.host}")


# --- wizards: the sets of ACLs that clients need ----------------------------------------------

def _allow(principal: str, host: str, resource_type: int, name: str, pattern: int, *operations: int):
    return [AclBinding(resource_type, name, pattern, principal, host, op, ALLOW) for op in operations]


def consumer_bindings(*, principal: str, host: str, topic: str, topic_pattern: int, group: str,
                      group_pattern: int) -> list[AclBinding]:
    """kafka-acls.sh --consumer: READ and DESCRIBE on the topics, READ on the group."""
    return (_allow(principal, host, TOPIC, topic, topic_pattern, READ, DESCRIBE)
            + _allow(principal, host, GROUP, group, group_pattern, READ))


def producer_bindings(*, principal: str, host: str, topic: str, topic_pattern: int, transactional_id: str = "",
                      transactional_pattern: int = LITERAL, idempotent: bool = False) -> list[AclBinding]:
    """kafka-acls.sh --producer: WRITE, DESCRIBE and CREATE on the topics; WRITE and DESCRIBE on
    a transactional id; IDEMPOTENT_WRITE on the cluster for an idempotent producer (Kafka 2.8+
    also accepts WRITE on a topic for that, KIP-679)."""
    bindings = _allow(principal, host, TOPIC, topic, topic_pattern, WRITE, DESCRIBE, CREATE)
    if transactional_id:
        bindings += _allow(principal, host, TRANSACTIONAL_ID, transactional_id, transactional_pattern, WRITE, DESCRIBE)
    if idempotent:
        bindings += _allow(principal, host, CLUSTER, CLUSTER_NAME, LITERAL, IDEMPOTENT_WRITE)
    return bindings


def streams_bindings(*, principal: str, host: str, application_id: str, input_topics: list[str],
                     output_topics: list[str], exactly_once: bool) -> list[AclBinding]:
    """What a Kafka Streams application needs (Confluent's and Kafka's security guides):
    READ on its input topics, WRITE on its output topics, everything on its internal topics
    (changelogs and repartition topics are named `<application.id>-...`), READ on its group
    (the application.id), and with exactly-once WRITE and DESCRIBE on its transactional ids
    (`<application.id>-...`) and IDEMPOTENT_WRITE on the cluster."""
    bindings = []
    for topic in input_topics:
        bindings += _allow(principal, host, TOPIC, topic, LITERAL, READ, DESCRIBE)
    for topic in output_topics:
        bindings += _allow(principal, host, TOPIC, topic, LITERAL, WRITE, DESCRIBE)
    bindings += _allow(principal, host, TOPIC, f"{application_id}-", PREFIXED, ALL)
    bindings += _allow(principal, host, GROUP, application_id, LITERAL, READ)
    if exactly_once:
        bindings += _allow(principal, host, TRANSACTIONAL_ID, f"{application_id}-", PREFIXED, WRITE, DESCRIBE)
        bindings += _allow(principal, host, CLUSTER, CLUSTER_NAME, LITERAL, IDEMPOTENT_WRITE)
    return list(dict.fromkeys(bindings))


# --- CSV (kafbat kafka-ui's columns) -------------------------------------------------------------

def to_csv(bindings: list[AclBinding]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for b in bindings:
        writer.writerow([_csv_safe(b.principal), label(RESOURCE_TYPES, b.resource_type),
                         label(PATTERN_TYPES, b.pattern_type), _csv_safe(b.resource_name),
                         label(OPERATIONS, b.operation), label(PERMISSIONS, b.permission_type), _csv_safe(b.host)])
    return out.getvalue()


def _csv_safe(value: str) -> str:
    """A cell a spreadsheet would run as a formula (=, +, -, @ first) gets a leading quote."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


@dataclass(frozen=True)
class ParsedCsv:
    bindings: list[AclBinding]
    errors: list[tuple[int, str]]      # (line number, why)


def parse_csv(text: str) -> ParsedCsv:
    """Rows of CSV_HEADER's columns (a header row is recognised and skipped, names are
    case-insensitive); each bad row is reported with its line, the good ones kept."""
    bindings, errors = [], []
    reader = csv.reader(io.StringIO(text))
    for number, row in enumerate(reader, 1):
        if not row or all(not cell.strip() for cell in row):
            continue
        if number == 1 and [c.strip().lower() for c in row] == [c.lower() for c in CSV_HEADER]:
            continue
        if len(bindings) + len(errors) >= MAX_IMPORT_ROWS:
            errors.append((number, f"More than {MAX_IMPORT_ROWS:,} rows: the rest is not read."))
            break
        try:
            bindings.append(_row(row))
        except (InvalidInput, ValueError) as exc:
            errors.append((number, str(exc)))
    return ParsedCsv(bindings, errors)


def _row(row: list[str]) -> AclBinding:
    if len(row) != len(CSV_HEADER):
        raise InvalidInput(f"Expected {len(CSV_HEADER)} columns ({', '.join(CSV_HEADER)}), found {len(row)}.")
    principal, resource_type, pattern, name, operation, permission, host = (cell.strip() for cell in row)
    if principal.startswith("'") or name.startswith("'") or host.startswith("'"):
        principal, name, host = (v[1:] if v.startswith("'") else v for v in (principal, name, host))
    return binding_check(AclBinding(code_of(RESOURCE_TYPES, resource_type), name, code_of(PATTERN_TYPES, pattern),
                                    principal, host or "*", code_of(OPERATIONS, operation),
                                    code_of(PERMISSIONS, permission)))


# --- a principal's effective permissions --------------------------------------------------------

@dataclass(frozen=True)
class Effective:
    resource_type: str
    name: str
    allowed: tuple[str, ...]           # operation names, in Kafka's order for the resource type
    denied_by_deny: tuple[str, ...]    # operations an ALLOW grants but a DENY takes away
    bindings: tuple[str, ...]          # the bindings that apply to the resource, described


def effective_permissions(bindings: list[AclBinding], *, principal: str, host: str,
                          resources: list[tuple[int, str]]) -> list[Effective]:
    """What `principal` connecting from `host` may do on each resource, by Kafka's rules.

    Only the principal's own bindings and User:*'s can allow or deny it anything (with
    allow.everyone.if.no.acl.found off), so the index holds just those: a page over tens of
    thousands of ACLs and topics stays quick. Resources no such binding reaches are left out."""
    index = AclIndex()
    for number, binding in enumerate(dict.fromkeys(b for b in bindings if b.principal in (principal, "User:*")
                                                   and b.host in (host, "*"))):
        index.add(str(number), binding)
    strict = StandardAuthorizer(index)
    rows = []
    for resource_type, name in resources:
        applying = list(index.applying_to(resource_type, name))
        if not applying:
            continue
        operations = SUPPORTED_OPERATIONS[resource_type]
        allowed = tuple(OPERATIONS[op] for op in operations
                        if strict.authorize(principal, host, op, resource_type, name))
        granted = {OPERATIONS[op] for op in operations if any(_grants(b, op) for b in applying
                                                                 if b.permission_type == ALLOW)}
        rows.append(Effective(RESOURCE_TYPES[resource_type], name, allowed,
                              tuple(op for op in OPERATIONS.values() if op in granted - set(allowed)),
                              tuple(describe(b) for b in applying)))
    return rows


def _grants(binding: AclBinding, operation: int) -> bool:
    if binding.operation in (ALL, operation):
        return True
    return (operation == DESCRIBE and binding.operation in (READ, WRITE, DELETE, ALTER)) or \
        (operation == DESCRIBE_CONFIGS and binding.operation == ALTER_CONFIGS)


OPERATION_CHOICES = [(code, name) for code, name in OPERATIONS.items()]
RESOURCE_CHOICES = [(code, name) for code, name in RESOURCE_TYPES.items()]
PATTERN_CHOICES = [(code, name) for code, name in PATTERN_TYPES.items()]
PERMISSION_CHOICES = [(code, name) for code, name in PERMISSIONS.items()]
