"""Writes for client quotas: set one key of one entity, or remove it (kafka-configs.sh
--alter --add-config / --delete-config on users, clients and ips).

Each service checks its input with Kafka's rules (`InvalidInput`), changes the cluster
through the gateway, writes an audit log entry however it ends (with the entity, the key and
the old and new values), and announces the change after commit.
"""
from __future__ import annotations

import math

from console.accounts.services import audited
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import InvalidInput
from console.events import notify_on_commit
from console.kafka_gateway.quotas import Entity
from console.quotas.rules import entity_check, entity_label, key_check, value_check


def quota_set(*, cluster: Cluster, actor, entity: Entity, key: str, value: float) -> float | None:
    """Set `key` of `entity` to `value`; returns the value it had (None: not set)."""
    label = entity_label(entity)
    with audited(actor=actor, cluster=cluster, action="quota.set", target=label,
                 details={"entity": _entity_details(entity), "key": key, "value": _json_number(value)}) as details:
        entity = entity_check(entity)
        key_check(entity, key)
        value = value_check(key, value)
        with cluster_gateway(cluster) as gw:
            old = gw.quotas.entity_values(entity).get(key)
            details["old"] = old
            gw.quotas.alter(entity, set_values={key: value})
    notify_on_commit("quota.set", {"cluster": cluster.pk, "entity": label, "key": key})
    return old


def quota_remove(*, cluster: Cluster, actor, entity: Entity, key: str) -> float:
    """Remove `key` from `entity` (its clients fall back to the next entity in Kafka's order,
    or to no quota); returns the value it had. A key the entity does not set is refused."""
    label = entity_label(entity)
    with audited(actor=actor, cluster=cluster, action="quota.remove", target=label,
                 details={"entity": _entity_details(entity), "key": key}) as details:
        entity = entity_check(entity)
        key_check(entity, key)
        with cluster_gateway(cluster) as gw:
            old = gw.quotas.entity_values(entity).get(key)
            if old is None:
                raise InvalidInput(f"{label} has no {key} quota to remove.")
            details["old"] = old
            gw.quotas.alter(entity, remove=[key])
    notify_on_commit("quota.removed", {"cluster": cluster.pk, "entity": label, "key": key})
    return old


def _entity_details(entity: Entity) -> list[dict]:
    """As Kafka's EntityData: [{"entity_type": "user", "entity_name": None}] for the default user."""
    return [{"entity_type": t, "entity_name": n} for t, n in entity]


def _json_number(value) -> float | str:
    """A value fit for the audit log's JSON (NaN and infinities are not; the check refuses them)."""
    return value if isinstance(value, (int, float)) and math.isfinite(value) else str(value)
