"""The analytics on a real standalone Spark cluster: a master and two workers, each its own JVM
(tests/support/spark_cluster.py), and the console's analytics Celery worker as the driver,
pointed there by SPARK_MASTER=spark://127.0.0.1:<port> and `spark.*` variables; and on Sail,
the one-machine default (SPARK_MASTER=sail), whose runs are held to the same local results.

Every kind of run (the lake jobs, the records jobs through the Kafka data source, whose readers
run in the executors' Python workers, and a what-if) gives the results of the same run on a
local session, and the pages and the JSON API show what the lake run wrote. A worker killed
with -9 mid-run costs Spark its tasks there, not the run; a restarted master (which kills the
executors of the applications it does not know) is followed by a new session; an unreachable
master or unreachable brokers fail a run with a sentence.

One cluster and one analytics worker serve the whole module (Spark's JVMs take most of its time),
and the local session's results of the lake run are computed once for both engines.

On Sail the analytics worker, as `make run` starts it (solo pool, warm session), runs Sail's
Spark Connect server in its own process. The jobs build a few aggregates differently there
(console/analytics/jobs/aggregates.py): equal results are what proves both forms alike.
"""
from __future__ import annotations

import datetime as dt
import math
import shutil
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from django.urls import reverse
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from console.analytics import lake as L
from console.analytics import launch, launch_topics
from console.analytics.collector import snapshot_collect
from console.analytics.models import AnalyticsRun
from console.analytics.selectors import group_statuses
from console.analytics.services import (analytics_run_execute, analytics_run_request, source_options,
                                         what_if_request)
from console.analytics.storage import lake_filesystem
from console.analytics.warmup import WARMUP_DIR
from console.clusters.models import Cluster
from tests.console.analytics.test_runs_and_pages import write_snapshots
from tests.support.celery_worker import CeleryWorker, celery_broker, worker_database_url
from tests.support.engine_process import EngineProcess, free_port_range
from tests.support.redis_server import RedisServer
from tests.support.spark import TEST_CONF
from tests.support.spark_cluster import SparkCluster
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.timeout(900)]
APP_NAME = "console-on-a-cluster"
# What the analytics worker's environment says to Spark: the master, and `spark.*` settings
# both as variables of their own and through SPARK_CONF.
# The rest as the tests' local sessions have it (tests/support/spark.py: tiny data, no code generation).
SPARK_ENV = {"spark.driver.host": "127.0.0.1", "spark.executor.memory": "512m",
             "SPARK_CONF": ";".join([f"spark.app.name={APP_NAME}", "spark.sql.shuffle.partitions=2",
                                     *(f"{k}={v}" for k, v in TEST_CONF.items() if "shuffle" not in k)])}
# An executor is a JVM started by a worker: on a loaded 2-core machine that took over 20 s.
# The executor wait is longer than the restart test's bound on its run: the run must not wait it out.
EXECUTOR_WAIT_SECONDS = 600
WAITS = {"SPARK_MASTER_WAIT_SECONDS": "20", "SPARK_EXECUTOR_WAIT_SECONDS": str(EXECUTOR_WAIT_SECONDS),
         "ANALYTICS_HEARTBEAT_SECONDS": "5"}
CONTENTS_TOPIC = "contents"


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory):
    cluster = SparkCluster(tmp_path_factory.mktemp("spark-cluster"), workers=2).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cluster-lake") / "lake"


@pytest.fixture(scope="module")
def analytics_worker(spark_cluster, lake, redis_server, django_db_setup, django_db_blocker, tmp_path_factory):
    """The analytics queue's worker, as `make run` starts it (solo pool, warm session), on the cluster."""
    with django_db_blocker.unblock():
        database_url = worker_database_url()
    with celery_broker(redis_server.url):
        worker = CeleryWorker(broker_url=redis_server.url, log_path=tmp_path_factory.mktemp("worker") / "worker.log",
                              queues=("analytics",), pool="solo", concurrency=1, database_url=database_url,
                              extra_env={"SPARK_MASTER": spark_cluster.master_url, "ANALYTICS_LAKE": str(lake),
                                         "ANALYTICS_WARM_SPARK": "1", **SPARK_ENV, **WAITS})
        worker.start(timeout=600)
        yield worker
        worker.stop()


