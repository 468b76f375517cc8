"""Writes for ACLs and SCRAM users: create and delete ACL bindings (one, a wizard's set, or a CSV
import), add or rotate a user's SCRAM credential, remove it.

Each service checks its input again with Kafka's rules (a form is not trusted to have done
it), changes the cluster through the gateway, writes an audit log entry however it ends,
and announces the change after commit. A SCRAM password goes to the gateway, which salts it;
it is never in the audit details, an error message or a log line.
"""
from __future__ import annotations

from dataclasses import dataclass

from console import formatting
from console.accounts.services import audited
from console.acls import rules
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import InvalidInput
from console.events import notify_on_commit
from kafka_rules.acls import AclBinding, AclFilter

AUDITED_BINDINGS = 200          # an import of thousands lists its first ones and counts the rest


@dataclass(frozen=True)
class CreateResult:
    created: int
    refused: list[tuple[str, str]]         # (the binding described, why)


def acl_create(*, cluster: Cluster, actor, bindings: list[AclBinding], source: str = "form") -> CreateResult:
    """Create the bindings (those already there are kept as they are). `source`: form, wizard
    or import, for the audit log."""
    bindings = list(dict.fromkeys(bindings))
    described = [rules.describe(b) for b in bindings]
    with audited(actor=actor, cluster=cluster, action="acl.create", target=_target(bindings),
                 details={"source": source, "count": len(bindings), "acls": described[:AUDITED_BINDINGS]}) as details:
        if not bindings:
            raise InvalidInput("No ACL to create.")
        for binding in bindings:
            rules.binding_check(binding)
        with cluster_gateway(cluster) as gw:
            results = gw.acls.create(bindings)
        refused = [(text, f"{error} ({error.kafka_code})") for text, error in zip(described, results) if error]
        details["refused"] = refused[:AUDITED_BINDINGS]
        if refused and len(refused) == len(bindings):
            raise InvalidInput(f"The cluster created none of the {formatting.counted(len(bindings), 'ACL')}: "
                               f"{refused[0][1]}")
    notify_on_commit("acl.created", {"cluster": cluster.pk, "count": len(bindings) - len(refused)})
    return CreateResult(len(bindings) - len(refused), refused)


def acl_delete(*, cluster: Cluster, actor, bindings: list[AclBinding]) -> int:
    """Delete exactly these bindings; returns how many the cluster removed."""
    bindings = list(dict.fromkeys(bindings))
    with audited(actor=actor, cluster=cluster, action="acl.delete", target=_target(bindings),
                 details={"count": len(bindings),
                          "acls": [rules.describe(b) for b in bindings[:AUDITED_BINDINGS]]}) as details:
        if not bindings:
            raise InvalidInput("No ACL to delete.")
        filters = [AclFilter(b.resource_type, b.resource_name, b.pattern_type, b.principal, b.host, b.operation,
                             b.permission_type) for b in bindings]
        with cluster_gateway(cluster) as gw:
            results = gw.acls.delete(filters)
        errors = [r for r in results if not isinstance(r, list)]
        if errors:
            raise errors[0]
        removed = sum(len(r) for r in results)
        details["removed"] = removed
    notify_on_commit("acl.deleted", {"cluster": cluster.pk, "count": removed})
    return removed


def _target(bindings: list[AclBinding]) -> str:
    if len(bindings) == 1:
        return rules.describe(bindings[0])[:300]
    principals = sorted({b.principal for b in bindings})
    return f"{len(bindings)} ACLs of {', '.join(principals[:3])}{' …' if len(principals) > 3 else ''}"[:300]


def scram_user_upsert(*, cluster: Cluster, actor, user: str, mechanisms: list[str], password: str,
                      iterations: int) -> None:
    """Add `user`'s credentials for these mechanisms, or replace them (a password rotation)."""
    with audited(actor=actor, cluster=cluster, action="scram.upsert", target=user,
                 details={"mechanisms": list(mechanisms), "iterations": iterations}):
        if not mechanisms:
            raise InvalidInput("Choose at least one SCRAM mechanism.")
        with cluster_gateway(cluster) as gw:
            for mechanism in mechanisms:
                gw.scram_users.upsert(user, mechanism, password, iterations)
    notify_on_commit("scram.upserted", {"cluster": cluster.pk, "user": user})


def scram_user_remove(*, cluster: Cluster, actor, user: str, mechanisms: list[str]) -> None:
    with audited(actor=actor, cluster=cluster, action="scram.remove", target=user,
                 details={"mechanisms": list(mechanisms)}):
        if not mechanisms:
            raise InvalidInput("Choose at least one SCRAM mechanism.")
        with cluster_gateway(cluster) as gw:
            gw.scram_users.delete(user, list(mechanisms))
    notify_on_commit("scram.removed", {"cluster": cluster.pk, "user": user})
