"""The "run now" action on a synthetic lake (test_spark_cluster.py runs the jobs in a real worker
and checks the pages and the JSON API against what they wrote)."""
from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from console.analytics import lake as L
from console.analytics.models import AnalyticsRun
from console.analytics.services import analytics_run_request
from console.analytics.storage import snapshot_write
from console.clusters.models import Cluster
from console.errors import InvalidInput

NOW = dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0)


@pytest.fixture
def lake_cluster(db, settings, tmp_path):
    """A cluster row (never contacted: pages read only the lake) and 10 one-minute snapshots:
    group "stuck" sits at offset 100 on partition 0 while producers keep writing; "fine" keeps up."""
    settings.ANALYTICS_LAKE = str(tmp_path / "lake")
    cluster = Cluster.objects.create(name="lake only", bootstrap_servers="127.0.0.1:1")
    write_snapshots(settings.ANALYTICS_LAKE, cluster.pk)
    return cluster


def write_snapshots(lake_url: str, cluster_id: int) -> None:
    """10 one-minute snapshots ending now: see `lake_cluster`."""
    for i in range(10):
        ts = NOW - dt.timedelta(minutes=9 - i)
        leo = 90 + 10 * i
        tables = {
            L.PARTITIONS: [{L.TS: ts, L.TOPIC: "orders", L.PARTITION: p, L.LEADER: p, L.LOG_START_OFFSET: 0,
                            L.LOG_END_OFFSET: leo, L.SIZE_BYTES: leo * 100} for p in (0, 1)],
            L.GROUP_OFFSETS: [{L.TS: ts, L.GROUP: "stuck", L.TOPIC: "orders", L.PARTITION: 0, L.COMMITTED_OFFSET: 100,
                               L.LOG_END_OFFSET: leo, L.MEMBERS: 1},
                              {L.TS: ts, L.GROUP: "fine", L.TOPIC: "orders", L.PARTITION: 1,
                               L.COMMITTED_OFFSET: leo, L.LOG_END_OFFSET: leo, L.MEMBERS: 1}],
            L.LOG_DIRS: [{L.TS: ts, L.BROKER: 0, L.LOG_DIR: "/data/broker-0", L.TOTAL_BYTES: 10**9,
                          L.USABLE_BYTES: 10**8 - 2000 * i, L.SIZE_BYTES: 2000 * leo}],
            L.TOPIC_CONFIGS: [{L.TS: ts, L.TOPIC: "orders", L.CLEANUP_POLICY: "delete", L.RETENTION_MS: 3_600_000,
                               L.RETENTION_BYTES: -1, L.SEGMENT_BYTES: 1_048_576}],
        }
        for table, rows in tables.items():
            snapshot_write(lake_url=lake_url, cluster_id=cluster_id, table=table, rows=rows, taken_at=ts)


def test_run_now_is_role_checked_csrf_protected_and_audited(lake_cluster, users, viewer_client, operator_client):
    url = reverse("analytics:run", args=[lake_cluster.pk])
    assert viewer_client.post(url).status_code == 403
    assert operator_client.get(url).status_code == 405
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(users["operator"])
    assert csrf_client.post(url).status_code == 403
    assert not AnalyticsRun.objects.exists()

    page = operator_client.post(url, {"next": "https://evil.example/"}, follow=True)
    run = AnalyticsRun.objects.get()
    assert page.redirect_chain[-1][0] == f"/clusters/{lake_cluster.pk}/analytics/"
    assert f"Analytics run {run.pk} queued." in page.content.decode() and run.state == AnalyticsRun.QUEUED
    again = operator_client.post(url, follow=True)
    assert "Analytics not started: Analytics run is already queued" in again.content.decode()
    entries = list(AuditLogEntry.objects.filter(action="analytics.run").order_by("id"))
    assert [(e.actor_name, e.result) for e in entries] == [("operator", "ok"), ("operator", "failed")]


def test_only_one_active_run_per_cluster(lake_cluster, users):
    analytics_run_request(cluster=lake_cluster, actor=users["operator"])
    with pytest.raises(InvalidInput, match="already queued"):
        analytics_run_request(cluster=lake_cluster, actor=users["admin"])