@pytest.fixture(scope="module")
def kafka_engine(tmp_path_factory):
    """A one-broker engine with a topic of keyed records, tombstones and unkeyed records."""
    engine = EngineProcess(tmp_path_factory.mktemp("cluster-engine") / "data", brokers=1).start()
    admin = AdminClient({"bootstrap.servers": engine.bootstrap})
    admin.create_topics([NewTopic(CONTENTS_TOPIC, 2, 1)])[CONTENTS_TOPIC].result(30)
    producer = Producer({"bootstrap.servers": engine.bootstrap, "linger.ms": 5})
    for i in range(3000):
        key = None if i % 50 == 0 else f"key-{i % 400}".encode()
        value = None if i % 97 == 0 else b"v" * (i % 300)
        producer.produce(CONTENTS_TOPIC, key=key, value=value, partition=i % 2, headers=[("h", b"x")] if i % 3 else None)
    assert producer.flush(60) == 0
    yield engine
    engine.kill()


def request_and_wait(cluster: Cluster, actor, *, kind: str = AnalyticsRun.LAKE, worker=None, timeout: float = 600,
                     **what_if) -> AnalyticsRun:
    run = (what_if_request(cluster=cluster, actor=actor, **what_if) if kind == AnalyticsRun.WHAT_IF
           else analytics_run_request(cluster=cluster, actor=actor, kind=kind))
    return wait_for_end(run, worker, timeout)


def wait_for_end(run: AnalyticsRun, worker, timeout: float = 600) -> AnalyticsRun:
    def ended():
        run.refresh_from_db()
        return run.state in (AnalyticsRun.DONE, AnalyticsRun.FAILED)
    wait_until(ended, timeout=timeout, interval=0.5,
               message=f"run {run.pk} ({run.kind}) to end\n{worker.log_text() if worker else ''}")
    return run


def results(lake_url: str, cluster_id: int, jobs) -> dict[str, list[tuple]]:
    """Each job's result rows, sorted, floats to 9 significant digits (sums may add up in
    another order on another number of partitions)."""
    fs, root = lake_filesystem(lake_url)
    found = {}
    for job in jobs:
        table = ds.dataset(L.result_url(root, job, cluster_id), filesystem=fs, format="parquet").to_table()
        rows = [tuple(_rounded(v) for v in row.values()) for row in table.to_pylist()]
        found[job] = sorted(rows, key=repr)
    return found


def _rounded(value):
    return float(f"{value:.9g}") if isinstance(value, float) and math.isfinite(value) else value


def local_lake_copy(lake: Path, target: Path) -> str:
    shutil.copytree(lake, target, ignore=shutil.ignore_patterns(L.RESULTS))
    return str(target)


@pytest.fixture
def lake_cluster(db, lake):
    cluster = Cluster.objects.create(name="lake on a cluster", bootstrap_servers="127.0.0.1:1")
    snapshots_once(lake, cluster.pk)
    return cluster


def snapshots_once(lake: Path, cluster_id: int) -> None:
    """The synthetic snapshots (fixed times), once per cluster id: a flushed database gives ids again."""
    if not (lake / L.PARTITIONS / f"{L.CLUSTER}={cluster_id}").exists():
        write_snapshots(str(lake), cluster_id)


def lake_job_names() -> list[str]:
    return [spec.name for spec in launch.job_specs()]


_local_results: list[dict[str, list[tuple]]] = []


def local_lake_results(spark, lake: Path, tmp_path: Path, cluster_id: int) -> dict[str, list[tuple]]:
    """The lake run's results from a local session, on a copy of the lake: once per module, since
    every cluster's synthetic snapshots are the same rows at the same times (write_snapshots)."""
    if not _local_results:
        local = local_lake_copy(lake, tmp_path / "local-lake")
        launch.analytics_jobs_run(spark, lake_url=local, cluster_id=cluster_id, days=7,
                                  today=dt.datetime.now(dt.timezone.utc).date(), progress=lambda *_: None)
        _local_results.append(results(local, cluster_id, lake_job_names()))
    return _local_results[0]


