"""The console's /metrics: every cluster's last observation in Prometheus's text format,
written by prometheus_client, under the names operators' dashboards already use:

- kafka_exporter's (`kafka_brokers`, `kafka_topic_partition_*`, `kafka_consumergroup_*`, with
  its labels `topic`, `partition`, `consumergroup`);
- kafka-lag-exporter's time lag (`kafka_consumergroup_group_lag_seconds`,
  `kafka_consumergroup_group_max_lag_seconds`, with its labels `cluster_name`, `group`, ...);
- burrow_exporter's status codes (`kafka_burrow_status`, `kafka_burrow_partition_status`);
- the console's own (`kafka_console_*`): catch-up estimates, log dir usage, open
  transactions' age, and each observation's time, age and cost.

Every series has a `cluster` label (the cluster's name in the console).

At 40,000 partitions and 2,000 groups an exposition holds ~400,000 samples, which
prometheus_client takes 1-2 CPU-s to write. So each cluster's part is written once per
observation (`ClusterExposition`, cached by the observation it came from), and a scrape joins
the clusters' parts family by family (each family's HELP and TYPE once) and adds the few
samples that change with the clock (the observations' ages).
"""
from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric, UntypedMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector, CollectorRegistry

from console.metrics.assessment import BURROW_CODES


class _Families(Collector):
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)


def render(families: list[Metric]) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(families))
    return generate_latest(registry)


def cluster_families(cluster: str, observation) -> list[Metric]:
    """The families of one cluster's observation (empty families when nothing is known yet)."""
    families: list[Metric] = []
    families += _broker_families(cluster, observation)
    families += _partition_families(cluster, observation)
    families += _group_families(cluster, observation)
    families += _console_families(cluster, observation)
    return families


def _gauge(name: str, help_text: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, help_text, labels=labels)


def _broker_families(cluster, observation) -> list[Metric]:
    metadata = observation.metadata
    brokers = _gauge("kafka_brokers", "Number of brokers in the Kafka cluster.", ["cluster"])
    info = _gauge("kafka_broker_info", "Information about the Kafka broker.", ["cluster", "address", "id"])
    if metadata is not None:
        brokers.add_metric([cluster], len(metadata.brokers))
        for b in metadata.brokers:
            info.add_metric([cluster, f"{b.host}:{b.port}", str(b.node_id)], 1)
    down = _gauge("kafka_console_broker_down", "1 for a broker named as a replica that the cluster does not list "
                  "as live.", ["cluster", "id"])
    for broker_id in observation.assessment.brokers_down if observation.assessment else ():
        down.add_metric([cluster, str(broker_id)], 1)
    return [brokers, info, down]


def _partition_families(cluster, observation) -> list[Metric]:
    labels = ["cluster", "topic", "partition"]
    partitions = _gauge("kafka_topic_partitions", "Number of partitions for this Topic", ["cluster", "topic"])
    current = _gauge("kafka_topic_partition_current_offset", "Current Offset of a Broker at Topic/Partition", labels)
    oldest = _gauge("kafka_topic_partition_oldest_offset", "Oldest Offset of a Broker at Topic/Partition", labels)
    leader = _gauge("kafka_topic_partition_leader", "Leader Broker ID of this Topic/Partition", labels)
    replicas = _gauge("kafka_topic_partition_replicas", "Number of Replicas for this Topic/Partition", labels)
    isr = _gauge("kafka_topic_partition_in_sync_replica", "Number of In-Sync Replicas for this Topic/Partition", labels)
    preferred = _gauge("kafka_topic_partition_leader_is_preferred", "1 if Topic/Partition is using the Preferred "
                       "Broker", labels)
    under = _gauge("kafka_topic_partition_under_replicated_partition", "1 if Topic/Partition is under Replicated",
                   labels)
    metadata = observation.metadata
    for topic in metadata.topics if metadata is not None else ():
        partitions.add_metric([cluster, topic.name], len(topic.partitions))
        for p in topic.partitions:
            values = [cluster, p.topic, str(p.partition)]
            key = (p.topic, p.partition)
            if key in observation.current:
                current.add_metric(values, observation.current[key])
            if key in observation.oldest:
                oldest.add_metric(values, observation.oldest[key])
            leader.add_metric(values, p.leader)
            replicas.add_metric(values, len(p.replicas))
            isr.add_metric(values, len(p.isr))
            preferred.add_metric(values, int(p.leader >= 0 and p.leader == p.preferred_leader))
            under.add_metric(values, int(len(p.isr) < len(p.replicas)))
    return [partitions, current, oldest, leader, replicas, isr, preferred, under]


