"""One broker's metric families at scrape time, named as the JMX exporter names Kafka's MBeans
(its example Kafka rules, lowercase names and labels). The MBean behind each family is in
its help text and in docs/engine/metrics.md.

Runs on the event loop that owns the broker (server.py), so it reads partitions, the ISR and
the controller's image without locks. Counters are exposed with prometheus_client's
`_total` suffix, timings as summaries whose quantiles are the recent percentiles (Kafka's
50th...999thPercentile attributes) and whose `_count`/`_sum` cover the broker's whole life.
"""
from __future__ import annotations

from collections.abc import Iterator

import kafka.errors as Errors
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, UntypedMetricFamily
from prometheus_client.registry import Collector

from engine.metrics.reservoir import Reservoir
from engine.metrics.stats import LOG_FLUSH_MS
from engine.protocol import registry

NO_LEADER = -1
LONG_MAX = 2**63 - 1
UNCLEANABLE = "kafka_log_logcleanermanager_uncleanable_partitions_count"


def broker_collectors(broker) -> list[Collector]:
    """One collector per group of families, each describing its names, so that a scrape asking
    for some families by name (`?name[]=...`) builds only their group."""
    return [_Families(broker, f) for f in (_topic_families, _request_families, _replica_manager_families,
                                           _fetch_session_families, _socket_server_families,
                                           _controller_families, _log_families,
                                           _share_families, _reauthentication_families)]


class _Families(Collector):
    def __init__(self, broker, build) -> None:
        self.broker = broker
        self.build = build
        self._names = None

    def collect(self) -> Iterator[Metric]:
        return iter(list(self.build(self.broker)))

    def describe(self) -> Iterator[Metric]:
        if self._names is None:      # the families' names, from a collection at registration
            self._names = [Metric(m.name, m.documentation, m.type) for m in self.collect()]
        return iter(self._names)


def _topic_families(broker) -> Iterator[Metric]:
    stats = broker.metrics
    stats.forget_topics(broker.controller.image.topics)
    families = [
        ("messagesin", "MessagesInPerSec: messages appended", "messages_in"),
        ("bytesin", "BytesInPerSec: bytes produced", "bytes_in"),
        ("bytesout", "BytesOutPerSec: bytes fetched by consumers", "bytes_out"),
    ]
    for short, help_text, attribute in families:
        name = f"kafka_server_brokertopicmetrics_{short}"
        per_topic = CounterMetricFamily(name, f"kafka.server:type=BrokerTopicMetrics,name={help_text}",
                                        labels=["topic"])
        total = 0
        for topic, counters in stats.topics.items():
            value = getattr(counters, attribute)
            per_topic.add_metric([topic], value)
            total += value
        # The MBean without a topic is the broker-wide meter: one series without the label.
        per_topic.add_sample(f"{name}_total", {}, total)
        yield per_topic


def _request_families(broker) -> Iterator[Metric]:
    stats = broker.metrics
    requests = CounterMetricFamily("kafka_network_requestmetrics_requests",
                                   "kafka.network:type=RequestMetrics,name=RequestsPerSec: requests handled",
                                   labels=["request", "version"])
    for (key, version), count in sorted(stats.requests.items()):
        requests.add_metric([_api_name(key), str(version)], count)
    yield requests
    errors = CounterMetricFamily("kafka_network_requestmetrics_errors",
                                 "kafka.network:type=RequestMetrics,name=ErrorsPerSec: error codes the responses carry",
                                 labels=["request", "error"])
    for (key, code), count in sorted(stats.errors.items()):
        errors.add_metric([_api_name(key), error_name(code)], count)
    yield errors
    yield _summary("kafka_network_requestmetrics_totaltimems",
                   "kafka.network:type=RequestMetrics,name=TotalTimeMs: request read to response written (ms)",
                   {(_api_name(k),): r for k, r in stats.total_time_ms.items()}, ("request",))
    yield _summary("kafka_network_requestmetrics_requestqueuetimems",
                   "kafka.network:type=RequestMetrics,name=RequestQueueTimeMs: request read to its handler "
                   "starting (ms)", {(_api_name(k),): r for k, r in stats.queue_time_ms.items()}, ("request",))


