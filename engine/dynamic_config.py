"""Which broker configs change at run time, as Kafka's DynamicBrokerConfig decides.

IncrementalAlterConfigs and AlterConfigs on a broker resource ("<id>", or "" for the
cluster-wide default) go through `validate_dynamic_broker_configs`, which answers as Kafka does:
- a name Kafka knows but cannot change at run time: "Cannot update these configs dynamically";
- an SSL keystore/truststore config without a `listener.name.<listener>.` prefix: "These
  security configs can be dynamically updated only per-listener using the listener prefix";
- a bad value for a config Kafka knows: "Invalid value ... for configuration ..."; the log
  configs that are topic defaults (`log.roll.ms`, `log.roll.jitter.ms`, `log.flush.interval.ms`)
  take their topic config's range, which Kafka's LogConfig checks when it applies them;
- a per-broker config (listeners, SASL, SSL, per-listener configs) on the cluster-wide resource:
  "Cannot update these configs at default cluster level, broker id must be specified".
All are INVALID_REQUEST (Kafka's ConfigAdminManager turns the ConfigException into one).
A name Kafka does not know is a custom config: accepted and stored as a string, and
DescribeConfigs hides its value, as Kafka treats an untyped config as possibly sensitive.
Names below are Kafka's (DynamicBrokerConfig.AllDynamicConfigs, DynamicConfig.Broker).
"""
from __future__ import annotations

import re
from typing import Any

from engine.config import (BROKER_CONFIGS, TYPE_BOOLEAN, TYPE_CLASS, TYPE_DOUBLE, TYPE_INT, TYPE_LIST, TYPE_LONG,
                           TYPE_PASSWORD, TYPE_SHORT, TYPE_STRING, ConfigDef, InvalidConfigError)

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
# name: (Kafka's type, Kafka's default or None).
# SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only with a listener prefix.
SSL_RECONFIGURABLE = {
    "ssl.keystore.type": (TYPE_STRING, "JKS"), "ssl.keystore.location": (TYPE_STRING, None),
    "ssl.keystore.password": (TYPE_PASSWORD, None), "ssl.key.password": (TYPE_PASSWORD, None),
    "ssl.truststore.type": (TYPE_STRING, "JKS"), "ssl.truststore.location": (TYPE_STRING, None),
    "ssl.truststore.password": (TYPE_PASSWORD, None), "ssl.keystore.key": (TYPE_PASSWORD, None),
    "ssl.keystore.certificate.chain": (TYPE_PASSWORD, None), "ssl.truststore.certificates": (TYPE_PASSWORD, None),
}
# DynamicListenerConfig.ReconfigurableConfigs (`listeners` itself is described from the broker's endpoint).
LISTENER_RECONFIGURABLE = {
    "listeners": (TYPE_STRING, None), "listener.security.protocol.map": (TYPE_STRING, None),
    "principal.builder.class": (TYPE_CLASS, None), "ssl.protocol": (TYPE_STRING, "TLSv1.3"),
    "ssl.provider": (TYPE_STRING, None), "ssl.cipher.suites": (TYPE_LIST, ""),
    "ssl.enabled.protocols": (TYPE_LIST, "TLSv1.2,TLSv1.3"), "ssl.keymanager.algorithm": (TYPE_STRING, "SunX509"),
    "ssl.trustmanager.algorithm": (TYPE_STRING, "PKIX"),
    "ssl.endpoint.identification.algorithm": (TYPE_STRING, "https"),
    "ssl.secure.random.implementation": (TYPE_STRING, None), "ssl.client.auth": (TYPE_STRING, "none"),
    "ssl.engine.factory.class": (TYPE_CLASS, None), "sasl.mechanism.inter.broker.protocol": (TYPE_STRING, "GSSAPI"),
    "sasl.jaas.config": (TYPE_PASSWORD, None), "sasl.enabled.mechanisms": (TYPE_LIST, "GSSAPI"),
    "sasl.kerberos.service.name": (TYPE_STRING, None), "sasl.kerberos.kinit.cmd": (TYPE_STRING, "/usr/bin/kinit"),
    "sasl.kerberos.ticket.renew.window.factor": (TYPE_DOUBLE, 0.8),
    "sasl.kerberos.ticket.renew.jitter": (TYPE_DOUBLE, 0.05),
    "sasl.kerberos.min.time.before.relogin": (TYPE_LONG, 60000),
    "sasl.kerberos.principal.to.local.rules": (TYPE_LIST, "DEFAULT"),
    "sasl.login.refresh.window.factor": (TYPE_DOUBLE, 0.8), "sasl.login.refresh.window.jitter": (TYPE_DOUBLE, 0.05),
    "sasl.login.refresh.min.period.seconds": (TYPE_SHORT, 60), "sasl.login.refresh.buffer.seconds": (TYPE_SHORT, 300),
    "max.connections": (TYPE_INT, INT_MAX), "max.connection.creation.rate": (TYPE_INT, INT_MAX),
    "num.network.threads": (TYPE_INT, 3),
}
CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset({"max.connections", "max.connection.creation.rate", "num.network.threads"})
PER_BROKER_CONFIGS = (frozenset(SSL_RECONFIGURABLE) | frozenset(LISTENER_RECONFIGURABLE)) - CLUSTER_LEVEL_LISTENER_CONFIGS

