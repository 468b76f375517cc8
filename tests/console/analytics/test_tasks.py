"""A run requested in the console reaches a real Celery worker through the `analytics` queue;
the worker's Spark computes every job on a synthetic lake, and the pages and the JSON API
show the results."""
import pytest
from django.urls import reverse

from console.analytics.models import AnalyticsRun
from console.analytics.selectors import group_statuses
from console.analytics.services import analytics_run_execute, analytics_run_request
from console.clusters.models import Cluster
from tests.console.analytics.test_runs_and_pages import write_snapshots
from tests.support.spark import TEST_CONF
from tests.support.waiting import wait_until

# A cold Spark session in the worker plus every job: generous bounds for a loaded machine.
pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.timeout(900)]


def test_a_run_is_executed_by_an_analytics_worker_and_the_pages_show_it(celery_worker_factory, users, settings,
                                                                      tmp_path, viewer_client, operator_client):
    settings.ANALYTICS_LAKE = str(tmp_path / "lake")
    cluster = Cluster.objects.create(name="lake only", bootstrap_servers="127.0.0.1:1")
    write_snapshots(settings.ANALYTICS_LAKE, cluster.pk)
    # Only the analytics queue: if the task were routed anywhere else, nobody would run it.
    worker = celery_worker_factory(queues=("analytics",), pool="solo", concurrency=1, extra_env={
        "ANALYTICS_LAKE": settings.ANALYTICS_LAKE, "SPARK_MASTER": "local[2]",
        "SPARK_CONF": ";".join(f"{k}={v}" for k, v in TEST_CONF.items())})
    run = analytics_run_request(cluster=cluster, actor=users["operator"])

    def finished():
        run.refresh_from_db()
        return run.state in (AnalyticsRun.DONE, AnalyticsRun.FAILED)
    wait_until(finished, timeout=600, interval=1, message=f"the analytics run to finish\n{worker.log_text()}")
    assert (run.state, run.progress, run.error) == (AnalyticsRun.DONE, 100, ""), worker.log_text()
    assert group_statuses(lake_url=settings.ANALYTICS_LAKE, cluster=cluster)["stuck"]["status"] == "STALL"
    assert run.duration_seconds > 0 and set(run.job_seconds) >= {"group_status", "time_lag", "group_lag_5m"}
    assert analytics_run_execute(run_id=run.pk, spark=None) is None          # a redelivered task does nothing
    pages_and_api_show_the_results(cluster, viewer_client, operator_client)


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
