"""Reads for the Quotas page: every client quota entity with its values, and the preview of a
change (the cluster checks it with validate_only and changes nothing).

The entity type filter is Kafka's own (a DescribeClientQuotas component matching any name of
that type, not strict: "user" lists users with and without a client id); the search is a
substring of the entity's names, matched here since Kafka matches only whole names.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import INTERNAL
from console.errors import ConsoleError
from console.kafka_gateway.quotas import ClientQuota, Entity, QuotaFilter
from console.quotas.forms import QuotaEntityForm
from console.quotas.rules import CLIENT_ID, ENTITY_TYPES, IP, KEYS, USER, entity_check, entity_label, key_check, \
    value_check, value_display
from kafka_rules.client_quotas import ANONYMOUS, applying_entity


@dataclass(frozen=True)
class EntityPart:
    entity_type: str
    name: str | None                 # None: the type's default entity

    @property
    def is_default(self) -> bool:
        return self.name is None


@dataclass(frozen=True)
class QuotaValue:
    key: str
    value: float
    display: str                     # with its unit: "1 MiB/s (1,048,576 bytes/s)"


@dataclass(frozen=True)
class QuotaRow:
    label: str
    entity: tuple[EntityPart, ...]
    values: tuple[QuotaValue, ...]
    fields: dict = field(metadata=INTERNAL)      # the form fields naming the entity (links, hidden inputs)

    def part(self, entity_type: str) -> EntityPart | None:
        return next((p for p in self.entity if p.entity_type == entity_type), None)

    @property
    def user(self) -> EntityPart | None:
        return self.part(USER)

    @property
    def client_id(self) -> EntityPart | None:
        return self.part(CLIENT_ID)

    @property
    def ip(self) -> EntityPart | None:
        return self.part(IP)


@dataclass(frozen=True)
class QuotaListView:
    supported: bool
    entity_type: str = ""
    search: str = ""
    rows: list[QuotaRow] = field(default_factory=list)
    error: str | None = None                     # the cluster refused the filter (our engine has no IP quotas)
    kafka_code: str | None = None


@dataclass(frozen=True)
class QuotaPreview:
    """What a set would change: the entity's value now and after; the cluster accepted it."""

    label: str
    key: str
    old: float | None
    new: float
    old_display: str | None
    new_display: str

    @property
    def unchanged(self) -> bool:
        return self.old == self.new


def quota_list(*, cluster: Cluster, entity_type: str = "", search: str = "") -> QuotaListView:
    entity_type = entity_type if entity_type in ENTITY_TYPES else ""
    search = search.strip()
    with cluster_gateway(cluster) as gw:
        if not gw.quotas.supported():
            return QuotaListView(supported=False)
        try:
            found = gw.quotas.describe([QuotaFilter(entity_type)] if entity_type else [])
        except ConsoleError as exc:
            return QuotaListView(supported=True, entity_type=entity_type, search=search, error=str(exc),
                                 kafka_code=exc.kafka_code)
    rows = [quota_row(q) for q in found if _matches(q, search)]
    rows.sort(key=_row_order)
    return QuotaListView(supported=True, entity_type=entity_type, search=search, rows=rows)


def quota_row(quota: ClientQuota) -> QuotaRow:
    return QuotaRow(label=entity_label(quota.entity), entity=tuple(EntityPart(t, n) for t, n in quota.entity),
                    values=tuple(QuotaValue(k, v, value_display(k, v)) for k, v in quota.values),
                    fields=QuotaEntityForm.initial_for(quota.entity))


@dataclass(frozen=True)
class AppliedQuota:
    key: str
    source: str | None               # the entity it comes from ("user 'alice', default client-id"); None: no quota
    display: str | None


@dataclass(frozen=True)
class QuotaResolution:
    """The quotas one client gets, each from the first entity in Kafka's order that sets it."""

    user: str
    client_id: str
    quotas: tuple[AppliedQuota, ...]


def quota_resolution(*, cluster: Cluster, user: str, client_id: str) -> QuotaResolution:
    """Every user and client id key's quota for the client (`user` empty: ANONYMOUS), read with
    one DescribeClientQuotas of every entity; GatewayError when the cluster cannot tell."""
    user = user or ANONYMOUS
    with cluster_gateway(cluster) as gw:
        found = gw.quotas.describe([])
    quotas = {q.entity: dict(q.values) for q in found if all(t != IP for t, _ in q.entity)}
    applied = []
    for key, quota in KEYS.items():
        if quota.for_ip:
            continue
        match = applying_entity(quotas, key, user, client_id)
        applied.append(AppliedQuota(key, None, None) if match is None else
                       AppliedQuota(key, entity_label(match[0]), value_display(key, match[1])))
    return QuotaResolution(user=user, client_id=client_id, quotas=tuple(applied))


def quota_preview(*, cluster: Cluster, entity: Entity, key: str, value: float) -> QuotaPreview:
    """AlterClientQuotas with validate_only: a refusal raises GatewayError with Kafka's code."""
    entity = entity_check(entity)
    key_check(entity, key)
    value = value_check(key, value)
    with cluster_gateway(cluster) as gw:
        old = gw.quotas.entity_values(entity).get(key)
        gw.quotas.alter(entity, set_values={key: value}, validate_only=True)
    return QuotaPreview(label=entity_label(entity), key=key, old=old, new=value,
                        old_display=None if old is None else value_display(key, old),
                        new_display=value_display(key, value))


def _matches(quota: ClientQuota, search: str) -> bool:
    if not search:
        return True
    needle = search.lower()
    return any(needle in (name or "default").lower() for _, name in quota.entity)


def _row_order(row: QuotaRow):
    """Users, then client ids, then IPs; within each, an entity without the next part first,
    then the default, then names alphabetically."""
    def part_key(entity_type: str):
        part = row.part(entity_type)
        return (0, "") if part is None else (1, "") if part.is_default else (2, part.name)
    first = next(i for i, t in enumerate(ENTITY_TYPES) if row.part(t) is not None)
    return (first, *[part_key(t) for t in ENTITY_TYPES])
