"""The handlers' view of their broker: everything an API handler may touch, written down.

Handlers get a RequestContext (dispatch.py) whose `broker` satisfies BrokerView, with
`ctx.controller` (cluster metadata writes) and `ctx.coordinator` (consumer groups) as
shortcuts. engine.broker.broker.Broker is the implementation; tests may pass any object
with these members.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class BrokerView(Protocol):
    node_id: int
    host: str
    port: int
    running: bool
    log_dir: Path
    config: Any                     # engine.config.BrokerConfig: this broker's effective config
    controller: Any                 # engine.cluster.controller.Controller
    group_coordinator: Any          # engine.coordinator.coordinator.GroupCoordinator
    partitions: dict                # (topic, index) -> engine.broker.partition.Partition, this broker's replicas
    response_cache: Any             # engine.protocol.response_cache.ImageResponseCache
    admin_endpoint: str | None
    metrics: Any                    # engine.metrics.stats.BrokerStats: what Produce, Fetch and dispatch count
    byte_rate_quotas: dict          # "producer_byte_rate" / "consumer_byte_rate" -> engine.broker.byte_rate_quota
    request_quota: Any              # "request_percentage", a ByteRateQuota over the request's time (request_quota.py)
    authorizer: Any                 # kafka_rules.authorizer.StandardAuthorizer, None: no authorizer
    log_cleaner: Any                # engine.storage.cleaner.LogCleaner, once the broker runs: uncleanable partitions

    @property
    def image(self) -> Any: ...     # engine.cluster.metadata.MetadataImage, read-only

    def leader_partition(self, topic: str, index: int) -> Any: ...

    def read_for_fetch(self, topic: str, index: int, *, fetch_offset: int, max_bytes: int,
                       current_leader_epoch: int, replica_id: int, min_one_batch: bool) -> tuple[Any, Any]: ...
