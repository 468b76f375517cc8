"""Which client quota applies to a connection, in Kafka's order (ClientQuotaManager's default
quota callback), shared by the engine (which enforces it) and the console (which tells an
operator which entity a given client's quota comes from).

For a user and a client id, the quota of a key is the first of these entities that sets the
key, each part a name or its type's default (None):

    user + client id, user + default client id, user, default user + client id,
    default user + default client id, default user, client id, default client id

An entity is a tuple of (type, name) pairs sorted by type ("client-id" before "user"). The
user is the connection's principal name (its SASL user, a TLS certificate's mapped name, or
ANONYMOUS on a listener without authentication). IP entities take only
connection_creation_rate and are not part of this order.

Clients matched through one entity share one rate, except through a default, which gives
each user or client id its own: the second item of each candidate names who shares it (Kafka's
quota metric tags). Pure functions; no I/O.
"""
from __future__ import annotations

from typing import Iterator, Mapping

USER, CLIENT_ID = "user", "client-id"
ANONYMOUS = "ANONYMOUS"

Entity = tuple[tuple[str, str | None], ...]
Quotas = Mapping[Entity, Mapping[str, float]]


def candidates(user: str, client_id: str) -> Iterator[tuple[Entity, tuple[str, str]]]:
    """(entity, who shares its rate) in Kafka's order for this user and client id."""
    u, c = (USER, user), (CLIENT_ID, client_id)
    du, dc = (USER, None), (CLIENT_ID, None)
    yield (c, u), (user, client_id)
    yield (dc, u), (user, client_id)
    yield (u,), (user, "")
    yield (c, du), (user, client_id)
    yield (dc, du), (user, client_id)
    yield (du,), (user, "")
    yield (c,), ("", client_id)
    yield (dc,), ("", client_id)


def _first(quotas: Quotas, key: str, user: str, client_id: str):
    """(entity, who shares its rate, value) of the first entity in Kafka's order setting `key`."""
    for entity, shared_by in candidates(user, client_id):
        value = quotas.get(entity, {}).get(key)
        if value is not None:
            return entity, shared_by, value
    return None


def resolve(quotas: Quotas, key: str, user: str, client_id: str) -> tuple[float, tuple[str, str]] | None:
    """(value, who shares the rate) of the first entity in Kafka's order that sets `key`, else None."""
    found = _first(quotas, key, user, client_id)
    return None if found is None else (found[2], found[1])


def applying_entity(quotas: Quotas, key: str, user: str, client_id: str) -> tuple[Entity, float] | None:
    """The entity whose value of `key` applies to the client, and that value; None: no quota."""
    found = _first(quotas, key, user, client_id)
    return None if found is None else (found[0], found[2])
