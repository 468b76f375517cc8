"""An observation of our engine with --metrics-port reads each broker's uncleanable count from
the endpoint the broker advertises; a rule fires on a count above its threshold."""
from __future__ import annotations

from dataclasses import replace

import pytest

from console.alerts.evaluation import breaches
from console.alerts.models import AlertRule
from console.clusters.services import cluster_create
from console.metrics.selectors import observation_now
from tests.support.engine_process import EngineProcess, free_port_range


@pytest.fixture
def metered_cluster(db, tmp_path):
    engine = EngineProcess(tmp_path / "data", brokers=2, extra_args=["--metrics-port", str(free_port_range(2))])
    engine.start()
    try:
        yield engine, cluster_create(name="metered", bootstrap_servers=engine.bootstrap)
    finally:
        engine.kill()


def test_the_uncleanable_count_of_every_log_dir_comes_from_the_brokers_metrics(metered_cluster):
    engine, cluster = metered_cluster
    observation = observation_now(cluster=cluster)
    assert observation.uncleanable == {(0, str(engine.data_dir / "broker-0")): 0,
                                       (1, str(engine.data_dir / "broker-1")): 0}
    rule = AlertRule(cluster=cluster, name="cleaner", kind=AlertRule.UNCLEANABLE, threshold=0)
    assert breaches(rule, observation, 0.0) == {}
    # A cleaner that gave up on two partitions of broker 1's dir (the engine's cleaner keeps
    # that set; its count is what the endpoint serves):
    troubled = replace(observation, uncleanable={**observation.uncleanable,
                                                 (1, str(engine.data_dir / "broker-1")): 2})
    assert breaches(rule, troubled, 0.0) == {f"broker 1 {engine.data_dir / 'broker-1'}": 2.0}


def test_clusters_without_a_metrics_endpoint_have_no_count(cluster):
    assert observation_now(cluster=cluster).uncleanable == {}