def _group_families(cluster, observation) -> list[Metric]:
    labels = ["cluster", "consumergroup", "topic", "partition"]
    current = _gauge("kafka_consumergroup_current_offset", "Current Offset of a ConsumerGroup at Topic/Partition",
                     labels)
    # kafka_exporter's two `_sum` names are gauges there; promtool's lint keeps `_sum` for
    # summaries and histograms except on untyped families, so they are untyped here (PromQL
    # reads them the same).
    current_sum = UntypedMetricFamily("kafka_consumergroup_current_offset_sum", "Current Offset of a ConsumerGroup "
                                      "at Topic for all partitions", labels=["cluster", "consumergroup", "topic"])
    lag = _gauge("kafka_consumergroup_lag", "Current Approximate Lag of a ConsumerGroup at Topic/Partition", labels)
    lag_sum = UntypedMetricFamily("kafka_consumergroup_lag_sum", "Current Approximate Lag of a ConsumerGroup at "
                                  "Topic for all partitions", labels=["cluster", "consumergroup", "topic"])
    members = _gauge("kafka_consumergroup_members", "Amount of members in a consumer group",
                     ["cluster", "consumergroup"])
    lag_seconds = _gauge("kafka_consumergroup_group_lag_seconds", "Group offset lag of a partition in seconds",
                         ["cluster", "cluster_name", "group", "topic", "partition", "member_host", "consumer_id",
                          "client_id"])
    max_lag_seconds = _gauge("kafka_consumergroup_group_max_lag_seconds", "Max group offset lag in seconds",
                             ["cluster", "cluster_name", "group"])
    status = _gauge("kafka_burrow_status", "Burrow's group status: 0 NOTFOUND, 1 OK, 2 WARN, 3 ERR",
                    ["cluster", "group"])
    partition_status = _gauge("kafka_burrow_partition_status", "Burrow's partition status: 1 OK, 2 WARN, 4 STOP, "
                              "5 STALL, 6 REWIND", ["cluster", "group", "topic", "partition"])
    catch_up = _gauge("kafka_console_consumergroup_catch_up_seconds", "Estimated seconds for the group to catch up "
                      "at its current rates (+Inf: not gaining)", ["cluster", "consumergroup"])
    assessed = observation.assessment.groups if observation.assessment else {}
    for group_id, group in observation.groups.items():
        members.add_metric([cluster, group_id], group.members)
        sums: dict[str, int] = {}
        for (topic, partition), offset in group.committed.items():
            current.add_metric([cluster, group_id, topic, str(partition)], offset)
            sums[topic] = sums.get(topic, 0) + offset
        for topic, total in sums.items():
            current_sum.add_metric([cluster, group_id, topic], total)
        a = assessed.get(group_id)
        if a is None:
            continue
        for topic, total in a.lag_by_topic().items():
            lag_sum.add_metric([cluster, group_id, topic], total)
        for (topic, partition), p in a.partitions.items():
            values = [cluster, group_id, topic, str(partition)]
            lag.add_metric(values, p.lag)
            partition_status.add_metric([cluster, group_id, topic, str(partition)], BURROW_CODES[p.status])
            if p.time_lag is not None:
                client_id, host, member_id = group.member_of.get((topic, partition), ("", "", ""))
                lag_seconds.add_metric([cluster, cluster, group_id, topic, str(partition), host, member_id,
                                        client_id], p.time_lag)
        if a.max_time_lag is not None:
            max_lag_seconds.add_metric([cluster, cluster, group_id], a.max_time_lag)
        status.add_metric([cluster, group_id], BURROW_CODES[a.status])
        if a.catch_up_seconds is not None:
            catch_up.add_metric([cluster, group_id], a.catch_up_seconds)
    return [current, current_sum, lag, lag_sum, members, lag_seconds, max_lag_seconds, status, partition_status,
            catch_up]