def test_every_run_on_the_cluster_equals_the_local_run(analytics_worker, spark_cluster, lake, lake_cluster,
                                                       kafka_engine, spark, users, tmp_path, settings,
                                                       viewer_client, operator_client):
    operator = users["operator"]
    # spark.* from the worker's environment reached the cluster: the application's name and memory.
    [app] = spark_cluster.active_apps()
    assert (app["name"], app["memoryperexecutor"]) == (APP_NAME, 512)
    # The worker warmed its session up at start, on the cluster, and left no trace in the lake.
    assert analytics_worker.log_text().count("Spark warmed up: every lake job once on a tiny lake") == 1
    assert not (lake / WARMUP_DIR).exists()

    # The worker serves only the analytics queue: a run routed anywhere else would never end.
    run = request_and_wait(lake_cluster, operator, worker=analytics_worker)
    assert (run.state, run.progress, run.error) == (AnalyticsRun.DONE, 100, ""), analytics_worker.log_text()
    assert run.duration_seconds > 0 and set(run.job_seconds) >= {"group_status", "time_lag", "group_lag_5m"}
    assert results(str(lake), lake_cluster.pk, lake_job_names()) == local_lake_results(spark, lake, tmp_path,
                                                                                        lake_cluster.pk)
    assert analytics_run_execute(run_id=run.pk, spark=None) is None          # a redelivered task does nothing
    settings.ANALYTICS_LAKE = str(lake)
    assert group_statuses(lake_url=str(lake), cluster=lake_cluster)["stuck"]["status"] == "STALL"
    pages_and_api_show_the_results(lake_cluster, viewer_client, operator_client)

    what_if_equals_local(lake_cluster, operator, worker=analytics_worker, lake=lake, spark=spark)
    # The records jobs: the executors' Python workers read the topic through the Kafka data source.
    records_run_equals_local(kafka_engine, operator, worker=analytics_worker, lake=lake, spark=spark,
                             tmp_path=tmp_path, settings=settings)


def what_if_equals_local(lake_cluster: Cluster, operator, *, worker, lake: Path, spark) -> None:
    what_if = dict(topic="orders", retention_ms=86_400_000, retention_bytes=5_000)
    run = request_and_wait(lake_cluster, operator, kind=AnalyticsRun.WHAT_IF, worker=worker, **what_if)
    assert (run.state, run.error) == (AnalyticsRun.DONE, ""), worker.log_text()
    now = dt.datetime.fromisoformat(run.result["now"])
    local = launch_topics.what_if_run(spark, lake_url=str(lake), cluster_id=lake_cluster.pk,
                                      since=now.date() - dt.timedelta(days=7), now=now, **what_if)
    assert run.result == {**local, "now": run.result["now"]} and len(run.result["partitions"]) == 2


def records_run_equals_local(kafka_engine, operator, *, worker, lake: Path, spark, tmp_path: Path, settings) -> None:
    """A records run of the worker over `kafka_engine`'s topic gives the local session's results."""
    engine_cluster = Cluster.objects.create(name=f"engine {kafka_engine.bootstrap}", bootstrap_servers=kafka_engine.bootstrap)
    snapshot_collect(cluster=engine_cluster, lake_url=str(lake))
    run = request_and_wait(engine_cluster, operator, kind=AnalyticsRun.RECORDS, worker=worker)
    assert (run.state, run.error) == (AnalyticsRun.DONE, ""), worker.log_text()
    local = local_lake_copy(lake, tmp_path / "records-lake")
    launch_topics.records_jobs_run(spark, lake_url=local, cluster_id=engine_cluster.pk,
                                   since=dt.date.today() - dt.timedelta(days=7), now=dt.datetime.now(dt.timezone.utc),
                                   source_options=source_options(engine_cluster),
                                   per_partition=settings.ANALYTICS_RECORDS_PER_PARTITION, progress=lambda *_: None)
    on_worker = results(str(lake), engine_cluster.pk, launch_topics.RECORD_JOBS)
    assert on_worker == results(local, engine_cluster.pk, launch_topics.RECORD_JOBS)
    [compaction] = on_worker["compaction"]
    assert compaction[:2] == (CONTENTS_TOPIC, 3000)              # topic, records: every record was read


