"""Kafka's rules for client quotas (KIP-546, Kafka's ClientQuotaControlManager), checked by the
console before it asks the cluster, and how quota values read on a page.

- Entities: a user, a client id, a user with a client id, or an IP address; each part a name
  or the default (a None name). An IP never combines with the others.
- Keys by entity: users and client ids take producer_byte_rate and consumer_byte_rate (whole
  bytes per second), request_percentage (% of one I/O and network thread) and
  controller_mutation_rate (partition mutations per second); IPs take
  connection_creation_rate (whole connections per second).
- Values are positive and finite.

A cluster may enforce less. This project's engine enforces producer_byte_rate,
consumer_byte_rate (engine/broker/byte_rate_quota.py) and controller_mutation_rate
(engine/broker/mutation_quota.py), and refuses request_percentage and connection_creation_rate
with INVALID_REQUEST (engine/cluster/client_quotas.py); `QuotaKey.engine` says so per key, and
the page shows a refusal as it comes.
"""
from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from console import formatting
from console.errors import InvalidInput
from console.kafka_gateway.quotas import Entity, entity_of

USER, CLIENT_ID, IP = "user", "client-id", "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)
ENTITY_LABELS = {USER: "user", CLIENT_ID: "client id", IP: "IP address"}
MAX_NAME = 512      # Kafka sets no bound; a principal or client id longer than this is a mistake
MAX_VALUE = float(2**63 - 1)    # Kafka's LONG keys end there; no rate of any key needs more


@dataclass(frozen=True)
class QuotaKey:
    key: str
    unit: str
    whole: bool             # Kafka keeps it as a LONG or INT: a fraction is refused
    for_ip: bool
    help: str
    engine: str             # what this project's engine does with the key
    engine_enforces: bool


KEYS = {k.key: k for k in (
    QuotaKey("producer_byte_rate", "bytes/s", True, False, "Produce bytes per second, per broker.",
             "Enforced per broker as Kafka does: a client over it gets throttle_time_ms and its connection is "
             "muted for that long.", True),
    QuotaKey("consumer_byte_rate", "bytes/s", True, False, "Fetch bytes per second, per broker.",
             "Enforced per broker as Kafka does: a throttled Fetch is answered empty with throttle_time_ms, and "
             "the connection is muted for that long.", True),
    QuotaKey("request_percentage", "%", False, False,
             "Share of one request handler or network thread's time, per broker (200 = two threads).",
             "Enforced per broker on the time its event loop spends on the client's requests: over it, answers "
             "carry throttle_time_ms and the connection is muted for that long.", True),
    QuotaKey("controller_mutation_rate", "mutations/s", False, False,
             "Partitions created or deleted per second (KIP-599).",
             "Enforced: CreateTopics, CreatePartitions and DeleteTopics past the rate are refused with "
             "THROTTLING_QUOTA_EXCEEDED (89) and told when to retry.", True),
    QuotaKey("connection_creation_rate", "connections/s", True, True, "New connections per second, per broker.",
             "Enforced per broker as Kafka does: a connection past the rate is held unserved for the throttle "
             "time, then closed.", True),
)}


def entity_check(entity: Entity) -> Entity:
    """The entity, sorted, if Kafka allows it; else InvalidInput saying why."""
    types = [t for t, _ in entity]
    if not entity:
        raise InvalidInput("Name at least one entity: a user, a client id, or an IP address (or their default).")
    if len(set(types)) != len(types) or any(t not in ENTITY_TYPES for t in types):
        raise InvalidInput(f"An entity has at most one of each type: {', '.join(ENTITY_TYPES)}.")
    if IP in types and len(types) > 1:
        raise InvalidInput("Kafka allows a quota on a user, a client id, a user with a client id, or an IP address: "
                           "an IP address cannot be combined with a user or a client id.")
    for entity_type, name in entity:
        name_check(entity_type, name)
    return entity_of(entity)


def name_check(entity_type: str, name: str | None) -> None:
    if name is None:
        return
    label = ENTITY_LABELS[entity_type]
    if not name.strip():
        raise InvalidInput(f"Give the {label} a name, or choose its default.")
    if len(name) > MAX_NAME:
        raise InvalidInput(f"A {label} name is at most {MAX_NAME} characters (this one has {len(name)}).")
    if any(ch < " " or ch == "\x7f" for ch in name):
        raise InvalidInput(f"A {label} name cannot hold control characters such as a line break.")
    if entity_type == IP:
        try:
            ipaddress.ip_address(name)
        except ValueError:
            raise InvalidInput(f"{name!r} is not an IPv4 or IPv6 address.") from None


def key_check(entity: Entity, key: str) -> QuotaKey:
    quota = KEYS.get(key)
    if quota is None:
        raise InvalidInput(f"{key!r} is not a Kafka client quota: use one of {', '.join(KEYS)}.")
    is_ip = any(t == IP for t, _ in entity)
    if quota.for_ip != is_ip:
        allowed = [k for k, q in KEYS.items() if q.for_ip == is_ip]
        raise InvalidInput(f"{key} is not a quota of {'an IP address' if is_ip else 'users and client ids'}: "
                           f"use {', '.join(allowed)}.")
    return quota


def value_check(key: str, value: float) -> float:
    quota = KEYS[key]
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InvalidInput(f"{key} must be a number greater than 0.")
    if value > MAX_VALUE:
        raise InvalidInput(f"{key} is at most {MAX_VALUE:.4g}.")
    if quota.whole and value != int(value):
        raise InvalidInput(f"{key} is a whole number of {quota.unit} (Kafka keeps it as an integer).")
    return float(value)


def entity_label(entity: Entity) -> str:
    """`user 'alice', default client-id`: how pages, messages and the audit log name an entity."""
    ordered = sorted(entity, key=lambda pair: ENTITY_TYPES.index(pair[0]) if pair[0] in ENTITY_TYPES else 99)
    return ", ".join(f"default {t}" if n is None else f"{t} {n!r}" for t, n in ordered)


def value_display(key: str, value: float) -> str:
    """`1 MiB/s (1,048,576 bytes/s)`, `250%`, `12.5 mutations/s`; Kafka's "no limit" sentinel
    (Double.MAX_VALUE, Long.MAX_VALUE) as "unlimited". A byte rate reads in human units first,
    the exact number Kafka keeps after it."""
    quota = KEYS.get(key)
    if formatting.is_unlimited(key, value) or value >= formatting.LONG_MAX:
        return formatting.UNLIMITED
    number = f"{value:,.0f}" if value == int(value) else f"{value:,.6g}"
    if quota is None:
        return number
    shown = f"{number}%" if quota.unit == "%" else f"{number} {quota.unit}"
    if quota.unit == "bytes/s" and value >= 1024:
        return f"{formatting.size_rate(value)} ({shown})"
    return shown


def parse_value(key: str, text: str) -> float:
    """A quota value typed by a person: byte rates also as sizes ("10MiB", "10MiB/s")."""
    raw = (text or "").strip()
    quota = KEYS.get(key)
    if quota is not None and quota.unit == "bytes/s":
        try:
            return float(formatting.parse_size(raw.removesuffix("/s")))
        except formatting.UnitError:
            pass
    try:
        value = float(raw)
        if not math.isfinite(value):
            raise ValueError(raw)
        return value
    except ValueError:
        unit = "a size such as 10MiB or 512KB, or a number of bytes per second" if quota and \
            quota.unit == "bytes/s" else "a number"
        raise InvalidInput(f"“{raw}” is not {unit}.") from None