def _replica_manager_families(broker) -> Iterator[Metric]:
    image = broker.controller.image
    leaders = [p for p in broker.partitions.values() if p.is_leader] if broker.running else []
    min_isr_default = int(broker.config.topic_default("min.insync.replicas")[0])
    under_min_isr = 0
    for p in leaders:
        topic = image.topics.get(p.topic)
        min_isr = int(topic.configs.get("min.insync.replicas", min_isr_default)) if topic else min_isr_default
        under_min_isr += len(p.isr) < min_isr
    gauges = [
        ("underreplicatedpartitions", "UnderReplicatedPartitions: led partitions whose ISR is smaller than "
         "their replicas", sum(len(p.isr) < len(p.replicas) for p in leaders)),
        ("underminisrpartitioncount", "UnderMinIsrPartitionCount: led partitions whose ISR is below "
         "min.insync.replicas", under_min_isr),
        ("partitioncount", "PartitionCount: replicas on this broker",
         len(broker.partitions) if broker.running else 0),
        ("leadercount", "LeaderCount: partitions this broker leads", len(leaders)),
    ]
    for short, help_text, value in gauges:
        yield GaugeMetricFamily(f"kafka_server_replicamanager_{short}",
                                f"kafka.server:type=ReplicaManager,name={help_text}", value=value)
    stats = broker.metrics
    yield CounterMetricFamily("kafka_server_replicamanager_isrshrinks",
                              "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec: ISR shrinks proposed "
                              "by this leader", value=stats.isr_shrinks)
    yield CounterMetricFamily("kafka_server_replicamanager_isrexpands",
                              "kafka.server:type=ReplicaManager,name=IsrExpandsPerSec: ISR expansions proposed "
                              "by this leader", value=stats.isr_expands)


def _fetch_session_families(broker) -> Iterator[Metric]:
    """Kafka's FetchSessionCache MBeans: the broker's incremental fetch sessions (KIP-227)."""
    cache = broker.fetch_sessions
    yield GaugeMetricFamily("kafka_server_fetchsessioncache_numincrementalfetchsessions",
                            "kafka.server:type=FetchSessionCache,name=NumIncrementalFetchSessions: fetch sessions "
                            "cached", value=len(cache))
    yield GaugeMetricFamily("kafka_server_fetchsessioncache_numincrementalfetchpartitionscached",
                            "kafka.server:type=FetchSessionCache,name=NumIncrementalFetchPartitionsCached: "
                            "partitions of all cached sessions", value=cache.partitions_cached)
    yield CounterMetricFamily("kafka_server_fetchsessioncache_incrementalfetchsessionevictions",
                              "kafka.server:type=FetchSessionCache,name=IncrementalFetchSessionEvictionsPerSec: "
                              "sessions evicted for a new one", value=cache.evictions)


def _socket_server_families(broker) -> Iterator[Metric]:
    """Kafka's SocketServer memory pool (`queued.max.request.bytes`; request_memory.py): an
    unbounded pool has Long.MAX_VALUE available, as Kafka's MemoryPool.NONE says."""
    pool = broker.request_memory
    available = pool.available
    yield GaugeMetricFamily("kafka_network_socketserver_memorypoolavailable",
                            "kafka.network:type=SocketServer,name=MemoryPoolAvailable: bytes left for requests",
                            value=LONG_MAX if available is None else available)
    yield GaugeMetricFamily("kafka_network_socketserver_memorypoolused",
                            "kafka.network:type=SocketServer,name=MemoryPoolUsed: bytes of requests being read "
                            "and handled", value=pool.used)
    yield GaugeMetricFamily("kafka_network_socketserver_memorypoolwaiting",
                            "the engine's own: connections waiting for memory before reading their next request",
                            value=pool.waiting)
    yield from _connection_rate_families(broker)
    yield from _connection_limit_families(broker)