def test_a_worker_killed_mid_run_costs_its_tasks_not_the_run(analytics_worker, spark_cluster, lake, lake_cluster,
                                                              spark, users, tmp_path):
    expected = local_lake_results(spark, lake, tmp_path, lake_cluster.pk)
    shutil.rmtree(lake / L.RESULTS, ignore_errors=True)          # only this run's results count
    run = analytics_run_request(cluster=lake_cluster, actor=users["operator"])

    def midway():
        run.refresh_from_db()
        assert run.state in AnalyticsRun.ACTIVE, f"the run ended before the kill: {run.state} {run.error}"
        return run.state == AnalyticsRun.RUNNING and run.progress >= 10
    wait_until(midway, timeout=600, interval=0.1, message="the run halfway")
    spark_cluster.kill_worker(0)
    try:
        run = wait_for_end(run, analytics_worker)
        assert (run.state, run.error) == (AnalyticsRun.DONE, ""), analytics_worker.log_text()
        assert results(str(lake), lake_cluster.pk, lake_job_names()) == expected
        assert spark_cluster.alive_workers() == 1
    finally:
        spark_cluster.start_worker(0)
        spark_cluster.wait_for_workers(2)


def test_after_a_master_restart_the_worker_starts_a_new_session(analytics_worker, spark_cluster, lake, lake_cluster,
                                                                users):
    [before] = spark_cluster.active_apps()
    spark_cluster.restart_master()
    spark_cluster.wait_for_workers(2)
    # The new master knows no application: it kills the old one's executors as the workers report them.
    wait_until(lambda: not spark_cluster.executor_processes(before["id"]), timeout=180, interval=0.5,
               message="the old application's executors killed by the new master")

    # The old session's test task, sent to executors the new master has killed, is given up once
    # the driver lists none for 10 s, not after SPARK_EXECUTOR_WAIT_SECONDS.
    run = request_and_wait(lake_cluster, users["operator"], kind=AnalyticsRun.WHAT_IF, worker=analytics_worker,
                           timeout=EXECUTOR_WAIT_SECONDS / 2, topic="orders", retention_ms=None, retention_bytes=0)
    assert (run.state, run.error) == (AnalyticsRun.DONE, ""), analytics_worker.log_text()
    [after] = spark_cluster.active_apps()
    assert after["name"] == APP_NAME and after["id"] != before["id"]


def test_brokers_the_executors_cannot_reach_fail_a_records_run_with_the_reason(analytics_worker, lake, users):
    unreachable = Cluster.objects.create(name="brokers out of reach", bootstrap_servers=f"127.0.0.1:{free_port_range(1)}")
    snapshots_once(lake, unreachable.pk)
    run = request_and_wait(unreachable, users["operator"], kind=AnalyticsRun.RECORDS, worker=analytics_worker)
    assert run.state == AnalyticsRun.FAILED
    assert run.error.startswith("The Spark executor on ") and "cannot reach the cluster's brokers" in run.error
    assert unreachable.bootstrap_servers in run.error


def test_a_master_that_does_not_answer_fails_the_run_with_the_reason(lake, users, tmp_path):
    master = f"spark://127.0.0.1:{free_port_range(1)}"
    redis = RedisServer(tmp_path / "redis").start()         # its own queue: the module's worker would take the run
    try:
        with celery_broker(redis.url):
            worker = CeleryWorker(broker_url=redis.url, log_path=tmp_path / "worker.log", queues=("analytics",),
                                  pool="solo", concurrency=1, extra_env={
                                      "SPARK_MASTER": master, "ANALYTICS_LAKE": str(lake),
                                      "SPARK_MASTER_WAIT_SECONDS": "2"}).start()
            cluster = Cluster.objects.create(name="no master", bootstrap_servers="127.0.0.1:1")
            run = request_and_wait(cluster, users["operator"], worker=worker, timeout=120)
            worker.stop()
    finally:
        redis.stop()
    assert run.state == AnalyticsRun.FAILED
    assert run.error.startswith(f"The Spark master {master} does not answer: ") and "waited 2 s" in run.error


def test_every_run_on_sail_equals_the_local_run(lake, lake_cluster, kafka_engine, spark, users, tmp_path, settings,
                                                viewer_client, operator_client, django_db_blocker):
    operator = users["operator"]
    expected = local_lake_results(spark, lake, tmp_path, lake_cluster.pk)
    shutil.rmtree(lake / L.RESULTS, ignore_errors=True)          # only this run's results count
    redis = RedisServer(tmp_path / "redis").start()         # its own queue: the module's worker would take the runs
    with django_db_blocker.unblock():
        database_url = worker_database_url()
    try:
        with celery_broker(redis.url):
            worker = CeleryWorker(broker_url=redis.url, log_path=tmp_path / "worker.log", queues=("analytics",),
                                  pool="solo", concurrency=1, database_url=database_url,
                                  extra_env={"SPARK_MASTER": "sail", "ANALYTICS_LAKE": str(lake),
                                             "ANALYTICS_WARM_SPARK": "1", "ANALYTICS_HEARTBEAT_SECONDS": "5"})
            worker.start(timeout=300)
            try:
                sail_runs_equal_the_local_runs(worker, lake, lake_cluster, kafka_engine, spark, operator, tmp_path,
                                               settings, viewer_client, operator_client, expected)
            finally:
                worker.stop()
    finally:
        redis.stop()


