"""What the gateway returns: plain frozen dataclasses named after Kafka's own concepts.

Nothing here depends on a Kafka client library, so selectors and templates never see one.
"""
from __future__ import annotations

from dataclasses import dataclass, field

NO_LEADER = -1
OAUTHBEARER = "OAUTHBEARER"


@dataclass(frozen=True)
class ConnectionSettings:
    """How to reach a cluster. The secrets are already resolved from the environment, and kept
    out of repr() so that no traceback or log line shows them."""

    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = ""
    sasl_username: str = ""
    sasl_password: str = field(default="", repr=False)
    engine_admin_token: str = field(default="", repr=False)   # sent as X-Engine-Admin-Token
    # TLS (SSL, SASL_SSL): files on the console's hosts (tls_stores.py reads them). The CA file
    # (PEM, or a PKCS12 trust store) replaces the system's trust store; a client certificate
    # (PEM with its key file, or a PKCS12 key store) logs the console in (mTLS). The password
    # opens an encrypted PEM key or the PKCS12 stores.
    ssl_cafile: str = ""
    ssl_certfile: str = ""
    ssl_keyfile: str = ""
    ssl_key_password: str = field(default="", repr=False)
    # SASL OAUTHBEARER: the console's OAuth 2 client, which gets its token from the identity
    # provider's token endpoint with the client credentials grant (oauth_tokens.py).
    oauth_token_endpoint_url: str = ""
    oauth_client_id: str = ""
    oauth_client_secret: str = field(default="", repr=False)
    oauth_scope: str = ""

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_oauth(self) -> bool:
        return self.sasl_mechanism == OAUTHBEARER


@dataclass(frozen=True)
class BrokerNode:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)   # slots: tens of thousands per cluster, no dict each
class PartitionInfo:
    topic: str
    partition: int
    leader: int                      # NO_LEADER (-1) when the partition is offline
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    leader_epoch: int = -1

    @property
    def preferred_leader(self) -> int | None:
        return self.replicas[0] if self.replicas else None

    @property
    def is_offline(self) -> bool:
        return self.leader == NO_LEADER


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    is_internal: bool
    partitions: tuple[PartitionInfo, ...]
    topic_id: str | None = None


@dataclass(frozen=True)
class ClusterMetadata:
    """One Metadata response: the live brokers, the controller and the topics asked for."""

    cluster_id: str | None
    controller_id: int
    brokers: tuple[BrokerNode, ...]
    topics: tuple[TopicInfo, ...]

    def topic(self, name: str) -> TopicInfo | None:
        return next((t for t in self.topics if t.name == name), None)


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str | None
    source: str                      # DescribeConfigs source: DEFAULT_CONFIG, DYNAMIC_TOPIC_CONFIG, ...
    is_default: bool = False         # left at Kafka's own default: source DEFAULT_CONFIG
    read_only: bool = False
    is_sensitive: bool = False
    default_value: str | None = None     # what applies without a topic override (from the synonyms) ...
    default_from: str | None = None      # ... and the config it comes from (log.retention.hours for retention.ms)
    documentation: str | None = None     # the broker's doc line (DescribeConfigs v3+), when it sends one
    config_type: str | None = None       # BOOLEAN, STRING, INT, LONG, ... (v3+)


@dataclass(frozen=True)
class PartitionOffsets:
    log_start_offset: int
    high_watermark: int


@dataclass(frozen=True)
class ReplicaLogDir:
    broker_id: int
    log_dir: str
    topic: str
    partition: int
    size: int
    offset_lag: int


@dataclass(frozen=True)
class ElectionResult:
    elected: tuple[tuple[str, int], ...] = ()
    not_needed: int = 0
    failed: tuple[tuple[str, int, str], ...] = ()         # (topic, partition, reason)


@dataclass(frozen=True)
class EngineBroker:
    """A broker as the engine's admin interface lists it (running or not)."""

    node_id: int
    host: str
    port: int
    running: bool


@dataclass(frozen=True)
class EngineBrokerChange:
    broker: EngineBroker
    changed: bool = field(default=True)