SOCKET_SERVER_METRICS = "kafka_server_socket_server_metrics"
ACCEPTOR_BLOCKED = "kafka_network_acceptor_acceptorblockedpercent"


def _connection_limit_families(broker) -> Iterator[Metric]:
    """Each listener's connections (Kafka's connection-count, one series per listener where Kafka
    has one per network thread) and how long its acceptor held accepted connections for the
    connection limits and creation rates (engine/protocol/connection_quotas.py): the Count of
    Kafka's AcceptorBlockedPercent meter, in nanoseconds; its rate over 1e9 is the fraction of
    time blocked. Both untyped, as the JMX exporter leaves them without a rule type (and promtool
    allows a `_count` suffix only on untyped families besides summaries and histograms)."""
    count = UntypedMetricFamily(f"{SOCKET_SERVER_METRICS}_connection_count",
                                "kafka.server:type=socket-server-metrics,listener=L connection-count: connections "
                                "the listener serves", labels=["listener"])
    blocked = UntypedMetricFamily(ACCEPTOR_BLOCKED,
                                  "kafka.network:type=Acceptor,name=AcceptorBlockedPercent,listener=L: ns the "
                                  "listener's acceptor held accepted connections for max.connections or "
                                  "max.connection.creation.rate", labels=["listener"])
    for listener in broker.listeners:
        count.add_metric([listener.name], listener.connection_count)
        blocked.add_metric([listener.name], broker.connection_quotas.listener(listener.name).blocked_ns)
    yield from (count, blocked)


def _connection_rate_families(broker) -> Iterator[Metric]:
    """Kafka's KIP-612 metrics (socket-server-metrics; engine/protocol/connection_rates.py). Its
    throttle times are averages of the throttled accepts; here summaries whose `_sum` / `_count`
    is that average, over the broker's life."""
    rates = broker.connection_rates
    yield GaugeMetricFamily(f"{SOCKET_SERVER_METRICS}_broker_connection_accept_rate",
                            "kafka.server:type=socket-server-metrics broker-connection-accept-rate: connections "
                            "per second the listeners accepted over the quota window (a protected inter-broker "
                            "listener's apart)", value=rates.accept_rate())
    accept_rate = GaugeMetricFamily(f"{SOCKET_SERVER_METRICS}_connection_accept_rate",
                                    "kafka.server:type=socket-server-metrics,listener=L connection-accept-rate: "
                                    "connections per second the listener accepted over the quota window",
                                    labels=["listener"])
    throttle = Metric(f"{SOCKET_SERVER_METRICS}_connection_accept_throttle_time",
                      "kafka.server:type=socket-server-metrics,listener=L connection-accept-throttle-time: ms "
                      "accepted connections waited for the listener's or the broker's max.connection.creation.rate",
                      "summary")
    ip_throttle = Metric(f"{SOCKET_SERVER_METRICS}_ip_connection_accept_throttle_time",
                         "kafka.server:type=socket-server-metrics,listener=L ip-connection-accept-throttle-time: "
                         "ms connections over their address's connection_creation_rate were held before closing",
                         "summary")
    for listener in broker.listeners:
        own = rates.listener(listener.name)
        accept_rate.add_metric([listener.name], rates.accept_rate(listener.name))
        for family, throttles in ((throttle, own.throttles), (ip_throttle, own.ip_throttles)):
            family.add_sample(f"{family.name}_count", {"listener": listener.name}, throttles.count)
            family.add_sample(f"{family.name}_sum", {"listener": listener.name}, throttles.total_ms)
    yield from (accept_rate, throttle, ip_throttle)


