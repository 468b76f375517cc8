"""The analytics on Sail, the one-machine default (SPARK_MASTER=sail): the analytics Celery
worker, as `make run` starts it (solo pool, warm session), runs Sail's Spark Connect server in
its own process. Every kind of run (the lake jobs, the records jobs through the Kafka data
source, a what-if) gives the results of the same run on Spark's JVM (the tests' local session),
and the pages show what the lake run wrote.

The jobs build a few aggregates differently on Sail (console/analytics/jobs/aggregates.py):
equal results here are what proves both forms alike.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from console.analytics import launch_topics
from console.analytics.models import AnalyticsRun
from console.analytics.selectors import group_statuses
from console.analytics.warmup import WARMUP_DIR
from console.clusters.models import Cluster
from tests.console.analytics.test_spark_cluster import kafka_engine  # noqa: F401 - the module's fixture, shared
from tests.console.analytics.test_spark_cluster import (lake_job_names, local_lake_results,
                                                        pages_and_api_show_the_results, records_run_equals_local,
                                                        request_and_wait, results, snapshots_once,
                                                        what_if_equals_local)
from tests.support.celery_worker import CeleryWorker, celery_broker, worker_database_url
from tests.support.engine_process import free_port_range

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sail-lake") / "lake"


@pytest.fixture(scope="module")
def sail_worker(lake, redis_server, django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock():
        database_url = worker_database_url()
    with celery_broker(redis_server.url):
        worker = CeleryWorker(broker_url=redis_server.url, log_path=tmp_path_factory.mktemp("worker") / "worker.log",
                              queues=("analytics",), pool="solo", concurrency=1, database_url=database_url,
                              extra_env={"SPARK_MASTER": "sail", "ANALYTICS_LAKE": str(lake),
                                         "ANALYTICS_WARM_SPARK": "1", "ANALYTICS_HEARTBEAT_SECONDS": "5"})
        worker.start(timeout=300)
        yield worker
        worker.stop()


def test_every_run_on_sail_equals_the_run_on_spark(sail_worker, lake, kafka_engine, spark, users, tmp_path,  # noqa: F811
                                                   settings, viewer_client, operator_client):
    operator = users["operator"]
    lake_cluster = Cluster.objects.create(name="lake on sail", bootstrap_servers="127.0.0.1:1")
    snapshots_once(lake, lake_cluster.pk)
    assert sail_worker.log_text().count("Spark warmed up: every lake job once on a tiny lake") == 1
    assert not (lake / WARMUP_DIR).exists()

    run = request_and_wait(lake_cluster, operator, worker=sail_worker)
    assert (run.state, run.progress, run.error) == (AnalyticsRun.DONE, 100, ""), sail_worker.log_text()
    assert set(run.job_seconds) >= {"group_status", "time_lag", "group_lag_5m", "topic_growth"}
    assert results(str(lake), lake_cluster.pk, lake_job_names()) == local_lake_results(spark, lake, tmp_path,
                                                                                        lake_cluster.pk)
    settings.ANALYTICS_LAKE = str(lake)
    assert group_statuses(lake_url=str(lake), cluster=lake_cluster)["stuck"]["status"] == "STALL"
    pages_and_api_show_the_results(lake_cluster, viewer_client, operator_client)

    what_if_equals_local(lake_cluster, operator, worker=sail_worker, lake=lake, spark=spark)
    # The records jobs: Sail runs the Kafka data source's readers in the worker's process, and
    # keeps what they read for the three jobs in a scratch directory it removes afterwards.
    records_run_equals_local(kafka_engine, operator, worker=sail_worker, lake=lake, spark=spark, tmp_path=tmp_path,
                             settings=settings)
    scratch = lake / launch_topics.RECORDS_SCRATCH_DIR
    assert not scratch.exists() or not any(scratch.iterdir())


def test_a_records_run_on_sail_with_brokers_out_of_reach_fails_with_the_reason(sail_worker, lake, users):
    unreachable = Cluster.objects.create(name="brokers out of reach", bootstrap_servers=f"127.0.0.1:{free_port_range(1)}")
    snapshots_once(lake, unreachable.pk)
    run = request_and_wait(unreachable, users["operator"], kind=AnalyticsRun.RECORDS, worker=sail_worker)
    assert run.state == AnalyticsRun.FAILED
    assert run.error.startswith(f"KafkaSourceError: The brokers at {unreachable.bootstrap_servers} did not give the "
                                "partitions' offsets: ") and "KafkaError{" not in run.error, run.error
