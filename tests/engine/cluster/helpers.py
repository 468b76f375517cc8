"""Shared helpers for the cluster tests: admin-interface calls and metadata polling."""
from __future__ import annotations

from confluent_kafka.admin import AdminClient, NewTopic

from engine.tools.broker_command import call
from tests.support.waiting import wait_until  # noqa: F401 - the cluster tests import it from here


def admin_url(engine) -> str:
    return engine.admin_url


def list_brokers(engine) -> list[dict]:
    return call(admin_url(engine), "GET", "/brokers", engine.admin_token)


def stop_broker(engine, node_id: int) -> dict:
    return call(admin_url(engine), "POST", f"/brokers/{node_id}/stop", engine.admin_token)


def start_broker(engine, node_id: int) -> dict:
    return call(admin_url(engine), "POST", f"/brokers/{node_id}/start", engine.admin_token)


def create_topic(bootstrap: str, name: str, partitions: int, replication: int, configs: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, replication, config=configs or {})])[name].result(15)


def partition_state(bootstrap: str, topic: str) -> dict[int, tuple[int, list[int], list[int]]]:
    """partition -> (leader, replicas, isr), fresh from the cluster."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    metadata = admin.list_topics(topic, timeout=10).topics[topic]
    return {p: (m.leader, list(m.replicas), list(m.isrs)) for p, m in metadata.partitions.items()}