def _controller_families(broker) -> Iterator[Metric]:
    """Like Kafka, only the active controller reports 1 and the offline partitions; the others 0."""
    image = broker.controller.image
    active = broker.running and image.controller_id == broker.node_id
    offline = 0
    if active:
        offline = sum(p.leader == NO_LEADER for t in image.topics.values() for p in t.partitions.values())
    yield GaugeMetricFamily("kafka_controller_kafkacontroller_activecontrollercount",
                            "kafka.controller:type=KafkaController,name=ActiveControllerCount: 1 on the active "
                            "controller", value=int(active))
    yield GaugeMetricFamily("kafka_controller_kafkacontroller_offlinepartitionscount",
                            "kafka.controller:type=KafkaController,name=OfflinePartitionsCount: partitions "
                            "without a leader", value=offline)


def _log_families(broker) -> Iterator[Metric]:
    yield _summary("kafka_log_logflushstats_logflushrateandtimems",
                   "kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs: log flush time (ms)",
                   {(): LOG_FLUSH_MS.get(str(broker.log_dir))}, ())
    # Untyped, as the JMX exporter leaves a Value without a rule type: promtool's lint keeps
    # the `_count` suffix for summaries and histograms except on untyped families.
    uncleanable = UntypedMetricFamily(
        UNCLEANABLE,
        "kafka.log:type=LogCleanerManager,name=uncleanable-partitions-count: partitions the cleaner gave up on",
        labels=["logdirectory"])
    uncleanable.add_metric([str(broker.log_dir)], _uncleanable(broker))
    yield uncleanable


SHARE_LABELS = ["group", "topic", "partition"]


def _share_families(broker) -> Iterator[Metric]:
    """The share partitions this broker leads (KIP-932): Kafka's InFlightMessageCount, and the
    engine's own counts of what it locks, archives and lets expire (Kafka has these only as
    logs); the console's queue health reads the same numbers."""
    in_flight = GaugeMetricFamily(
        "kafka_server_sharepartitionmetrics_inflightmessagecount",
        "kafka.server:type=SharePartitionMetrics,name=InFlightMessageCount: records between the start and end "
        "offsets not done yet", labels=SHARE_LABELS)
    acquired = GaugeMetricFamily("kafka_server_sharepartitionmetrics_acquiredmessagecount",
                                 "the engine's own: records locked by a member now", labels=SHARE_LABELS)
    expiries = CounterMetricFamily("kafka_server_sharepartitionmetrics_acquisitionlocktimeouts",
                                   "the engine's own: acquisition locks that expired", labels=SHARE_LABELS)
    archived = CounterMetricFamily("kafka_server_sharepartitionmetrics_archivedmessages",
                                   "the engine's own: records archived, by cause (delivery_limit, rejected, gap, "
                                   "aborted)", labels=[*SHARE_LABELS, "cause"])
    for row in broker.share_manager.describe():
        labels = [row["group"], row["topic"], str(row["partition"])]
        in_flight.add_metric(labels, row["in_flight"])
        acquired.add_metric(labels, row["acquired"])
        expiries.add_metric(labels, row["lock_expiries_total"])
        for cause, value in sorted(row["archived_total"].items()):
            archived.add_metric([*labels, cause], value)
    yield from (in_flight, acquired, expiries, archived)


REAUTHENTICATION_COUNTERS = (
    ("successful_reauthentication", "successful-reauthentication-total: logins renewed on their connection"),
    ("failed_reauthentication", "failed-reauthentication-total: re-authentications refused (their connection "
     "closed)"),
    ("successful_authentication_no_reauth", "successful-authentication-no-reauth-total: logins by clients that "
     "cannot re-authenticate (no SaslAuthenticate v1), which a session lifetime disconnects"),
)


