"""Reads for the ACLs and Users pages: the cluster's ACLs filtered, sorted and paged, what a
create or an import would add, a principal's effective permissions, and the SCRAM users.

Filters are substrings (any case) matched here; Kafka's own filters match whole names only.
A cluster that refuses (no authorizer: SECURITY_DISABLED; a principal without DESCRIBE on
the cluster: CLUSTER_AUTHORIZATION_FAILED) gives a view with the refusal, not an exception,
so the page says it in place of the table.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from console.acls import rules
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import INTERNAL
from console.errors import ConsoleError
from console.kafka_gateway.errors import NotAuthorized
from console.kafka_gateway.scram_users import ScramUser
from kafka_rules.acls import (ANY, CLUSTER, CLUSTER_NAME, GROUP, LITERAL, OPERATIONS, PATTERN_TYPES, PERMISSIONS,
                              RESOURCE_TYPES, TOPIC, TRANSACTIONAL_ID, WILDCARD, AclBinding)

PAGE_SIZE = 100
SECURITY_DISABLED = "SECURITY_DISABLED (54)"


@dataclass(frozen=True)
class AclRow:
    binding: AclBinding = field(metadata=INTERNAL)
    principal: str
    host: str
    resource_type: str
    resource_name: str
    pattern_type: str
    operation: str
    permission_type: str

    @property
    def csv(self) -> str:
        """The row as one CSV line: what its delete button posts."""
        return rules.to_csv([self.binding]).split("\n", 1)[1]


@dataclass(frozen=True)
class AclListView:
    rows: list[AclRow] = field(default_factory=list)
    total: int = 0                     # ACLs on the cluster
    matched: int = 0                   # ACLs the filters keep
    page: int = 1
    pages: int = 1
    error: str | None = None
    kafka_code: str | None = None
    not_authorized: bool = False
    security_disabled: bool = False


def _row(b: AclBinding) -> AclRow:
    return AclRow(b, b.principal, b.host, rules.label(RESOURCE_TYPES, b.resource_type), b.resource_name,
                  rules.label(PATTERN_TYPES, b.pattern_type), rules.label(OPERATIONS, b.operation),
                  rules.label(PERMISSIONS, b.permission_type))


def acl_list(*, cluster: Cluster, filters: dict, sort: str = "", desc: bool = False, page: int = 1) -> AclListView:
    try:
        with cluster_gateway(cluster) as gw:
            bindings = gw.acls.describe()
    except ConsoleError as exc:
        return _refusal(exc)
    kept = [b for b in bindings if _matches(b, filters)]
    kept.sort(key=_SORT_KEYS.get(sort, _SORT_KEYS["principal"]), reverse=desc)
    pages = max(1, -(-len(kept) // PAGE_SIZE))
    page = min(max(page, 1), pages)
    # Rows are made for the page shown only: thousands of ACLs cost a sort, not thousands of rows.
    return AclListView([_row(b) for b in kept[(page - 1) * PAGE_SIZE:page * PAGE_SIZE]], len(bindings), len(kept),
                       page, pages)


def _then(b: AclBinding) -> tuple:
    """The order within equal keys: resource type, name, operation (by their names)."""
    return RESOURCE_TYPES.get(b.resource_type, ""), b.resource_name, OPERATIONS.get(b.operation, "")


# Each column sorts by what it shows: names for the codes, any case for the texts.
_SORT_KEYS = {
    "principal": lambda b: (b.principal.lower(), *_then(b)),
    "host": lambda b: (b.host, *_then(b)),
    "resource_type": lambda b: _then(b),
    "resource_name": lambda b: (b.resource_name.lower(), *_then(b)),
    "pattern_type": lambda b: (PATTERN_TYPES.get(b.pattern_type, ""), *_then(b)),
    "operation": lambda b: (OPERATIONS.get(b.operation, ""), *_then(b)),
    "permission_type": lambda b: (PERMISSIONS.get(b.permission_type, ""), *_then(b)),
}


def acl_export(*, cluster: Cluster, filters: dict) -> str:
    """The ACLs the filters keep, as CSV (raises ConsoleError if the cluster refuses)."""
    with cluster_gateway(cluster) as gw:
        bindings = gw.acls.describe()
    kept = sorted((b for b in bindings if _matches(b, filters)), key=lambda b: (b.principal, b.resource_type,
                                                                               b.resource_name, b.operation))
    return rules.to_csv(kept)


def _refusal(exc: ConsoleError) -> AclListView:
    code = exc.kafka_code or ""
    return AclListView(error=str(exc), kafka_code=exc.kafka_code, not_authorized=isinstance(exc, NotAuthorized),
                       security_disabled=code == SECURITY_DISABLED)


def _matches(b: AclBinding, f: dict) -> bool:
    return ((not f["principal"] or f["principal"].lower() in b.principal.lower())
            and (not f["name"] or f["name"].lower() in b.resource_name.lower())
            and f["resource_type"] in (ANY, b.resource_type) and f["pattern_type"] in (ANY, b.pattern_type)
            and f["operation"] in (ANY, b.operation) and f["permission_type"] in (ANY, b.permission_type))


@dataclass(frozen=True)
class CreatePreview:
    """What creating `bindings` would do: the ones already there change nothing."""
    new: list[AclRow]
    existing: list[AclRow]
    errors: list[tuple[int, str]] = field(default_factory=list)     # CSV lines that were refused
    csv: str = ""                                                     # the new ones: what the confirm posts


def acl_create_preview(*, cluster: Cluster, bindings: list[AclBinding],
                       errors: list[tuple[int, str]] | None = None) -> CreatePreview:
    with cluster_gateway(cluster) as gw:
        present = set(gw.acls.describe())
    unique = list(dict.fromkeys(bindings))
    new = [b for b in unique if b not in present]
    return CreatePreview([_row(b) for b in new], [_row(b) for b in unique if b in present], errors or [],
                         rules.to_csv(new))


@dataclass(frozen=True)
class PrincipalView:
    principal: str
    host: str
    topics: list[rules.Effective]      # the topics some ACL of the principal (or User:*) reaches
    groups: list[rules.Effective]
    others: list[rules.Effective]      # the cluster and the transactional ids
    acl_count: int                     # the principal's own bindings (and User:*'s)
    topics_total: int                  # every topic of the cluster: the others allow nothing
    groups_listed: bool = True         # False: the console may not list groups, only those named in ACLs


def principal_permissions(*, cluster: Cluster, principal: str, host: str) -> PrincipalView:
    """Every topic of the cluster, every group it lists and every group or transactional id the
    principal's ACLs name, with what the principal may do there by Kafka's rules; those no ACL
    of the principal (or User:*) reaches allow nothing and are only counted."""
    with cluster_gateway(cluster) as gw:
        bindings = gw.acls.describe()
        topics = [t.name for t in gw.metadata(cached=True).topics]
        try:
            groups = [g.group_id for g in gw.groups.list_groups() or ()]
            listed = True
        except ConsoleError:        # a console principal that may not list groups still sees the ACLs'
            groups, listed = [], False
    host = host or "*"
    own = [b for b in bindings if b.principal in (principal, "User:*")]
    named = {(b.resource_type, b.resource_name) for b in own if b.pattern_type == LITERAL
             and b.resource_name != WILDCARD}
    groups = sorted(set(groups) | {n for t, n in named if t == GROUP})
    transactional = sorted(n for t, n in named if t == TRANSACTIONAL_ID)

    def compute(resources):
        return rules.effective_permissions(own, principal=principal, host=host, resources=resources)
    others = compute([(CLUSTER, CLUSTER_NAME)] + [(TRANSACTIONAL_ID, t) for t in transactional])
    return PrincipalView(principal, host, compute([(TOPIC, t) for t in sorted(topics)]),
                         compute([(GROUP, g) for g in groups]), others, len(own), len(topics), listed)


@dataclass(frozen=True)
class ScramUserListView:
    users: list[ScramUser] = field(default_factory=list)
    error: str | None = None
    kafka_code: str | None = None
    not_authorized: bool = False


def scram_user_list(*, cluster: Cluster) -> ScramUserListView:
    try:
        with cluster_gateway(cluster) as gw:
            return ScramUserListView(gw.scram_users.describe())
    except ConsoleError as exc:
        return ScramUserListView(error=str(exc), kafka_code=exc.kafka_code,
                                 not_authorized=isinstance(exc, NotAuthorized))
