"""Client quotas (KIP-546): which quota values are set for which user / client-id entities,
how a connection's quota is found, and how DescribeClientQuotas filters match entities.

An entity is a set of (type, name) pairs, type "user" or "client-id", name None meaning that
type's default (`<default>` in kafka-configs). The image keeps, per entity (a sorted tuple of
those pairs), its quota values by key. The keys this engine enforces are the only ones
accepted: `controller_mutation_rate` (KIP-599, engine/broker/mutation_quota.py),
`producer_byte_rate` / `consumer_byte_rate` (KIP-13, engine/broker/byte_rate_quota.py),
`request_percentage` (KIP-124, the event loop's and the worker threads' time on a request:
engine/protocol/request_quota.py), and
`connection_creation_rate` of `ip` entities (KIP-612, an address or the default IP, never
combined with a user or client id; engine/protocol/connection_quotas.py).

A connection's quota is the first entity set in Kafka's order (ClientQuotaManager), for its
user and client id (kafka_rules/client_quotas.py, which the console shares):
  user+client-id, user+default client-id, user, default user+client-id,
  default user+default client-id, default user, client-id, default client-id.
A connection's user is its SASL user (engine/security), or Kafka's unauthenticated
principal name, ANONYMOUS, on listeners without SASL. Clients that match one entity share one token bucket, except through a default
name, which gives each user / client id its own bucket - as Kafka's quota metric tags do.

Pure functions over the image's dict; the controller (the event loop) owns the dict.
"""
from __future__ import annotations

import ipaddress
import math
from typing import Iterable

import kafka.errors as Errors

from engine.errors import ApiError
from kafka_rules import client_quotas as quota_rules

USER, CLIENT_ID, IP = quota_rules.USER, quota_rules.CLIENT_ID, "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)
CONNECTION_RATE = "connection_creation_rate"          # the one key of IP entities (KIP-612)
INT_MAX = 2**31 - 1
SUPPORTED_KEYS = ("controller_mutation_rate", "producer_byte_rate", "consumer_byte_rate", "request_percentage",
                  CONNECTION_RATE)
ANONYMOUS = quota_rules.ANONYMOUS
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

Entity = tuple[tuple[str, str | None], ...]      # sorted (type, name) pairs; name None = the default
Quotas = dict[Entity, dict[str, float]]


def entity_of(pairs: Iterable[tuple[str, str | None]]) -> Entity:
    """A request's entity, checked: known types, each at most once, at least one; names not empty."""
    pairs = list(pairs)
    types = [t for t, _ in pairs]
    if not pairs:
        raise ApiError(Errors.InvalidRequestError, "An entity needs at least one entity type.")
    for entity_type in types:
        if entity_type not in ENTITY_TYPES:
            raise ApiError(Errors.InvalidRequestError,
                           f"Unknown or unsupported entity type {entity_type!r}: this engine supports "
                           f"{', '.join(ENTITY_TYPES)}.")
    if len(set(types)) != len(types):
        raise ApiError(Errors.InvalidRequestError, "Duplicate entity type in the entity.")
    for entity_type, name in pairs:
        if name == "":
            raise ApiError(Errors.InvalidRequestError, f"Empty {entity_type} name: use null for the default.")
    if IP in types and len(types) > 1:
        raise ApiError(Errors.InvalidRequestError, "Invalid quota entity combination, IP entity should not be used "
                                                   "with user/client ID entity.")
    ip = dict(pairs).get(IP)
    if ip is not None:
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            raise ApiError(Errors.InvalidRequestError, f"{ip} is not a valid IP address.") from None
    return tuple(sorted(pairs))


def check_op(key: str, value: float | None, remove: bool, entity: Entity = ()) -> None:
    if key not in SUPPORTED_KEYS:
        raise ApiError(Errors.InvalidRequestError,
                       f"Quota {key!r} is not supported by this engine (it enforces only "
                       f"{', '.join(SUPPORTED_KEYS)}).")
    for_ip = bool(entity) and entity[0][0] == IP
    if for_ip != (key == CONNECTION_RATE):
        raise ApiError(Errors.InvalidRequestError, f"{CONNECTION_RATE} is the only quota of IP entities, and only of "
                                                   f"them: {key} cannot be set for this entity.")
    if not remove and (value is None or not math.isfinite(value) or value <= 0):
        raise ApiError(Errors.InvalidRequestError, f"{key} must be a positive number, not {value!r}.")
    if not remove and key == CONNECTION_RATE and (value != int(value) or value > INT_MAX):
        shown = int(value) if value == int(value) else value
        raise ApiError(Errors.InvalidRequestError, f"{CONNECTION_RATE} is an integer (Kafka's INT): a whole number "
                                                   f"up to {INT_MAX}, not {shown}.")


def ip_rate(quotas: Quotas, ip: str) -> float | None:
    """The connection_creation_rate of an address: its own entity's, else the default IP's."""
    for entity in (((IP, ip),), ((IP, None),)):
        value = quotas.get(entity, {}).get(CONNECTION_RATE)
        if value is not None:
            return value
    return None


def user_of(ctx) -> str:
    """The quota user of a request: its connection's authenticated principal (a SASL
    session's, once connections authenticate), else ANONYMOUS, as Kafka names the
    unauthenticated principal of PLAINTEXT listeners."""
    return getattr(getattr(ctx, "session", None), "principal", None) or ANONYMOUS


def resolve(quotas: Quotas, key: str, user: str, client_id: str) -> tuple[float, tuple[str, str]] | None:
    """(value, bucket key) of the first entity in Kafka's order that sets `key`, else None
    (kafka_rules/client_quotas.py). The bucket key names who shares the bucket: ("", "") for
    nobody-specific parts."""
    if not quotas:        # the common case, asked on every Produce and Fetch: no generator walk
        return None
    return quota_rules.resolve(quotas, key, user, client_id)


def describe(quotas: Quotas, components: list[tuple[str, int, str | None]], strict: bool
             ) -> list[tuple[Entity, dict[str, float]]]:
    """The entities matching a DescribeClientQuotas filter, with their values. Components:
    (entity type, match type, match): 0 the name `match`, 1 the default, 2 any name."""
    seen = set()
    for entity_type, match_type, match in components:
        if entity_type in seen:
            raise ApiError(Errors.InvalidRequestError, f"Duplicate filter component entity type {entity_type!r}.")
        seen.add(entity_type)
        if entity_type not in ENTITY_TYPES:
            raise ApiError(Errors.InvalidRequestError, f"Unknown or unsupported entity type {entity_type!r}.")
        if match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED):
            raise ApiError(Errors.InvalidRequestError, f"Unknown match type {match_type}.")
        if match_type != MATCH_EXACT and match is not None:
            raise ApiError(Errors.InvalidRequestError, "The match must be null unless the match type is 0 (exact).")
        if match_type == MATCH_EXACT and match is None:
            raise ApiError(Errors.InvalidRequestError, "An exact match needs a name.")
    return [(entity, dict(values)) for entity, values in sorted(quotas.items(), key=lambda item: _sort_key(item[0]))
            if values and _matches(dict(entity), components, strict)]


def _matches(entity: dict[str, str | None], components, strict: bool) -> bool:
    for entity_type, match_type, match in components:
        if entity_type not in entity:
            return False
        name = entity[entity_type]
        if (match_type == MATCH_EXACT and name != match) or (match_type == MATCH_DEFAULT and name is not None):
            return False
    return not strict or len(entity) == len(components)


def _sort_key(entity: Entity):
    return [(t, n is not None, n or "") for t, n in entity]