def _console_families(cluster, observation) -> list[Metric]:
    dir_labels = ["cluster", "broker", "log_dir"]
    total = _gauge("kafka_console_log_dir_total_bytes", "Size of the log dir's volume (DescribeLogDirs v4)", dir_labels)
    usable = _gauge("kafka_console_log_dir_usable_bytes", "Bytes the broker may still write in the log dir",
                    dir_labels)
    size = _gauge("kafka_console_log_dir_size_bytes", "Bytes of the replicas in the log dir", dir_labels)
    for d in observation.log_dirs:
        values = [cluster, str(d.broker_id), d.log_dir]
        size.add_metric(values, d.size_bytes)
        if d.total_bytes >= 0:
            total.add_metric(values, d.total_bytes)
        if d.usable_bytes >= 0:
            usable.add_metric(values, d.usable_bytes)
    uncleanable = _gauge("kafka_console_uncleanable_partitions", "Partitions the broker's log cleaner gave up on "
                         "(our engine's broker config engine.log.cleaner.uncleanable.partitions)", ["cluster", "broker"])
    for broker_id, partitions in observation.uncleanable.items():
        uncleanable.add_metric([cluster, str(broker_id)], len(partitions))
    oldest_txn = _gauge("kafka_console_open_transaction_oldest_age_seconds", "Age of the oldest open transaction "
                        "on any partition, from its producer's last batch", ["cluster"])
    txns = _gauge("kafka_console_open_transaction_partitions", "Partitions holding an open transaction",
                  ["cluster"])
    txns.add_metric([cluster], len(observation.open_transactions))
    if observation.open_transactions:
        oldest_txn.add_metric([cluster], max(0.0, observation.timestamp - min(observation.open_transactions.values())
                                             / 1000))
    stamp = _gauge("kafka_console_observation_timestamp_seconds", "When the observation these series come from "
                   "started (Unix time)", ["cluster"])
    duration = _gauge("kafka_console_observation_duration_seconds", "How long that observation took", ["cluster"])
    failed = _gauge("kafka_console_observation_failed", "1 when the last observation failed (the series are the "
                    "one before)", ["cluster"])
    if observation.metadata is not None:
        stamp.add_metric([cluster], observation.timestamp)
        duration.add_metric([cluster], observation.seconds)
    failed.add_metric([cluster], int(observation.error is not None))
    return [total, usable, size, uncleanable, oldest_txn, txns, stamp, duration, failed]


# --- one exposition per observation, joined per scrape ------------------------------------------

class ClusterExposition:
    """One cluster's rendered families: {family name: (HELP and TYPE lines, sample lines)}, and
    the same gzipped, each part a gzip member of its own: Prometheus asks for gzip, and a gzip
    stream may be a concatenation of members (RFC 1952), so a scrape joins compressed parts
    instead of compressing tens of MB each time."""

    def __init__(self, text: bytes) -> None:
        self.families: dict[bytes, tuple[bytes, bytes]] = {}
        self.gzipped: dict[bytes, tuple[bytes, bytes]] = {}
        # Label values escape newlines, so "\n# HELP " starts a family and nothing else.
        for block in (b"\n" + text).split(b"\n# HELP ")[1:]:
            block = block if block.endswith(b"\n") else block + b"\n"
            name = block.split(b" ", 1)[0]
            head_end = block.index(b"\n", block.index(b"\n# TYPE ") + 1) + 1
            head, body = b"# HELP " + block[:head_end], block[head_end:]
            self.families[name] = (head, body)
            self.gzipped[name] = (gzip.compress(head, 1), gzip.compress(body, 1) if body else b"")


# {cluster name: (the observation, its exposition)}: the observation itself is kept, so an
# exposition is never served for another observation that happens to reuse its id.
_rendered: dict[str, tuple[object, ClusterExposition]] = {}
_lock = threading.Lock()


def cluster_exposition(cluster: str, observation) -> ClusterExposition:
    entry = _rendered.get(cluster)
    if entry is not None and entry[0] is observation:
        return entry[1]
    written = ClusterExposition(render(cluster_families(cluster, observation)))
    with _lock:
        _rendered[cluster] = (observation, written)
    return written


def exposition(observations: dict[str, object], *, now: float | None = None, gzipped: bool = False) -> bytes:
    return b"".join(exposition_chunks(observations, now=now, gzipped=gzipped))


def exposition_chunks(observations: dict[str, object], *, now: float | None = None,
                      gzipped: bool = False) -> list[bytes]:
    """Every cluster's families (name -> observation or None), HELP and TYPE once per family,
    then the observations' ages at this moment; `gzipped`: as gzip members. The parts as they
    are kept, to be sent one after the other without joining tens of MB."""
    parts = [cluster_exposition(name, o) for name, o in observations.items() if o is not None]
    order: list[bytes] = []
    for part in parts:
        order += [n for n in part.families if n not in order]
    chunks = []
    for name in order:
        pieces = [p.gzipped[name] if gzipped else p.families[name] for p in parts if name in p.families]
        chunks.append(pieces[0][0])
        chunks += [body for _, body in pieces]
    age = _gauge("kafka_console_observation_age_seconds", "Seconds since the observation these series come from "
                 "started; no series: none yet", ["cluster"])
    now = time.time() if now is None else now
    for name, o in observations.items():
        if o is not None and o.metadata is not None:
            age.add_metric([name], max(0.0, now - o.timestamp))
    ages = render([age])
    return [*chunks, gzip.compress(ages, 1) if gzipped else ages]

