"""Broker and topic configuration, with Kafka's names, types and defaults.

Topic configs fall back to a broker config (their "synonym": `retention.ms` falls back to
`log.retention.ms`, then `log.retention.hours`), as in Kafka. DescribeConfigs reports where
each value came from with Kafka's config source codes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from engine.storage.log_config import LONG_MAX, LogConfig

# DescribeConfigs ConfigSource values (KIP-226).
SOURCE_DYNAMIC_TOPIC = 1
SOURCE_DYNAMIC_BROKER = 2           # set for one broker (resource name "<id>")
SOURCE_DYNAMIC_DEFAULT_BROKER = 3   # set cluster-wide (resource name "")
SOURCE_STATIC_BROKER = 4
SOURCE_DEFAULT = 5

# DescribeConfigs ConfigType values (KIP-336).
TYPE_BOOLEAN, TYPE_STRING, TYPE_INT, TYPE_SHORT, TYPE_LONG, TYPE_DOUBLE, TYPE_LIST, TYPE_CLASS, TYPE_PASSWORD = range(1, 10)


class InvalidConfigError(ValueError):
    """A config name is unknown or its value is out of range (Kafka's INVALID_CONFIG, 40)."""


class _Refused(ValueError):
    """A value that does not parse or validate; the text is Kafka's ConfigException reason."""


_TYPE_NAMES = {TYPE_BOOLEAN: "BOOLEAN", TYPE_STRING: "STRING", TYPE_INT: "INT", TYPE_SHORT: "SHORT",
               TYPE_LONG: "LONG", TYPE_DOUBLE: "DOUBLE", TYPE_LIST: "LIST", TYPE_CLASS: "CLASS",
               TYPE_PASSWORD: "PASSWORD"}
_INT_BOUNDS = {TYPE_SHORT: 2**15, TYPE_INT: 2**31, TYPE_LONG: 2**63}


def _parse_bool(raw: str) -> bool:
    value = str(raw).strip().lower()
    if value not in ("true", "false"):
        raise _Refused("Expected value to be either true or false")
    return value == "true"


def _parse_number(raw: Any, config_type: int) -> int | float:
    """As Java's Integer/Long/Short.parseLong and Double.parseDouble: "1h" or "10MB" is not a
    number, and a whole number must fit the type; Kafka says "Not a number of type LONG"."""
    text = str(raw).strip()
    try:
        if config_type == TYPE_DOUBLE:
            return float(text)
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            raise ValueError(text)
        value = int(text)
        bound = _INT_BOUNDS[config_type]
        if not -bound <= value < bound:
            raise ValueError(text)
        return value
    except ValueError:
        raise _Refused(f"Not a number of type {_TYPE_NAMES[config_type]}") from None


@dataclass(frozen=True)
class ConfigDef:
    name: str
    type: int
    default: Any
    validator: Callable[[Any], None] | None = None
    synonyms: tuple[str, ...] = ()   # broker configs this topic config falls back to
    doc: str = ""

    def parse(self, raw: Any) -> Any:
        """The typed value, or InvalidConfigError with Kafka's ConfigException message:
        "Invalid value 1h for configuration retention.ms: Not a number of type LONG"."""
        try:
            if self.type in (TYPE_INT, TYPE_LONG, TYPE_SHORT, TYPE_DOUBLE):
                value = raw if isinstance(raw, (int, float)) and not isinstance(raw, bool) else \
                    _parse_number(raw, self.type)
            elif self.type == TYPE_BOOLEAN:
                value = raw if isinstance(raw, bool) else _parse_bool(raw)
            elif self.type == TYPE_LIST:
                value = ",".join(part.strip() for part in str(raw).split(",") if part.strip())
            else:
                value = str(raw)
            if self.validator is not None:
                self.validator(value)
        except _Refused as refused:
            # A list names the one item refused, as Kafka's ValidList does.
            shown = refused.value if isinstance(refused, _RefusedItem) else raw
            raise InvalidConfigError(f"Invalid value {shown} for configuration {self.name}: {refused}") from None
        except (TypeError, ValueError) as exc:
            raise InvalidConfigError(f"Invalid value {raw} for configuration {self.name}: {exc}") from None
        return value


class _RefusedItem(_Refused):
    """One item of a list refused (the message names the item, not the whole list)."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__(reason)
        self.value = value


def at_least(minimum: float) -> Callable[[Any], None]:
    def check(value):
        if value < minimum:
            raise _Refused(f"Value must be at least {minimum}")
    return check


def one_of(*choices: str) -> Callable[[Any], None]:
    def check(value):
        if value not in choices:
            raise _Refused(f"String must be one of: {', '.join(choices)}")
    return check


def one_of_any_case(*choices: str) -> Callable[[Any], None]:
    """Kafka's CaseInsensitiveValidString."""
    def check(value):
        if value.lower() not in choices:
            raise _Refused(f"String must be one of (case insensitive): {', '.join(choices)}")
    return check


def _cleanup_policy(value: str) -> None:
    """Kafka's ValidList.in("compact", "delete"): each item must be one of them."""
    parts = value.split(",") if value else []
    for part in parts:
        if part not in ("compact", "delete"):
            raise _RefusedItem(part, "String must be one of: compact, delete")
    if not parts:
        raise _Refused("String must be one of: compact, delete")


_REPLICA = re.compile(r"[0-9]+:[0-9]+")


def _throttled_replicas(value: str) -> None:
    """Kafka's ThrottledReplicaListValidator: `*`, or `partition:broker` pairs (or empty)."""
    if value == "*" or all(_REPLICA.fullmatch(part) for part in value.split(",") if part):
        return
    raise _Refused("must be the literal '*' or a list of replicas in the following format: "
                     "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


def _consumer_assignors(value: str) -> None:
    """Kafka's short names or class names of the server-side assignors; the first is the default."""
    from engine.coordinator.assignors import assignor_name
    if not value or any(assignor_name(part) is None for part in value.split(",")):
        raise _Refused("must be a non-empty list of uniform and range (or their Kafka class names)")


def _ip_overrides(value: str) -> None:
    from engine.protocol.connection_quotas import parse_overrides
    parse_overrides(value)


def _int_range(lo: int, hi: int) -> Callable[[Any], None]:
    def check(value):
        if value < lo:
            raise _Refused(f"Value must be at least {lo}")
        if value > hi:
            raise _Refused(f"Value must be no more than {hi}")
    return check


DAY_MS = 24 * 3600 * 1000
INT_MAX = 2**31 - 1


def _level(lo: int, hi: int) -> Callable[[Any], None]:
    """A codec's compression level: lo..hi, or -1 for the codec's default (KIP-390)."""
    in_range = _int_range(lo, hi)

    def check(value):
        if value != -1:
            in_range(value)
    return check


def _no_tiered_storage(value) -> None:
    if value:
        raise _Refused("Tiered Storage functionality is disabled in the broker. Topic cannot be configured "
                       "with remote log storage.")


def _positive(value) -> None:
    if not value > 0:
        raise _Refused("Value must be greater than 0")

_TOPIC_DEFS = [
    ConfigDef("cleanup.policy", TYPE_LIST, "delete", _cleanup_policy, ("log.cleanup.policy",)),
    ConfigDef("compression.type", TYPE_STRING, "producer",
              one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"), ("compression.type",)),
    ConfigDef("compression.gzip.level", TYPE_INT, -1, _level(1, 9), ("compression.gzip.level",)),
    ConfigDef("compression.lz4.level", TYPE_INT, 9, _int_range(1, 17), ("compression.lz4.level",)),
    ConfigDef("compression.zstd.level", TYPE_INT, 3, _int_range(-131072, 22), ("compression.zstd.level",)),
    ConfigDef("delete.retention.ms", TYPE_LONG, DAY_MS, at_least(0), ("log.cleaner.delete.retention.ms",)),
    ConfigDef("file.delete.delay.ms", TYPE_LONG, 60000, at_least(0), ("log.segment.delete.delay.ms",)),
    ConfigDef("flush.messages", TYPE_LONG, LONG_MAX, at_least(1), ("log.flush.interval.messages",)),
    ConfigDef("flush.ms", TYPE_LONG, LONG_MAX, at_least(0), ("log.flush.interval.ms",)),
    ConfigDef("index.interval.bytes", TYPE_INT, 4096, at_least(0), ("log.index.interval.bytes",)),
    ConfigDef("max.compaction.lag.ms", TYPE_LONG, LONG_MAX, at_least(1), ("log.cleaner.max.compaction.lag.ms",)),
    ConfigDef("max.message.bytes", TYPE_INT, 1048588, at_least(0), ("message.max.bytes",)),
    ConfigDef("message.timestamp.type", TYPE_STRING, "CreateTime", one_of("CreateTime", "LogAppendTime"),
              ("log.message.timestamp.type",)),
    ConfigDef("message.timestamp.before.max.ms", TYPE_LONG, LONG_MAX, at_least(0),
              ("log.message.timestamp.before.max.ms",)),
    ConfigDef("message.timestamp.after.max.ms", TYPE_LONG, 3600000, at_least(0),
              ("log.message.timestamp.after.max.ms",)),
    ConfigDef("min.cleanable.dirty.ratio", TYPE_DOUBLE, 0.5, _int_range(0, 1), ("log.cleaner.min.cleanable.ratio",)),
    ConfigDef("min.compaction.lag.ms", TYPE_LONG, 0, at_least(0), ("log.cleaner.min.compaction.lag.ms",)),
    ConfigDef("min.insync.replicas", TYPE_INT, 1, at_least(1), ("min.insync.replicas",)),
    ConfigDef("preallocate", TYPE_BOOLEAN, False, None, ("log.preallocate",)),
    ConfigDef("retention.bytes", TYPE_LONG, -1, None, ("log.retention.bytes",)),
    ConfigDef("retention.ms", TYPE_LONG, 7 * DAY_MS, at_least(-1), ("log.retention.ms", "log.retention.minutes",
                                                                      "log.retention.hours")),
    ConfigDef("segment.bytes", TYPE_INT, 1024 * 1024 * 1024, at_least(14), ("log.segment.bytes",)),
    ConfigDef("segment.index.bytes", TYPE_INT, 10 * 1024 * 1024, at_least(4), ("log.index.size.max.bytes",)),
    ConfigDef("segment.jitter.ms", TYPE_LONG, 0, at_least(0), ("log.roll.jitter.ms", "log.roll.jitter.hours")),
    ConfigDef("segment.ms", TYPE_LONG, 7 * DAY_MS, at_least(1), ("log.roll.ms", "log.roll.hours")),
    ConfigDef("unclean.leader.election.enable", TYPE_BOOLEAN, False, None, ("unclean.leader.election.enable",)),
    # Tiered storage (KIP-405) is not implemented: these are described, and turning it on is refused.
    ConfigDef("remote.storage.enable", TYPE_BOOLEAN, False, _no_tiered_storage, ()),
    ConfigDef("local.retention.ms", TYPE_LONG, -2, at_least(-2), ("log.local.retention.ms",)),
    ConfigDef("local.retention.bytes", TYPE_LONG, -2, at_least(-2), ("log.local.retention.bytes",)),
    ConfigDef("remote.log.copy.disable", TYPE_BOOLEAN, False, None, ()),
    ConfigDef("remote.log.delete.on.disable", TYPE_BOOLEAN, False, None, ()),
    ConfigDef("leader.replication.throttled.replicas", TYPE_LIST, "", _throttled_replicas, ()),
    ConfigDef("follower.replication.throttled.replicas", TYPE_LIST, "", _throttled_replicas, ()),
]
TOPIC_CONFIGS: dict[str, ConfigDef] = {d.name: d for d in _TOPIC_DEFS}

_BROKER_DEFS = [
    ConfigDef("auto.create.topics.enable", TYPE_BOOLEAN, True),
    ConfigDef("num.partitions", TYPE_INT, 1, at_least(1)),
    ConfigDef("default.replication.factor", TYPE_INT, 1, at_least(1)),
    ConfigDef("delete.topic.enable", TYPE_BOOLEAN, True),
    ConfigDef("socket.request.max.bytes", TYPE_INT, 100 * 1024 * 1024, at_least(1)),
    ConfigDef("queued.max.request.bytes", TYPE_LONG, -1),
    # Connections (engine/protocol/listener.py): Kafka's names, meanings and defaults.
    # KIP-402 (engine/protocol/connection_quotas.py): broker-wide; also per listener, LISTENER_PREFIXED_CONFIGS.
    ConfigDef("max.connections", TYPE_INT, INT_MAX, at_least(0)),
    ConfigDef("max.connections.per.ip", TYPE_INT, INT_MAX, at_least(0)),
    ConfigDef("max.connections.per.ip.overrides", TYPE_STRING, "", _ip_overrides),
    # KIP-612 (engine/protocol/connection_rates.py); also per listener, LISTENER_PREFIXED_CONFIGS.
    ConfigDef("max.connection.creation.rate", TYPE_INT, INT_MAX, at_least(0)),
    # Frames of a connection not yet logged in on a SASL listener (Kafka's BrokerSecurityConfigs).
    ConfigDef("sasl.server.max.receive.size", TYPE_INT, 524288, at_least(1)),
    ConfigDef("connections.max.idle.ms", TYPE_LONG, 600000, at_least(1)),
    ConfigDef("fetch.max.bytes", TYPE_INT, 57671680, at_least(1024)),
    # Incremental fetch sessions (KIP-227; engine/protocol/fetch_sessions.py): 0 turns them off.
    ConfigDef("max.incremental.fetch.session.cache.slots", TYPE_INT, 1000, at_least(0)),
    # DescribeTopicPartitions pages (KIP-966): at most this many partitions per answer.
    ConfigDef("max.request.partition.size.limit", TYPE_INT, 2000, at_least(1)),
    # The cluster-wide partition limit (KIP-578's name): CreateTopics/CreatePartitions past it
    # get POLICY_VIOLATION.
    ConfigDef("max.partitions", TYPE_INT, 100_000, at_least(1)),
    # KIP-599's quota, as every client's default (engine/broker/mutation_quota.py); unset: none.
    ConfigDef("controller_mutation_rate", TYPE_DOUBLE, float("inf"), _positive),
    # Byte-rate client quotas (engine/broker/byte_rate_quota.py): rates are measured over
    # quota.window.num samples of quota.window.size.seconds each, as Kafka's quota managers do.
    ConfigDef("quota.window.num", TYPE_INT, 11, at_least(1)),
    ConfigDef("quota.window.size.seconds", TYPE_INT, 1, at_least(1)),
    ConfigDef("message.max.bytes", TYPE_INT, 1048588, at_least(0)),
    ConfigDef("min.insync.replicas", TYPE_INT, 1, at_least(1)),
    ConfigDef("compression.type", TYPE_STRING, "producer",
              one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
    ConfigDef("compression.gzip.level", TYPE_INT, -1, _level(1, 9)),
    ConfigDef("compression.lz4.level", TYPE_INT, 9, _int_range(1, 17)),
    ConfigDef("compression.zstd.level", TYPE_INT, 3, _int_range(-131072, 22)),
    ConfigDef("log.local.retention.ms", TYPE_LONG, -2, at_least(-2)),
    ConfigDef("log.local.retention.bytes", TYPE_LONG, -2, at_least(-2)),
    ConfigDef("unclean.leader.election.enable", TYPE_BOOLEAN, False),
    ConfigDef("log.cleanup.policy", TYPE_LIST, "delete", _cleanup_policy),
    ConfigDef("log.retention.hours", TYPE_INT, 168),
    ConfigDef("log.retention.minutes", TYPE_INT, None),
    ConfigDef("log.retention.ms", TYPE_LONG, None, at_least(-1)),
    ConfigDef("log.retention.bytes", TYPE_LONG, -1),
    ConfigDef("log.retention.check.interval.ms", TYPE_LONG, 300000, at_least(1)),
    ConfigDef("log.segment.bytes", TYPE_INT, 1024 * 1024 * 1024, at_least(14)),
    ConfigDef("log.roll.hours", TYPE_INT, 168, at_least(1)),
    ConfigDef("log.roll.ms", TYPE_LONG, None, at_least(1)),
    ConfigDef("log.roll.jitter.hours", TYPE_INT, 0),
    ConfigDef("log.roll.jitter.ms", TYPE_LONG, None, at_least(0)),
    ConfigDef("log.index.interval.bytes", TYPE_INT, 4096, at_least(0)),
    ConfigDef("log.index.size.max.bytes", TYPE_INT, 10 * 1024 * 1024, at_least(4)),
    ConfigDef("log.flush.interval.messages", TYPE_LONG, LONG_MAX, at_least(1)),
    ConfigDef("log.flush.interval.ms", TYPE_LONG, None, at_least(0)),
    ConfigDef("log.flush.scheduler.interval.ms", TYPE_LONG, LONG_MAX),
    ConfigDef("log.flush.offset.checkpoint.interval.ms", TYPE_INT, 60000, at_least(0)),
    # Threads per log dir that open logs at start and flush and close them at shutdown (Kafka 4.0's default).
    ConfigDef("num.recovery.threads.per.data.dir", TYPE_INT, 2, at_least(1)),
    ConfigDef("log.segment.delete.delay.ms", TYPE_LONG, 60000, at_least(0)),
    ConfigDef("log.message.timestamp.type", TYPE_STRING, "CreateTime", one_of("CreateTime", "LogAppendTime")),
    ConfigDef("log.message.timestamp.before.max.ms", TYPE_LONG, LONG_MAX, at_least(0)),
    ConfigDef("log.message.timestamp.after.max.ms", TYPE_LONG, 3600000, at_least(0)),
    ConfigDef("log.preallocate", TYPE_BOOLEAN, False),
    ConfigDef("log.cleaner.delete.retention.ms", TYPE_LONG, DAY_MS, at_least(0)),
    ConfigDef("log.cleaner.min.cleanable.ratio", TYPE_DOUBLE, 0.5, _int_range(0, 1)),
    ConfigDef("log.cleaner.min.compaction.lag.ms", TYPE_LONG, 0),
    ConfigDef("log.cleaner.max.compaction.lag.ms", TYPE_LONG, LONG_MAX),
    ConfigDef("offsets.topic.num.partitions", TYPE_INT, 50, at_least(1)),
    ConfigDef("offsets.topic.replication.factor", TYPE_SHORT, 3, at_least(1)),
    ConfigDef("offsets.retention.minutes", TYPE_INT, 7 * 24 * 60, at_least(1)),
    ConfigDef("replica.lag.time.max.ms", TYPE_LONG, 30000, at_least(1)),
    # Replication (engine/broker/replica_fetcher.py).
    ConfigDef("replica.fetch.max.bytes", TYPE_INT, 1048576, at_least(0)),
    ConfigDef("replica.fetch.response.max.bytes", TYPE_INT, 10485760, at_least(0)),
    ConfigDef("replica.fetch.wait.max.ms", TYPE_INT, 500, at_least(0)),
    ConfigDef("replica.fetch.backoff.ms", TYPE_INT, 1000, at_least(0)),
    ConfigDef("replica.high.watermark.checkpoint.interval.ms", TYPE_LONG, 5000, at_least(1)),
    ConfigDef("controlled.shutdown.enable", TYPE_BOOLEAN, True),
    ConfigDef("auto.leader.rebalance.enable", TYPE_BOOLEAN, True),
    ConfigDef("leader.imbalance.check.interval.seconds", TYPE_LONG, 300, at_least(1)),
    ConfigDef("leader.imbalance.per.broker.percentage", TYPE_INT, 10, at_least(0)),
    ConfigDef("group.initial.rebalance.delay.ms", TYPE_INT, 3000, at_least(0)),
    # Consumer groups and committed offsets (engine/coordinator).
    ConfigDef("group.min.session.timeout.ms", TYPE_INT, 6000, at_least(0)),
    ConfigDef("group.max.session.timeout.ms", TYPE_INT, 1800000, at_least(0)),
    ConfigDef("group.max.size", TYPE_INT, INT_MAX, at_least(1)),
    # The consumer group protocol (KIP-848; engine/coordinator/consumer_protocol.py).
    ConfigDef("group.consumer.heartbeat.interval.ms", TYPE_INT, 5000, at_least(1)),
    ConfigDef("group.consumer.min.heartbeat.interval.ms", TYPE_INT, 5000, at_least(1)),
    ConfigDef("group.consumer.max.heartbeat.interval.ms", TYPE_INT, 15000, at_least(1)),
    ConfigDef("group.consumer.session.timeout.ms", TYPE_INT, 45000, at_least(1)),
    ConfigDef("group.consumer.min.session.timeout.ms", TYPE_INT, 45000, at_least(1)),
    ConfigDef("group.consumer.max.session.timeout.ms", TYPE_INT, 60000, at_least(1)),
    ConfigDef("group.consumer.max.size", TYPE_INT, INT_MAX, at_least(1)),
    ConfigDef("group.consumer.assignors", TYPE_LIST, "uniform,range", _consumer_assignors),
    ConfigDef("group.consumer.migration.policy", TYPE_STRING, "bidirectional",
              one_of_any_case("disabled", "upgrade", "downgrade", "bidirectional")),
    # Share groups (KIP-932; engine/coordinator/share_protocol.py, engine/share/). Kafka 4.2's
    # names and defaults; the share.* group configs (group_configs.py) stay within the min/max.
    ConfigDef("group.share.session.timeout.ms", TYPE_INT, 45000, at_least(1)),
    ConfigDef("group.share.min.session.timeout.ms", TYPE_INT, 45000, at_least(1)),
    ConfigDef("group.share.max.session.timeout.ms", TYPE_INT, 60000, at_least(1)),
    ConfigDef("group.share.heartbeat.interval.ms", TYPE_INT, 5000, at_least(1)),
    ConfigDef("group.share.min.heartbeat.interval.ms", TYPE_INT, 5000, at_least(1)),
    ConfigDef("group.share.max.heartbeat.interval.ms", TYPE_INT, 15000, at_least(1)),
    ConfigDef("group.share.max.size", TYPE_INT, 200, _int_range(1, 1000)),
    ConfigDef("group.share.record.lock.duration.ms", TYPE_INT, 30000, at_least(1000)),
    ConfigDef("group.share.min.record.lock.duration.ms", TYPE_INT, 15000, at_least(1000)),
    ConfigDef("group.share.max.record.lock.duration.ms", TYPE_INT, 60000, at_least(1000)),
    ConfigDef("group.share.delivery.count.limit", TYPE_INT, 5, _int_range(2, 10)),
    ConfigDef("group.share.partition.max.record.locks", TYPE_INT, 2000, _int_range(100, 10000)),
    ConfigDef("group.share.max.share.sessions", TYPE_INT, 2000, at_least(1)),
    ConfigDef("share.coordinator.state.topic.num.partitions", TYPE_INT, 50, at_least(1)),
    ConfigDef("share.coordinator.state.topic.replication.factor", TYPE_SHORT, 3, at_least(1)),
    ConfigDef("share.coordinator.state.topic.min.isr", TYPE_SHORT, 2, at_least(1)),
    ConfigDef("share.coordinator.state.topic.segment.bytes", TYPE_INT, 100 * 1024 * 1024, at_least(14)),
    ConfigDef("share.coordinator.snapshot.update.records.per.snapshot", TYPE_INT, 500, _int_range(0, 500)),
    ConfigDef("share.coordinator.state.topic.prune.interval.ms", TYPE_LONG, 300000, at_least(1)),
    ConfigDef("share.coordinator.write.timeout.ms", TYPE_INT, 5000, at_least(1)),
    ConfigDef("offsets.topic.segment.bytes", TYPE_INT, 100 * 1024 * 1024, at_least(14)),
    ConfigDef("offsets.retention.check.interval.ms", TYPE_LONG, 600000, at_least(1)),
    ConfigDef("offset.metadata.max.bytes", TYPE_INT, 4096, at_least(0)),
    ConfigDef("offsets.commit.timeout.ms", TYPE_INT, 5000, at_least(1)),
    # Transactions (engine/coordinator/transactions).
    ConfigDef("transaction.state.log.num.partitions", TYPE_INT, 50, at_least(1)),
    ConfigDef("transaction.state.log.replication.factor", TYPE_SHORT, 3, at_least(1)),
    ConfigDef("transaction.state.log.segment.bytes", TYPE_INT, 100 * 1024 * 1024, at_least(1)),
    ConfigDef("transaction.state.log.min.isr", TYPE_INT, 2, at_least(1)),
    ConfigDef("transaction.max.timeout.ms", TYPE_INT, 900000, at_least(1)),
    ConfigDef("transactional.id.expiration.ms", TYPE_INT, 7 * DAY_MS, at_least(1)),
    ConfigDef("transaction.abort.timed.out.transaction.cleanup.interval.ms", TYPE_INT, 10000, at_least(1)),
    ConfigDef("transaction.remove.expired.transaction.cleanup.interval.ms", TYPE_INT, 3600000, at_least(1)),
    ConfigDef("transaction.partition.verification.enable", TYPE_BOOLEAN, True),   # KIP-890 part 1
    # Idempotent producers (engine/storage/producer_state.py).
    ConfigDef("producer.id.expiration.ms", TYPE_INT, DAY_MS, at_least(1)),
    ConfigDef("producer.id.expiration.check.interval.ms", TYPE_INT, 600000, at_least(1)),
    # Log compaction (engine/storage/cleaner.py).
    ConfigDef("log.cleaner.enable", TYPE_BOOLEAN, True),
    ConfigDef("log.cleaner.backoff.ms", TYPE_LONG, 15000, at_least(0)),
    ConfigDef("log.cleaner.dedupe.buffer.size", TYPE_LONG, 128 * 1024 * 1024, at_least(1024)),
    ConfigDef("log.cleaner.io.buffer.size", TYPE_INT, 512 * 1024, at_least(1024)),
    ConfigDef("leader.replication.throttled.rate", TYPE_LONG, LONG_MAX, at_least(0)),
    ConfigDef("follower.replication.throttled.rate", TYPE_LONG, LONG_MAX, at_least(0)),
    # Authorization (engine/security/authorizer.py): off unless authorizer.class.name names
    # Kafka's StandardAuthorizer. super.users is `;`-separated principals, as Kafka's.
    ConfigDef("authorizer.class.name", TYPE_STRING, ""),
    ConfigDef("super.users", TYPE_STRING, ""),
    ConfigDef("allow.everyone.if.no.acl.found", TYPE_BOOLEAN, False),
]
BROKER_CONFIGS: dict[str, ConfigDef] = {d.name: d for d in _BROKER_DEFS}
# Broker configs that may also be set for one listener, `listener.name.<listener>.<config>`, at
# start as at run time; a listener without its own takes the broker's (Kafka's listener configs
# read `valuesWithPrefixOverride`).
LISTENER_PREFIXED_CONFIGS = frozenset({"max.connections", "max.connection.creation.rate"})
_LISTENER_FORM = re.compile(r"listener\.name\.([^.]+)\.(.+)")


def listener_config_name(listener: str, name: str) -> str:
    """Kafka's per-listener name of a config (its listener prefix is lower case)."""
    return f"listener.name.{listener.lower()}.{name}"


def _listener_prefixed(name: str) -> ConfigDef | None:
    """The definition a `listener.name.<listener>.<config>` name takes, for LISTENER_PREFIXED_CONFIGS."""
    match = _LISTENER_FORM.fullmatch(name)
    return BROKER_CONFIGS[match.group(2)] if match and match.group(2) in LISTENER_PREFIXED_CONFIGS else None

# Which broker configs may change at run time: engine/dynamic_config.py (Kafka's DynamicBrokerConfig).

# Broker-level unit conversions for synonym chains (hours/minutes -> ms).
_SYNONYM_SCALE = {"log.retention.minutes": 60000, "log.retention.hours": 3600000, "log.roll.hours": 3600000,
                  "log.roll.jitter.hours": 3600000}


@dataclass
class BrokerConfig:
    """A broker's effective configuration, by Kafka's precedence: its own dynamic overrides,
    then the cluster-wide dynamic defaults, then static values from the command line, then
    Kafka's defaults. The layers stay apart so DescribeConfigs can name each value's source."""

    static: dict[str, Any] = field(default_factory=dict)
    dynamic: dict[str, Any] = field(default_factory=dict)          # this broker's ("<id>")
    dynamic_default: dict[str, Any] = field(default_factory=dict)  # cluster-wide ("")

    def __post_init__(self) -> None:
        self.static = validate_broker_configs(self.static)

    def _layers(self):
        return ((self.dynamic, SOURCE_DYNAMIC_BROKER), (self.dynamic_default, SOURCE_DYNAMIC_DEFAULT_BROKER),
                (self.static, SOURCE_STATIC_BROKER))

    def get(self, name: str) -> Any:
        for values, _ in self._layers():
            if name in values:
                return values[name]
        return BROKER_CONFIGS[name].default

    def listener_value(self, listener: str, name: str) -> Any:
        """A config as one listener sees it: its `listener.name.<listener>.` form from any layer,
        else the broker's value, as Kafka overlays a listener's prefixed configs on the rest."""
        prefixed = listener_config_name(listener, name)
        for values, _ in self._layers():
            if prefixed in values:
                return values[prefixed]
        return self.get(name)

    def source(self, name: str) -> int:
        for values, source in self._layers():
            if name in values:
                return source
        return SOURCE_DEFAULT

    def synonyms(self, names: tuple[str, ...]) -> list[tuple[str, Any, int]]:
        """DescribeConfigs synonyms, as Kafka orders them: every one of `names` that is set,
        layer by layer (this broker's, cluster-wide, static), then Kafka's defaults for them."""
        names = tuple(n for n in names if n in BROKER_CONFIGS)
        found = [(n, values[n], source) for values, source in self._layers() for n in names if n in values]
        return found + [(n, BROKER_CONFIGS[n].default, SOURCE_DEFAULT) for n in names
                        if BROKER_CONFIGS[n].default is not None]

    def topic_default(self, topic_config: str) -> tuple[Any, int]:
        """A topic config's value when the topic does not override it, and that value's source.

        The first broker synonym that is set explicitly wins (`log.retention.ms` before
        `log.retention.hours`); otherwise Kafka's default for the topic config applies.
        """
        for synonym in TOPIC_CONFIGS[topic_config].synonyms:
            if synonym in BROKER_CONFIGS and self.source(synonym) != SOURCE_DEFAULT:
                return self.get(synonym) * _SYNONYM_SCALE.get(synonym, 1), self.source(synonym)
        return TOPIC_CONFIGS[topic_config].default, SOURCE_DEFAULT


def validate_topic_configs(raw: dict[str, Any], existing: dict[str, Any] | None = None, *,
                           broker: BrokerConfig | None = None) -> dict[str, Any]:
    """Parse topic config overrides, raising InvalidConfigError on unknown names or bad values.

    A None value (a deletion) is checked by name only and kept as None. The overrides the topic
    would then have (`existing`, the parsed ones it has, changed by `raw`) must agree with one
    another, as Kafka's LogConfig.validateValues checks: `min.compaction.lag.ms` at most
    `max.compaction.lag.ms`. A config the topic does not override counts at `broker`'s default
    for topics (`log.cleaner.*.compaction.lag.ms` when set), or at Kafka's default without one."""
    parsed = {}
    for name, value in raw.items():
        definition = TOPIC_CONFIGS.get(name)
        if definition is None:
            raise InvalidConfigError(f"Unknown topic config name: {name}")
        parsed[name] = None if value is None else definition.parse(value)
    _check_compaction_lags({**(existing or {}), **parsed}, broker)
    return parsed


def _check_compaction_lags(overrides: dict[str, Any], broker: BrokerConfig | None) -> None:
    def lag(name: str) -> int:
        value = overrides.get(name)
        if value is not None:
            return value
        return broker.topic_default(name)[0] if broker else TOPIC_CONFIGS[name].default

    low, high = lag("min.compaction.lag.ms"), lag("max.compaction.lag.ms")
    if low > high:
        raise InvalidConfigError(f"conflict topic config setting min.compaction.lag.ms ({low}) > "
                                 f"max.compaction.lag.ms ({high})")


def validate_broker_configs(raw: dict[str, Any]) -> dict[str, Any]:
    """Parse static broker configs (the command line), raising InvalidConfigError on unknown
    names or bad values."""
    definitions = {name: BROKER_CONFIGS.get(name) or _listener_prefixed(name) for name in raw}
    unknown = [name for name, definition in definitions.items() if definition is None]
    if unknown:
        raise InvalidConfigError(f"Unknown broker config name: {unknown[0]}")
    parsed = {name: None if value is None else definitions[name].parse(value) for name, value in raw.items()}
    if parsed.get("max.connections.per.ip") == 0 and not parsed.get("max.connections.per.ip.overrides"):
        raise InvalidConfigError("max.connections.per.ip can be set to zero only if "
                                 "max.connections.per.ip.overrides property is set.")
    return parsed


def effective_topic_config(overrides: dict[str, Any], broker: BrokerConfig) -> dict[str, tuple[Any, int]]:
    """Every topic config with its effective value and source."""
    result = {}
    for name in TOPIC_CONFIGS:
        if name in overrides:
            result[name] = (overrides[name], SOURCE_DYNAMIC_TOPIC)
        else:
            result[name] = broker.topic_default(name)
    return result


def log_config_for(overrides: dict[str, Any], broker: BrokerConfig) -> LogConfig:
    values = {name: value for name, (value, _) in effective_topic_config(overrides, broker).items()}
    return LogConfig(
        segment_bytes=values["segment.bytes"],
        segment_ms=values["segment.ms"],
        segment_index_bytes=values["segment.index.bytes"],
        index_interval_bytes=values["index.interval.bytes"],
        retention_ms=values["retention.ms"],
        retention_bytes=values["retention.bytes"],
        flush_messages=values["flush.messages"],
        flush_ms=values["flush.ms"],
        max_message_bytes=values["max.message.bytes"],
        message_timestamp_type=values["message.timestamp.type"],
        message_timestamp_before_max_ms=values["message.timestamp.before.max.ms"],
        message_timestamp_after_max_ms=values["message.timestamp.after.max.ms"],
        cleanup_policy=values["cleanup.policy"],
        file_delete_delay_ms=values["file.delete.delay.ms"],
        delete_retention_ms=values["delete.retention.ms"],
        min_cleanable_dirty_ratio=values["min.cleanable.dirty.ratio"],
        min_compaction_lag_ms=values["min.compaction.lag.ms"],
        max_compaction_lag_ms=values["max.compaction.lag.ms"],
    )


def config_value_string(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
