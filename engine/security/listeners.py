"""Named listeners: several per broker, each with its own port and security protocol.

Kafka's configs, given with `--config` (or `--listener NAME=PROTOCOL://HOST:PORT`, which
fills the first two):
  listeners=INTERNAL://127.0.0.1:9092,EXTERNAL://:9192        where each listener binds
  listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL
  advertised.listeners=EXTERNAL://kafka.example.com:9192       what Metadata tells clients
  inter.broker.listener.name=INTERNAL                          serves the brokers' own requests
  listener.name.external.sasl.enabled.mechanisms=SCRAM-SHA-512 one listener's own security config
  listener.name.external.oauthbearer.connections.max.reauth.ms=3600000   one listener's and mechanism's
The engine runs N brokers in one process, so a listener's port is broker 0's and broker i
listens on port + i (the advertised port likewise). An empty host is `--host`. Names are
case-insensitive (Kafka upper-cases them); the protocol map's default maps PLAINTEXT, SSL,
SASL_PLAINTEXT and SASL_SSL to themselves. Without `listeners` there is one listener, named
after `--security-protocol`, on `--host`:`--port`, as before.

`inter.broker.listener.name` defaults to the listener named by `security.inter.broker.protocol`
(PLAINTEXT), as in Kafka; where there is none, to the first listener (Kafka refuses to start).
The brokers reach each other over socket pairs inside the process (engine/protocol/inter_broker.py)
that this listener serves: their requests carry its name, whatever its protocol.
Security configs without a prefix apply to every listener of a protocol that uses them; a
`listener.name.<name>.` form overrides one for that listener (engine/security/settings.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from engine.config import InvalidConfigError
from engine.security import settings as security_settings
from engine.security.settings import PROTOCOLS, SecuritySettings

LISTENER_CONFIGS = ("listeners", "advertised.listeners", "listener.security.protocol.map",
                    "inter.broker.listener.name", "security.inter.broker.protocol")
_ENDPOINT = re.compile(r"^([A-Za-z0-9_.-]+)://(\[[0-9A-Fa-f:.]+\]|[^:/\s]*):(\d+)$")
_TLS = ("SSL", "SASL_SSL")


@dataclass(frozen=True)
class ListenerConfig:
    name: str
    host: str                      # bind address
    port: int                      # broker 0's port; broker i listens on port + i
    advertised_host: str
    advertised_port: int
    security: SecuritySettings

    @property
    def protocol(self) -> str:
        return self.security.protocol

    def port_of(self, broker: int) -> int:
        return self.port + broker

    def advertised_port_of(self, broker: int) -> int:
        return self.advertised_port + broker


def take_listener_configs(configs: dict[str, str]) -> dict[str, str]:
    """Remove the listener configs from the broker configs, and return them."""
    return {name: configs.pop(name) for name in LISTENER_CONFIGS if name in configs}


def parse_listener_option(value: str) -> tuple[str, str]:
    """`--listener NAME=PROTOCOL://HOST:PORT` -> ("NAME://HOST:PORT", "NAME:PROTOCOL")."""
    name, sep, endpoint = value.partition("=")
    protocol, sep2, address = endpoint.partition("://")
    if not sep or not sep2 or not name.strip():
        raise InvalidConfigError(f"--listener expects NAME=PROTOCOL://HOST:PORT, got {value!r}")
    return f"{name.strip()}://{address}", f"{name.strip()}:{protocol.strip()}"


def build(listener_configs: dict[str, str], security_configs: dict[str, str], *, host: str, port: int,
          brokers: int, default_protocol: str, users_file: str | None) -> tuple[list[ListenerConfig], str]:
    """(the listeners, the inter-broker listener's name); InvalidConfigError on any mistake."""
    protocols = _protocol_map(listener_configs.get("listener.security.protocol.map"))
    if "listeners" in listener_configs:
        endpoints = _endpoints(listener_configs["listeners"], "listeners", default_host=host)
    else:
        endpoints = {default_protocol: (host, port)}
        protocols.setdefault(default_protocol, default_protocol)
    advertised = _endpoints(listener_configs.get("advertised.listeners", ""), "advertised.listeners",
                            default_host=host)
    unknown = set(advertised) - set(endpoints)
    if unknown:
        raise InvalidConfigError(f"advertised.listeners names listeners that are not in listeners: "
                                 f"{', '.join(sorted(unknown))}")
    _check_ports(endpoints, brokers)
    per_listener = _security_configs_by_listener(security_configs, endpoints)
    any_tls = any(protocols.get(name) in _TLS for name in endpoints)
    listeners = []
    for name, (bind_host, bind_port) in endpoints.items():
        protocol = protocols.get(name)
        if protocol is None:
            raise InvalidConfigError(f"No security protocol defined for listener {name} "
                                     "(listener.security.protocol.map)")
        own = per_listener[name]
        if protocol not in _TLS and any_tls:     # the unprefixed ssl.* are for the TLS listeners
            own = {k: v for k, v in own.items() if not k.startswith("ssl.") or k in per_listener.prefixed(name)}
        security = security_settings.build(protocol, own, users_file, listener=name)
        ad_host, ad_port = advertised.get(name, (_advertisable(bind_host, host), bind_port))
        listeners.append(ListenerConfig(name, bind_host, bind_port, ad_host, ad_port, security))
    return listeners, _inter_broker_name(listener_configs, [listener.name for listener in listeners])


def _protocol_map(value: str | None) -> dict[str, str]:
    if value is None:
        return {p: p for p in PROTOCOLS}
    mapping = {}
    for item in value.split(","):
        if not item.strip():
            continue
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or not name.strip() or protocol not in PROTOCOLS:
            raise InvalidConfigError(f"listener.security.protocol.map: expected NAME:PROTOCOL pairs with a protocol "
                                     f"of {', '.join(PROTOCOLS)}, got {item.strip()!r}")
        mapping[name.strip().upper()] = protocol
    return mapping


def _endpoints(value: str, config: str, *, default_host: str) -> dict[str, tuple[str, int]]:
    endpoints = {}
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        match = _ENDPOINT.match(item)
        if match is None or not 0 < int(match.group(3)) < 65536:
            raise InvalidConfigError(f"{config}: expected NAME://HOST:PORT entries, got {item!r}")
        name = match.group(1).upper()
        if name in endpoints:
            raise InvalidConfigError(f"{config}: listener {name} is given twice")
        endpoints[name] = (match.group(2).strip("[]") or default_host, int(match.group(3)))
    if config == "listeners" and not endpoints:
        raise InvalidConfigError("listeners: at least one NAME://HOST:PORT is needed")
    return endpoints


def _check_ports(endpoints: dict[str, tuple[str, int]], brokers: int) -> None:
    """Broker i of each listener takes port + i: the listeners' ranges must not overlap."""
    taken: dict[int, str] = {}
    for name, (_, base) in endpoints.items():
        for port in range(base, base + brokers):
            if port > 65535:
                raise InvalidConfigError(f"listener {name}: ports {base}..{base + brokers - 1} go past 65535")
            if port in taken:
                raise InvalidConfigError(f"listeners {taken[port]} and {name} both need port {port} "
                                         f"(broker i of a listener takes its port + i)")
            taken[port] = name


class _PerListener(dict):
    """listener name -> its security configs; remembers which came with the listener's prefix."""

    def __init__(self) -> None:
        super().__init__()
        self._prefixed: dict[str, set[str]] = {}

    def prefixed(self, name: str) -> set[str]:
        return self._prefixed.setdefault(name, set())


def _security_configs_by_listener(configs: dict[str, str], endpoints) -> _PerListener:
    plain = {k: v for k, v in configs.items() if not k.startswith("listener.name.")}
    result = _PerListener()
    for name in endpoints:
        result[name] = dict(plain)
    for key, value in configs.items():
        if not key.startswith("listener.name."):
            continue
        listener, _, config = key[len("listener.name."):].partition(".")
        listener = listener.upper()
        if listener not in endpoints:
            raise InvalidConfigError(f"{key}: there is no listener {listener}")
        if not security_settings.listener_security_config(config):
            raise InvalidConfigError(f"{key}: {config} cannot be set per listener here (supported: "
                                     f"{', '.join(security_settings.LISTENER_SECURITY_CONFIGS)}, and "
                                     f"<mechanism>.{security_settings.MAX_REAUTH_CONFIG})")
        result[listener][config] = value
        result.prefixed(listener).add(config)
    return result


def _advertisable(bind_host: str, default_host: str) -> str:
    return default_host if bind_host in ("0.0.0.0", "::") else bind_host


def _inter_broker_name(configs: dict[str, str], names: list[str]) -> str:
    chosen = configs.get("inter.broker.listener.name")
    if chosen is not None:
        chosen = chosen.strip().upper()
        if chosen not in names:
            raise InvalidConfigError(f"inter.broker.listener.name must be a listener name defined in listeners: "
                                     f"{chosen} is not one of {', '.join(names)}")
        return chosen
    by_protocol = configs.get("security.inter.broker.protocol", "PLAINTEXT").strip().upper()
    return by_protocol if by_protocol in names else names[0]
