"""Client quota calls (KIP-546): DescribeClientQuotas (k48) and AlterClientQuotas (k49), v0-1.

Use them through a gateway: `with open_gateway(settings) as gw: gw.quotas.describe()`.

An entity is a tuple of (entity type, name) pairs, a None name being that type's default
entity (`--entity-default` of kafka-configs.sh): `(("user", "alice"),)`,
`(("client-id", None), ("user", "alice"))`. Pairs are kept sorted by type, so an entity
compares equal whatever order the broker listed its parts in.

Both requests go to any broker, as Kafka's admin client sends them (the broker forwards an
alteration to the controller). A refusal of the whole describe, or of the one entity an
alteration names, raises `GatewayError` with Kafka's code (INVALID_REQUEST (42) and the
broker's reason, for example, from a broker that does not enforce the key).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import kafka.errors as Errors
from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest, DescribeClientQuotasRequest

from console.kafka_gateway.errors import error_for_code, translated
from console.kafka_gateway.wire import send

Entity = tuple[tuple[str, str | None], ...]
MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2        # DescribeClientQuotas' match types
_UNSUPPORTED = (Errors.IncompatibleBrokerVersion, Errors.UnsupportedVersionError)


def entity_of(pairs: Iterable[tuple[str, str | None]]) -> Entity:
    return tuple(sorted(pairs, key=lambda pair: pair[0]))


@dataclass(frozen=True)
class QuotaFilter:
    """One component of a DescribeClientQuotas filter: entities of `entity_type` named `name`,
    or its default entity (`default`), or with any name (neither)."""

    entity_type: str
    name: str | None = None
    default: bool = False

    def component(self):
        match_type = MATCH_EXACT if self.name is not None else MATCH_DEFAULT if self.default else MATCH_ANY
        return DescribeClientQuotasRequest.ComponentData(entity_type=self.entity_type, match_type=match_type,
                                                         match=self.name)


@dataclass(frozen=True)
class ClientQuota:
    """The quota values set for one entity, by key."""

    entity: Entity
    values: tuple[tuple[str, float], ...]       # sorted by key

    def value(self, key: str) -> float | None:
        return dict(self.values).get(key)


class QuotaCalls:
    """The client quota calls of one gateway (see the module docstring)."""

    def __init__(self, gateway) -> None:
        self._manager = gateway._admin._manager

    def supported(self) -> bool:
        """Whether the cluster answers DescribeClientQuotas and AlterClientQuotas (Kafka 2.6+)."""
        return all(self._version(r) >= 0 for r in (DescribeClientQuotasRequest, AlterClientQuotasRequest))

    @translated
    def describe(self, filters: Iterable[QuotaFilter] = (), *, strict: bool = False) -> list[ClientQuota]:
        """The entities matching every filter (all entities without one); `strict`: only
        entities made of exactly the filtered types."""
        request = DescribeClientQuotasRequest(components=[f.component() for f in filters], strict=strict)
        answer = self._send(request)
        if answer.error_code:
            raise error_for_code(answer.error_code, answer.error_message)
        found = [ClientQuota(entity_of((e.entity_type, e.entity_name) for e in entry.entity),
                             tuple(sorted((v.key, v.value) for v in entry.values)))
                 for entry in answer.entries or ()]
        return sorted(found, key=lambda q: [(t, n is not None, n or "") for t, n in q.entity])

    def entity_values(self, entity: Entity) -> dict[str, float]:
        """The values set on exactly this entity (strict filter of its own parts)."""
        filters = [QuotaFilter(t, name=n, default=n is None) for t, n in entity]
        found = next((q for q in self.describe(filters, strict=True) if q.entity == entity_of(entity)), None)
        return dict(found.values) if found else {}

    @translated
    def alter(self, entity: Entity, *, set_values: Mapping[str, float] | None = None, remove: Iterable[str] = (),
              validate_only: bool = False) -> None:
        """Set and remove keys of one entity in one AlterClientQuotas entry; Kafka applies
        the entry whole or refuses it. `validate_only`: the broker checks and changes nothing."""
        entry_cls = AlterClientQuotasRequest.EntryData
        ops = [entry_cls.OpData(key=k, value=float(v), remove=False) for k, v in (set_values or {}).items()]
        ops += [entry_cls.OpData(key=k, value=0.0, remove=True) for k in remove]
        entry = entry_cls(entity=[entry_cls.EntityData(entity_type=t, entity_name=n) for t, n in entity], ops=ops)
        answer = self._send(AlterClientQuotasRequest(entries=[entry], validate_only=validate_only))
        for result in answer.entries:
            if result.error_code:
                raise error_for_code(result.error_code, result.error_message)

    def _version(self, request_class) -> int:
        try:
            return self._manager.broker_version_data.api_version(request_class)
        except _UNSUPPORTED:
            return -1

    def _send(self, request):
        return self._manager.run(send, self._manager, request)
