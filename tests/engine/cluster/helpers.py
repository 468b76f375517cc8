"""Shared helpers for the cluster tests: admin-interface calls and metadata polling."""
from __future__ import annotations

import time

from confluent_kafka.admin import AdminClient, NewTopic

from engine.tools.broker_command import call


def admin_url(engine) -> str:
    return f"http://127.0.0.1:{engine.port + engine.brokers}"


def stop_broker(engine, node_id: int) -> dict:
    return call(admin_url(engine), "POST", f"/brokers/{node_id}/stop")


def start_broker(engine, node_id: int) -> dict:
    return call(admin_url(engine), "POST", f"/brokers/{node_id}/start")


def create_topic(bootstrap: str, name: str, partitions: int, replication: int, configs: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, replication, config=configs or {})])[name].result(15)


def partition_state(bootstrap: str, topic: str) -> dict[int, tuple[int, list[int], list[int]]]:
    """partition -> (leader, replicas, isr), fresh from the cluster."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    metadata = admin.list_topics(topic, timeout=10).topics[topic]
    return {p: (m.leader, list(m.replicas), list(m.isrs)) for p, m in metadata.partitions.items()}


def wait_until(condition, timeout: float = 30.0, interval: float = 0.1, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")