def sail_runs_equal_the_local_runs(worker, lake, lake_cluster, kafka_engine, spark, operator, tmp_path, settings,
                                   viewer_client, operator_client, expected) -> None:
    assert worker.log_text().count("Spark warmed up: every lake job once on a tiny lake") == 1
    assert not (lake / WARMUP_DIR).exists()
    run = request_and_wait(lake_cluster, operator, worker=worker)
    assert (run.state, run.progress, run.error) == (AnalyticsRun.DONE, 100, ""), worker.log_text()
    assert set(run.job_seconds) >= {"group_status", "time_lag", "group_lag_5m", "topic_growth"}
    assert results(str(lake), lake_cluster.pk, lake_job_names()) == expected
    settings.ANALYTICS_LAKE = str(lake)
    pages_and_api_show_the_results(lake_cluster, viewer_client, operator_client)
    what_if_equals_local(lake_cluster, operator, worker=worker, lake=lake, spark=spark)
    # The records jobs: Sail runs the Kafka data source's readers in the worker's process, and
    # keeps what they read for the three jobs in a scratch directory it removes afterwards.
    records_run_equals_local(kafka_engine, operator, worker=worker, lake=lake, spark=spark, tmp_path=tmp_path,
                             settings=settings)
    scratch = lake / launch_topics.RECORDS_SCRATCH_DIR
    assert not scratch.exists() or not any(scratch.iterdir())
    # Brokers out of reach: the data source's reason, in a sentence.
    unreachable = Cluster.objects.create(name="brokers out of Sail's reach",
                                         bootstrap_servers=f"127.0.0.1:{free_port_range(1)}")
    snapshots_once(lake, unreachable.pk)
    run = request_and_wait(unreachable, operator, kind=AnalyticsRun.RECORDS, worker=worker)
    assert run.state == AnalyticsRun.FAILED
    assert run.error.startswith(f"KafkaSourceError: The brokers at {unreachable.bootstrap_servers} did not give the "
                                "partitions' offsets: ") and "KafkaError{" not in run.error, run.error


def pages_and_api_show_the_results(lake_cluster, viewer_client, operator_client):
    statuses = viewer_client.get(f"/api/clusters/{lake_cluster.pk}/analytics/group-status").json()
    assert {g: s["status"] for g, s in statuses.items()} == {"stuck": "STALL", "fine": "OK"}
    assert statuses["stuck"]["lag"] == 80

    group = viewer_client.get(f"/api/clusters/{lake_cluster.pk}/analytics/groups/stuck").json()
    assert group["status"]["reason"].startswith("orders-0: commits stuck at offset 100")
    [time_lag] = group["time_lag"]
    assert time_lag["time_lag_seconds"] == 480.0            # the log end reached 100 eight minutes ago
    assert len(group["lag_history"]) >= 2 and group["catch_up"]["catch_up_seconds"] is None

    page = viewer_client.get(reverse("analytics:group", args=[lake_cluster.pk, "stuck"])).content.decode()
    assert 'data-status="STALL"' in page and 'data-chart="group-lag-data"' in page and "Lag, rates and retention:\n    last run <time datetime=\"2" in page
    assert "Run now" not in page                             # viewers do not get the button
    overview = operator_client.get(reverse("analytics:cluster", args=[lake_cluster.pk])).content.decode()
    assert 'data-group="stuck"' in overview and "Run now" in overview and "/data/broker-0" in overview
    topic = viewer_client.get(f"/api/clusters/{lake_cluster.pk}/analytics/topics/orders").json()
    assert topic["growth"]["growth_bytes_per_day"] == pytest.approx(2 * 10 * 100 * 60 * 24)
    assert viewer_client.get(reverse("analytics:topic", args=[lake_cluster.pk, "orders"])).status_code == 200
