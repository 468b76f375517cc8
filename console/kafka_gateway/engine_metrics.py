"""Our engine's broker metrics (HTTP, Prometheus's text format): the uncleanable partitions.

No Kafka API says which partitions the log cleaner gave up on; Kafka has the JMX gauge
`uncleanable-partitions-count` per log dir. Our engine serves it on each broker's
`--metrics-port` endpoint and advertises that endpoint as the read-only broker config
`engine.metrics.endpoint`; a broker that does not (Apache Kafka, or an engine without
`--metrics-port`) is simply not asked. Only that family is asked for (`?name[]=`), parsed
with prometheus_client's parser.
"""
from __future__ import annotations

import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

METRICS_ENDPOINT_CONFIG = "engine.metrics.endpoint"
UNCLEANABLE = "kafka_log_logcleanermanager_uncleanable_partitions_count"


def uncleanable_partitions(endpoint: str, *, timeout: float) -> dict[str, int]:
    """{log dir: uncleanable partitions} of one broker's endpoint; {} when it does not answer."""
    try:
        with urllib.request.urlopen(f"{endpoint.rstrip('/')}/metrics?name[]={UNCLEANABLE}", timeout=timeout) as r:
            text = r.read(1 << 20).decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError):
        return {}
    found = {}
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == UNCLEANABLE:
                    found[sample.labels.get("logdirectory", "")] = int(sample.value)
    except ValueError:            # not Prometheus's format: not our engine's endpoint
        return {}
    return found
