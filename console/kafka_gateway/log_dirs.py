"""Log dir totals per broker (bytes and replicas in each dir), for the brokers pages.

DescribeLogDirs of every replica is the brokers pages' biggest answer (40,000 partitions:
about 0.5 s to decode), and the sizes change slowly, so `log_dir_totals` serves them from
`cache.LOG_DIRS`: collected on a background thread over a gateway of its own, with the time
of collection for the page to show (see console.kafka_gateway.cache).
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone

from kafka.protocol.admin import DescribeLogDirsRequest

from console.kafka_gateway import cache
from console.kafka_gateway.cache import LogDirSnapshot, LogDirTotal
from console.kafka_gateway.client import Gateway
from console.kafka_gateway.errors import describe_error_code, readable
from console.kafka_gateway.wire import bulk_allocation, send_to_each


def log_dir_totals(gateway: Gateway, brokers: Iterable[int], *, max_age: float,
                   wait_first: float) -> LogDirSnapshot | None:
    """The brokers' log dir totals, at most `max_age` seconds old when a collection is not
    running late; None while the first collection of this process is still running after
    `wait_first` seconds. max_age 0: collected now over `gateway`."""
    brokers = sorted(set(brokers))
    return cache.LOG_DIRS.get_for(gateway, lambda gw: collect(gw, brokers), max_age=max_age, wait_first=wait_first)


def collect(gateway: Gateway, brokers: list[int]) -> LogDirSnapshot:
    """One DescribeLogDirs (all replicas) per broker, all in flight together; summed per dir
    without keeping a record per replica."""
    collected_at = datetime.now(timezone.utc)
    if not brokers:
        return LogDirSnapshot(collected_at=collected_at)
    manager = gateway._admin._manager
    dirs: dict[int, tuple[LogDirTotal, ...]] = {}
    errors: dict[int, str] = {}
    with bulk_allocation():
        try:
            responses = manager.run(send_to_each, manager, lambda: DescribeLogDirsRequest(topics=None), brokers)
        except Exception as exc:  # noqa: BLE001 - kafka-python raises many kinds; the page shows why
            return LogDirSnapshot(collected_at=collected_at, errors={b: readable(exc) for b in brokers})
        for broker_id, response in zip(brokers, responses):
            if getattr(response, "error_code", 0):
                errors[broker_id] = describe_error_code(response.error_code)
                continue
            totals = []
            for result in response.results:
                if result.error_code:
                    continue
                size = replicas = 0
                for topic in result.topics:
                    for p in topic.partitions:
                        if not p.is_future_key:
                            size += p.partition_size
                            replicas += 1
                totals.append(LogDirTotal(result.log_dir, size, replicas))
            dirs[broker_id] = tuple(sorted(totals, key=lambda d: d.log_dir))
    return LogDirSnapshot(collected_at=collected_at, dirs=dirs, errors=errors)
