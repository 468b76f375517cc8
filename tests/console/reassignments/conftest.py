"""Reassignment fixtures: a 4-broker engine whose broker 3 starts empty, and helpers."""
from __future__ import annotations

import pytest

from console.clusters.gateway import cluster_gateway
from console.clusters.services import cluster_create
from tests.conftest import TEST_ADMIN_TOKEN_ENV
from tests.console.conftest import STOPPABLE_ENGINE_CONFIGS


@pytest.fixture
def four_brokers(db, engine_factory):
    """A private 4-broker engine and its cluster row (tests move replicas onto broker 3)."""
    engine = engine_factory(brokers=4, configs=STOPPABLE_ENGINE_CONFIGS)
    cluster = cluster_create(name="four brokers", bootstrap_servers=engine.bootstrap,
                             admin_token_env=TEST_ADMIN_TOKEN_ENV)
    cluster.engine = engine
    return cluster


def replicas_of(cluster, topic: str) -> dict[int, tuple[int, ...]]:
    with cluster_gateway(cluster) as gw:
        return {p.partition: tuple(p.replicas) for p in gw.metadata([topic]).topic(topic).partitions}


def throttle_configs(cluster, topics, brokers) -> dict:
    """Every throttle config still set on the topics and brokers (empty when all are gone)."""
    left = {}
    with cluster_gateway(cluster) as gw:
        calls = gw.reassignments
        for topic in topics:
            values = calls.topic_config_values(topic, ["leader.replication.throttled.replicas",
                                                       "follower.replication.throttled.replicas"])
            left.update({(topic, k): v for k, v in values.items() if v})
        for broker in brokers:
            values = calls.broker_config_values(broker, ["leader.replication.throttled.rate",
                                                         "follower.replication.throttled.rate"])
            left.update({(broker, k): v for k, v in values.items() if v})
    return left
