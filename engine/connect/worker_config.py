"""The worker's settings, with Kafka Connect's names and defaults (WorkerConfig,
DistributedConfig, StandaloneConfig), and the Kafka client settings derived from them.

The worker's clients (the group member, the internal topics' readers and writers, the source
tasks' producers, the sink tasks' consumers) get `bootstrap.servers` and the security
settings (`security.protocol`, `sasl.mechanism`, `sasl.jaas.config`, `ssl.*` with PEM or PKCS12 stores);
`producer.`, `consumer.` and `admin.` prefixed settings override them for that client, as in
Connect.
"""
from __future__ import annotations

import re
import socket

from engine.connect.config_def import (BOOLEAN, HIGH, INT, LIST, LOW, LONG, MEDIUM, NO_DEFAULT_VALUE, PASSWORD,
                                       SHORT, STRING, ConfigDef, ConfigError, at_least, one_of)
from engine.connect.config_providers import ConfigProviderError, ConfigProviders
from engine.connect.converters import JSON

PROTOCOL_EAGER, PROTOCOL_COMPATIBLE, PROTOCOL_SESSIONED = "eager", "compatible", "sessioned"


def _common() -> ConfigDef:
    d = ConfigDef()
    d.define("bootstrap.servers", LIST, "localhost:9092", HIGH, "A list of host/port pairs used to establish the "
             "initial connection to the Kafka cluster.")
    d.define("key.converter", STRING, JSON, HIGH, "Converter class used to convert between Kafka Connect format and "
             "the serialized form that is written to Kafka (keys).")
    d.define("value.converter", STRING, JSON, HIGH, "Converter class used to convert between Kafka Connect format "
             "and the serialized form that is written to Kafka (values).")
    d.define("task.shutdown.graceful.timeout.ms", LONG, 5000, LOW, "Amount of time to wait for tasks to shutdown "
             "gracefully.", validator=at_least(0))
    d.define("offset.flush.interval.ms", LONG, 60000, LOW, "Interval at which to try committing offsets for tasks.",
             validator=at_least(1))
    d.define("offset.flush.timeout.ms", LONG, 5000, LOW, "Maximum number of milliseconds to wait for records to "
             "flush and partition offset data to be committed to offset storage before cancelling the process.",
             validator=at_least(1))
    d.define("listeners", LIST, "http://:8083", LOW, "List of comma-separated URIs the REST API will listen on.")
    d.define("rest.advertised.host.name", STRING, None, LOW, "Hostname given out to other workers to connect to.")
    d.define("rest.advertised.port", INT, None, LOW, "Port given out to other workers to connect to.")
    d.define("rest.advertised.listener", STRING, None, LOW, "Advertised listener (HTTP or HTTPS).")
    d.define("plugin.path", LIST, None, LOW, "List of paths separated by commas that contain plugins (Python "
             "modules and packages defining connectors).")
    d.define("client.id", STRING, "", LOW, "An id string to pass to the server when making requests.")
    d.define("topic.tracking.enable", BOOLEAN, True, LOW, "Enable tracking the set of active topics per connector.")
    d.define("topic.tracking.allow.reset", BOOLEAN, True, LOW, "Allow resetting the set of active topics.")
    d.define("topic.creation.enable", BOOLEAN, True, LOW, "Whether to allow automatic creation of topics used by "
             "source connectors.")
    d.define("security.protocol", STRING, "PLAINTEXT", MEDIUM, "Protocol used to communicate with brokers.",
             validator=one_of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL", case_insensitive=True))
    d.define("sasl.mechanism", STRING, "GSSAPI", MEDIUM, "SASL mechanism used for client connections.")
    d.define("sasl.jaas.config", PASSWORD, None, MEDIUM, "JAAS login context parameters for SASL connections.")
    d.define("ssl.truststore.location", STRING, None, MEDIUM, "The trust store file (PEM or PKCS12).")
    d.define("ssl.truststore.type", STRING, "JKS", MEDIUM, "The file format of the trust store file: PEM or PKCS12 "
             "(JKS: read when the file is PKCS12, as keytool writes them since Java 9).")
    d.define("ssl.truststore.password", PASSWORD, None, MEDIUM, "The password of a PKCS12 trust store.")
    d.define("ssl.truststore.certificates", PASSWORD, None, MEDIUM, "Trusted certificates in PEM, inline.")
    d.define("ssl.keystore.location", STRING, None, MEDIUM, "The key store file (PEM with the key and its "
             "certificate chain, or PKCS12).")
    d.define("ssl.keystore.type", STRING, "JKS", MEDIUM, "The file format of the key store file: PEM or PKCS12 "
             "(JKS: read when the file is PKCS12).")
    d.define("ssl.keystore.password", PASSWORD, None, MEDIUM, "The password of a PKCS12 key store.")
    d.define("ssl.keystore.key", PASSWORD, None, MEDIUM, "The private key in PEM, inline (KIP-651).")
    d.define("ssl.keystore.certificate.chain", PASSWORD, None, MEDIUM, "The certificate chain in PEM, inline.")
    d.define("ssl.key.password", PASSWORD, None, MEDIUM, "The password of the private key.")
    d.define("ssl.endpoint.identification.algorithm", STRING, "https", LOW, "The endpoint identification "
             "algorithm to validate server hostname using server certificate.")
    return d


def distributed_def() -> ConfigDef:
    d = _common()
    d.define("group.id", STRING, NO_DEFAULT_VALUE, HIGH, "A unique string that identifies the Connect cluster "
             "group this worker belongs to.")
    d.define("config.storage.topic", STRING, NO_DEFAULT_VALUE, HIGH, "The name of the Kafka topic where connector "
             "configurations are stored")
    d.define("config.storage.replication.factor", SHORT, 3, LOW, "Replication factor used when creating the "
             "configuration storage topic (-1: the broker's default)")
    d.define("offset.storage.topic", STRING, NO_DEFAULT_VALUE, HIGH, "The name of the Kafka topic where source "
             "connector offsets are stored")
    d.define("offset.storage.partitions", INT, 25, LOW, "The number of partitions used when creating the offset "
             "storage topic")
    d.define("offset.storage.replication.factor", SHORT, 3, LOW, "Replication factor used when creating the offset "
             "storage topic")
    d.define("status.storage.topic", STRING, NO_DEFAULT_VALUE, HIGH, "The name of the Kafka topic where connector "
             "and task status are stored")
    d.define("status.storage.partitions", INT, 5, LOW, "The number of partitions used when creating the status "
             "storage topic")
    d.define("status.storage.replication.factor", SHORT, 3, LOW, "Replication factor used when creating the status "
             "storage topic")
    d.define("session.timeout.ms", INT, 10000, HIGH, "The timeout used to detect worker failures.")
    d.define("heartbeat.interval.ms", INT, 3000, HIGH, "The expected time between heartbeats to the group "
             "coordinator.")
    d.define("rebalance.timeout.ms", INT, 60000, HIGH, "The maximum allowed time for each worker to join the "
             "group once a rebalance has begun.")
    d.define("worker.sync.timeout.ms", INT, 3000, MEDIUM, "How long a worker waits to catch up with the config "
             "topic before it gives up its work and rejoins.")
    d.define("scheduled.rebalance.max.delay.ms", INT, 300000, LOW, "The maximum delay that is scheduled in order "
             "to wait for the return of one or more departed workers before rebalancing and reassigning their "
             "connectors and tasks to the group.", validator=at_least(0))
    d.define("connect.protocol", STRING, PROTOCOL_SESSIONED, LOW, "Compatibility mode for Kafka Connect Protocol",
             validator=one_of(PROTOCOL_EAGER, PROTOCOL_COMPATIBLE, PROTOCOL_SESSIONED, case_insensitive=True))
    return d


def standalone_def() -> ConfigDef:
    d = _common()
    d.define("offset.storage.file.filename", STRING, NO_DEFAULT_VALUE, HIGH, "File to store offset data in")
    return d


class WorkerConfig:
    """Parsed worker properties; `raw` keeps every original (prefixed client overrides too)."""

    def __init__(self, props: dict[str, str], *, distributed: bool) -> None:
        try:
            self.providers = ConfigProviders(props)       # config.providers (config_providers.py)
            props = self.providers.transform(props)       # the worker's own ${provider:...} values
        except ConfigProviderError as exc:
            raise ConfigError("config.providers", message=str(exc)) from None
        self.raw = dict(props)
        self.distributed = distributed
        self.values = (distributed_def() if distributed else standalone_def()).parse(props)
        if not self.values["bootstrap.servers"]:
            raise ConfigError("bootstrap.servers", message="bootstrap.servers must not be empty")

    def __getitem__(self, name: str):
        return self.values[name]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(self.values["bootstrap.servers"])

    def listener(self) -> tuple[str, int]:
        """(host, port) of the first `listeners` URI (`http://:8083` binds every address)."""
        uri = self.values["listeners"][0]
        match = re.match(r"^(https?)://\[?([^\]/]*?)\]?(?::(\d+))?/?$", uri)
        if not match:
            raise ConfigError("listeners", uri, "Could not parse listener URI")
        if match.group(1) == "https":
            raise ConfigError("listeners", uri, "HTTPS listeners are not supported by this worker")
        return match.group(2) or "0.0.0.0", int(match.group(3) or 8083)

    def advertised_url(self, bound_port: int) -> str:
        host, _ = self.listener()
        host = self.values["rest.advertised.host.name"] or (host if host not in ("", "0.0.0.0", "::")
                                                            else socket.gethostname())
        port = self.values["rest.advertised.port"] or bound_port
        return f"http://{host}:{port}/"

    # --- clients -------------------------------------------------------------------------

    def client_settings(self, prefix: str = "") -> dict[str, str]:
        """Kafka-named settings of one client: the worker's, then `prefix.` overrides."""
        names = ("security.protocol", "sasl.mechanism", "sasl.jaas.config", "ssl.truststore.type",
                 "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
                 "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.key",
                 "ssl.keystore.certificate.chain", "ssl.key.password", "ssl.endpoint.identification.algorithm")
        settings = {"bootstrap.servers": self.bootstrap_servers}
        settings.update({n: str(self.raw[n]) for n in names if self.raw.get(n) is not None})
        if prefix:
            settings.update({k[len(prefix) + 1:]: v for k, v in self.raw.items() if k.startswith(prefix + ".")})
        return settings