# The rest of AllDynamicConfigs that the engine has no definition of its own for (its own
# dynamic ones, the topic configs' broker synonyms among them, are in engine/config.py).
_OTHER_DYNAMIC = {
    # LogCleaner.RECONFIGURABLE_CONFIGS.
    "log.cleaner.threads": (TYPE_INT, 1), "log.cleaner.io.buffer.load.factor": (TYPE_DOUBLE, 0.9),
    "log.cleaner.io.buffer.size": (TYPE_INT, 524288),
    "log.cleaner.io.max.bytes.per.second": (TYPE_DOUBLE, 1.7976931348623157e308),
    # DynamicThreadPool, metric reporters, SocketServer, producer state, config providers.
    "num.io.threads": (TYPE_INT, 8), "num.replica.fetchers": (TYPE_INT, 1),
    "num.recovery.threads.per.data.dir": (TYPE_INT, 2), "background.threads": (TYPE_INT, 10),
    "metric.reporters": (TYPE_LIST, ""), "max.connections.per.ip": (TYPE_INT, INT_MAX),
    "max.connections.per.ip.overrides": (TYPE_STRING, ""),
    "transaction.partition.verification.enable": (TYPE_BOOLEAN, True), "config.providers": (TYPE_LIST, ""),
    # Broker quotas (DynamicConfig.Broker adds QuotaConfigs.brokerQuotaConfigs).
    "replica.alter.log.dirs.io.max.bytes.per.second": (TYPE_LONG, LONG_MAX),
}
# The engine's own broker configs that Kafka changes at run time.
_ENGINE_DYNAMIC = frozenset({
    "log.segment.bytes", "log.roll.ms", "log.roll.jitter.ms", "log.index.size.max.bytes", "log.flush.interval.messages",
    "log.flush.interval.ms", "log.retention.bytes", "log.retention.ms", "message.max.bytes",
    "log.index.interval.bytes", "log.cleaner.delete.retention.ms", "log.cleaner.min.compaction.lag.ms",
    "log.cleaner.max.compaction.lag.ms", "log.segment.delete.delay.ms", "log.cleaner.min.cleanable.ratio",
    "log.cleanup.policy", "unclean.leader.election.enable", "min.insync.replicas", "compression.type",
    "log.preallocate", "compression.gzip.level", "compression.lz4.level", "compression.zstd.level",
    "log.local.retention.ms", "log.local.retention.bytes", "log.message.timestamp.type", "log.message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms", "log.cleaner.dedupe.buffer.size", "log.cleaner.backoff.ms",
    "producer.id.expiration.ms", "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides", "max.connection.creation.rate",
    "transaction.partition.verification.enable",
})
# Kafka's dynamic names the engine stores and describes but does not act on (those it acts on
# are in BROKER_CONFIGS and _ENGINE_DYNAMIC).
KAFKA_ONLY_DYNAMIC = {name: spec for name, spec in {**SSL_RECONFIGURABLE, **LISTENER_RECONFIGURABLE,
                                                     **_OTHER_DYNAMIC}.items() if name not in BROKER_CONFIGS}
ALL_DYNAMIC_CONFIGS = frozenset(KAFKA_ONLY_DYNAMIC) | _ENGINE_DYNAMIC