def _reauthentication_families(broker) -> Iterator[Metric]:
    """KIP-368's metrics of each SASL listener (Kafka's socket-server-metrics, one series per
    listener where Kafka has one per network thread too), and SocketServer's
    ExpiredConnectionsKilledCount: connections closed at a request after their session ended.
    Kafka's reauthentication-latency-avg and -max are a summary here: `_sum` / `_count` is
    the average."""
    listeners = sorted({*(listener.name for listener in getattr(broker, "listeners", ()) if listener.security.sasl),
                        *broker.metrics.sasl})
    counters = {attribute: CounterMetricFamily(f"kafka_server_socket_server_metrics_{attribute}",
                                               f"kafka.server:type=socket-server-metrics,listener=L {help_text}",
                                               labels=["listener"])
                for attribute, help_text in REAUTHENTICATION_COUNTERS}
    for name in listeners:
        stats = broker.metrics.sasl_listener(name)
        for attribute, family in counters.items():
            family.add_metric([name], getattr(stats, attribute))
    yield from counters.values()
    yield _summary("kafka_server_socket_server_metrics_reauthentication_latency",
                   "kafka.server:type=socket-server-metrics,listener=L reauthentication-latency-avg/-max: ms from "
                   "a re-authentication's SaslHandshake to its success",
                   {(name,): broker.metrics.sasl_listener(name).reauthentication_latency_ms for name in listeners},
                   ("listener",))
    yield GaugeMetricFamily("kafka_network_socketserver_expiredconnectionskilledcount",
                            "kafka.network:type=SocketServer,name=ExpiredConnectionsKilledCount: connections closed "
                            "at a request after their SASL session ended (KIP-368)",
                            value=sum(stats.expired_connections_killed for stats in broker.metrics.sasl.values()))


def _summary(name: str, help_text: str, reservoirs: dict[tuple, Reservoir | None], labels: tuple[str, ...]) -> Metric:
    family = Metric(name, help_text, "summary")
    for values, reservoir in sorted(reservoirs.items(), key=lambda kv: kv[0]):
        label_map = dict(zip(labels, values))
        snapshot = reservoir.snapshot() if reservoir is not None else None
        for q, value in snapshot.quantiles if snapshot else ():
            family.add_sample(name, {**label_map, "quantile": repr(q)}, value)
        family.add_sample(f"{name}_count", label_map, snapshot.count if snapshot else 0)
        family.add_sample(f"{name}_sum", label_map, snapshot.total if snapshot else 0.0)
    return family


def _uncleanable(broker) -> int:
    # The cleaner names the partitions it gave up on (Kafka's LogCleanerManager.uncleanablePartitions);
    # a cleaner that keeps no such set has none.
    cleaner = getattr(broker, "log_cleaner", None)
    return len(getattr(cleaner, "uncleanable_partitions", ()) or ())


def _api_name(key: int) -> str:
    spec = registry.lookup(key)
    return spec.name if spec is not None else str(key)


# Kafka's names (its Errors enum) where kafka-python's differ or it has none.
KAFKA_ERROR_NAMES = {-1: "UNKNOWN_SERVER_ERROR", 6: "NOT_LEADER_OR_FOLLOWER", 10: "MESSAGE_TOO_LARGE",
                     17: "INVALID_TOPIC_EXCEPTION", 39: "INVALID_REPLICA_ASSIGNMENT",
                     128: "INVALID_REGULAR_EXPRESSION", 129: "REBOOTSTRAP_REQUIRED",
                     130: "STREAMS_INVALID_TOPOLOGY", 131: "STREAMS_INVALID_TOPOLOGY_EPOCH",
                     132: "STREAMS_TOPOLOGY_FENCED", 133: "SHARE_SESSION_LIMIT_REACHED"}


def error_name(code: int) -> str:
    """The `error` label: Kafka's name for the code, as its ErrorsPerSec MBeans carry it."""
    if not code:
        return "NONE"
    return KAFKA_ERROR_NAMES.get(code) or Errors.for_code(code).message
