"""Reads for a broker's configs: every config with its value, where it comes from, and whether
Kafka lets it change at run time (a dynamic broker config, kafka-configs.sh --entity-type
brokers). One DescribeConfigs with synonyms and documentation per page."""
from __future__ import annotations

from dataclasses import dataclass

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import NotFound
from console.kafka_gateway import ConfigEntry
from engine.config import BROKER_CONFIGS, config_value_string
from engine.dynamic_config import KAFKA_ONLY_DYNAMIC
from kafka_rules.config_docs import broker_config_doc

CLUSTER_DEFAULT = ""        # the cluster-wide resource of kafka-configs.sh --entity-default

SOURCE_LABELS = {"DYNAMIC_BROKER_CONFIG": "this broker", "DYNAMIC_DEFAULT_BROKER_CONFIG": "cluster default",
                 "STATIC_BROKER_CONFIG": "server.properties", "DEFAULT_CONFIG": "Kafka default",
                 "DYNAMIC_BROKER_LOGGER_CONFIG": "logger"}


@dataclass(frozen=True)
class BrokerConfigRow:
    name: str
    value: str | None               # None for a sensitive value: never shown
    default_value: str | None       # what applies without this broker's own override
    default_from: str | None        # where that comes from, when it is another config's name
    source: str                     # in words (SOURCE_LABELS)
    kafka_source: str
    read_only: bool                 # Kafka cannot change it at run time
    is_sensitive: bool
    config_type: str | None
    doc: str
    kafka_default: str | None = None    # Kafka's own default (kafka_default()); None: null, or not known
    knows_kafka_default: bool = False   # the console knows Kafka's default of this config (null included)

    @property
    def is_override(self) -> bool:
        return self.kafka_source == "DYNAMIC_BROKER_CONFIG"

    @property
    def is_set(self) -> bool:
        """Set somewhere (this broker, the cluster default or server.properties), not left at
        Kafka's default: the page shows the default beside it."""
        return self.kafka_source != "DEFAULT_CONFIG"

    @property
    def is_dynamic(self) -> bool:
        return self.kafka_source in ("DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG")


def broker_config_rows(*, cluster: Cluster, broker_id: int) -> list[BrokerConfigRow]:
    with cluster_gateway(cluster) as gw:
        if broker_id not in {b.node_id for b in gw.metadata(topics=[]).brokers}:
            raise NotFound(f"Broker {broker_id} of {cluster.name} is not up: its configs cannot be read.")
        return [config_row(e) for e in gw.broker_config_details(broker_id)]


def broker_config_row(*, cluster: Cluster, broker_id: int, key: str) -> BrokerConfigRow:
    row = next((r for r in broker_config_rows(cluster=cluster, broker_id=broker_id) if r.name == key), None)
    if row is None:
        raise NotFound(f"Broker {broker_id} has no config {key!r}.")
    return row


# Broker configs the engine's tables list without Kafka's default: it describes `listeners`
# from the broker's own endpoint (Kafka's default is PLAINTEXT://:9092, not null).
_DEFAULT_NOT_IN_TABLES = frozenset({"listeners"})


def knows_kafka_default(name: str) -> bool:
    return (name in BROKER_CONFIGS or name in KAFKA_ONLY_DYNAMIC) and name not in _DEFAULT_NOT_IN_TABLES


def kafka_default(name: str) -> str | None:
    """Kafka's default for broker config `name`, as the bundled engine defines Kafka's configs
    (engine/config.py, engine/dynamic_config.py); None when that default is null
    (log.retention.ms) or the engine does not know the config (listeners, log.dirs).

    DescribeConfigs says it too, as the DEFAULT_CONFIG synonym, but the gateway's ConfigEntry
    keeps only the first synonym below the broker's own override: for a value from
    server.properties or the cluster-wide default that is the value itself."""
    if not knows_kafka_default(name):
        return None
    if name in BROKER_CONFIGS:
        return config_value_string(BROKER_CONFIGS[name].default)
    return config_value_string(KAFKA_ONLY_DYNAMIC[name][1])


def config_row(entry: ConfigEntry) -> BrokerConfigRow:
    hidden = entry.is_sensitive
    return BrokerConfigRow(name=entry.name, value=None if hidden else entry.value,
                           default_value=None if hidden else entry.default_value,
                           default_from=entry.default_from if entry.default_from != entry.name else None,
                           source=SOURCE_LABELS.get(entry.source, entry.source.lower()), kafka_source=entry.source,
                           read_only=entry.read_only, is_sensitive=hidden, config_type=entry.config_type,
                           doc=entry.documentation or broker_config_doc(entry.name) or "",
                           kafka_default=None if hidden else kafka_default(entry.name),
                           knows_kafka_default=knows_kafka_default(entry.name))