# Broker configs Kafka knows and fixes at start: every static config of ours, plus Kafka's
# names an operator is most likely to try (KafkaConfig has ~300; the rest count as custom).
KAFKA_STATIC_CONFIGS = frozenset(name for name in BROKER_CONFIGS if name not in ALL_DYNAMIC_CONFIGS) | {
    "broker.id", "node.id", "process.roles", "log.dir", "log.dirs", "advertised.listeners",
    "controller.listener.names", "controller.quorum.voters", "controller.quorum.bootstrap.servers",
    "inter.broker.listener.name", "security.inter.broker.protocol", "broker.rack", "zookeeper.connect",
    "socket.send.buffer.bytes", "socket.receive.buffer.bytes", "queued.max.requests", "request.timeout.ms",
    "connections.max.idle.ms", "metadata.log.dir", "authorizer.class.name", "super.users",
    "transaction.state.log.replication.factor", "transaction.state.log.min.isr", "transaction.state.log.num.partitions",
    "transactional.id.expiration.ms", "transaction.max.timeout.ms", "replica.socket.timeout.ms",
    "replica.socket.receive.buffer.bytes", "replica.fetch.min.bytes", "num.replica.alter.log.dirs.threads",
}
_LISTENER_PREFIXED = re.compile(r"listener\.name\.[^.]*\.(.*)")
_LISTENER_LIMITS = frozenset({"max.connections", "max.connection.creation.rate"})   # SocketServer's per-listener ones
MESSAGES = {
    "static": "Cannot update these configs dynamically",
    "prefix": "These security configs can be dynamically updated only per-listener using the listener prefix",
    "per_broker": "Cannot update these configs at default cluster level, broker id must be specified",
}


def scala_set(names) -> str:
    """Kafka prints the offending names as a Scala Set."""
    return f"Set({', '.join(sorted(names))})"


def base_name(name: str) -> str:
    """`listener.name.<listener>.<config>` is a per-listener form of `<config>`."""
    match = _LISTENER_PREFIXED.fullmatch(name)
    return match.group(1) if match else name


def validate_dynamic_broker_configs(raw: dict[str, Any], *, per_broker: bool) -> dict[str, Any]:
    """Parsed values (None for a deletion) of a broker resource's changes; raises InvalidConfigError
    with Kafka's message for the first rule broken, in Kafka's order (validateConfigs).

    Only the names being set are checked: deleting an override is always allowed, as in Kafka,
    where the deleted name is simply absent from the properties it validates."""
    setting = {name for name, value in raw.items() if value is not None}
    _check(KAFKA_STATIC_CONFIGS.intersection(setting), "static")
    _check(frozenset(SSL_RECONFIGURABLE).intersection(setting), "prefix")
    parsed = {name: None if value is None else parse_broker_value(name, value) for name, value in raw.items()}
    _check_listener_limits(parsed)
    if not per_broker:
        _check({name for name in setting if name in PER_BROKER_CONFIGS or (
            _LISTENER_PREFIXED.fullmatch(name) and base_name(name) not in CLUSTER_LEVEL_LISTENER_CONFIGS)}, "per_broker")
    return parsed


def _check(names, rule: str) -> None:
    if names:
        raise InvalidConfigError(f"{MESSAGES[rule]}: {scala_set(names)}")


def _check_listener_limits(parsed: dict[str, Any]) -> None:
    """A listener's own connection limit must be positive (Kafka's ListenerConnectionQuota
    validateReconfiguration: "Invalid max.connection.creation.rate 0")."""
    for name, value in parsed.items():
        if name != base_name(name) and base_name(name) in _LISTENER_LIMITS and value is not None and value <= 0:
            raise InvalidConfigError(f"Invalid {base_name(name)} {value}")


def parse_broker_value(name: str, value: Any) -> Any:
    definition = BROKER_CONFIGS.get(name)
    if definition is not None:
        return definition.parse(value)
    config_type = config_type_of(name)
    if config_type is None:
        return str(value)   # a custom config: Kafka keeps it as given
    return ConfigDef(name, config_type, None).parse(value)


def kafka_only_dynamic_configs() -> list[tuple[str, int, Any]]:
    """(name, type, default) of the run-time configs Kafka has and the engine does not act on,
    which a broker resource lists too, so clients that check a name against DescribeConfigs
    before altering it (kafka-python) find them."""
    return [(name, config_type, default) for name, (config_type, default) in KAFKA_ONLY_DYNAMIC.items()
            if name != "listeners"]


def config_type_of(name: str) -> int | None:
    """Kafka's type of a broker config, None for a custom (unknown) name."""
    definition = BROKER_CONFIGS.get(name)
    if definition is not None:
        return definition.type
    base = base_name(name)
    found = KAFKA_ONLY_DYNAMIC.get(base) or (LISTENER_RECONFIGURABLE.get(base) if base != name else None)
    return None if found is None else found[0]


def is_sensitive(name: str) -> bool:
    """As Kafka's KafkaConfig.maybeSensitive: passwords, and any config of unknown type."""
    config_type = config_type_of(name)
    return config_type is None or config_type == TYPE_PASSWORD


def is_read_only(name: str) -> bool:
    """Whether the config cannot change at run time; a per-listener form
    (`listener.name.<listener>.<config>`) is as dynamic as its config, as in Kafka."""
    return base_name(name) not in ALL_DYNAMIC_CONFIGS
