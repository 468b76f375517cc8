"""Analytics settings fail loudly on bad values."""
import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from console.env import env_spark_conf, envint
from tests.support.engine_process import ROOT


def test_spark_conf_comes_from_spark_variables_and_spark_conf():
    environ = {"spark.executor.memory": "4g", "SPARK_CONF": "spark.sql.shuffle.partitions=64; spark.executor.memory=8g",
               "PATH": "/bin"}
    assert env_spark_conf(environ) == {"spark.executor.memory": "8g", "spark.sql.shuffle.partitions": "64"}


@pytest.mark.parametrize("raw", ["shuffle=3", "spark.=1", "spark.sql.shuffle.partitions"])
def test_spark_conf_rejects_entries_that_are_not_spark_settings(raw):
    with pytest.raises(ImproperlyConfigured, match="SPARK_CONF"):
        env_spark_conf({"SPARK_CONF": raw})


def test_envint_minimum(monkeypatch):
    monkeypatch.setenv("SNAPSHOT_SECONDS", "0")
    with pytest.raises(ImproperlyConfigured, match="SNAPSHOT_SECONDS='0' is too small: use at least 1"):
        envint("SNAPSHOT_SECONDS", 30, minimum=1)


@pytest.mark.parametrize("name, raw", [("SNAPSHOT_SECONDS", "-5"), ("ANALYTICS_LAKE_RETENTION_DAYS", "a week"),
                                       ("SPARK_CONF", "master=local"), ("ANALYTICS_RECORDS_SECONDS", "60"),
                                       ("ANALYTICS_RECORDS_PER_PARTITION", "0"),
                                       ("ANALYTICS_RECORDS_PER_PARTITION", "many")])
def test_the_console_refuses_to_start_on_bad_analytics_settings(name, raw):
    check = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, capture_output=True,
                           text=True, env={**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", name: raw})
    assert check.returncode != 0 and "ImproperlyConfigured" in check.stderr and name in check.stderr


def test_default_lake_is_under_data_dir(settings):
    assert settings.ANALYTICS_LAKE == str(settings.DATA_DIR / "lake")
    assert settings.SNAPSHOT_SECONDS == 30 and settings.SPARK_MASTER == "sail"


def test_beat_runs_the_analytics_schedule_beside_the_others(settings):
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"console.analytics.tasks.analytics_snapshot", "console.analytics.tasks.analytics_runs_schedule",
            "console.analytics.tasks.analytics_lake_upkeep", "console.analytics.tasks.analytics_records_schedule"} <= tasks
    records = next(e for e in settings.CELERY_BEAT_SCHEDULE.values()
                   if e["task"] == "console.analytics.tasks.analytics_records_schedule")
    assert records["schedule"] == settings.ANALYTICS_RECORDS_SECONDS == 21600
    assert len(tasks) > 3                                   # the other apps' entries are kept
    assert settings.CELERY_TASK_ROUTES["console.analytics.tasks.analytics_run"] == {"queue": "analytics"}


def test_beat_queues_one_contents_run_per_cluster_beside_the_lake_runs(db):
    from console.analytics.models import AnalyticsRun
    from console.analytics.services import analytics_runs_schedule
    from console.clusters.models import Cluster
    clusters = [Cluster.objects.create(name=n, bootstrap_servers="127.0.0.1:1") for n in ("a", "b")]
    everyone = sorted(Cluster.objects.values_list("pk", flat=True))         # ours and the bundled engine's row
    assert {c.pk for c in clusters} <= set(everyone)
    assert sorted(r.cluster_id for r in analytics_runs_schedule()) == everyone          # lake runs
    queued = analytics_runs_schedule(kind=AnalyticsRun.RECORDS)
    assert sorted((r.cluster_id, r.kind) for r in queued) == [(pk, AnalyticsRun.RECORDS) for pk in everyone]
    assert analytics_runs_schedule(kind=AnalyticsRun.RECORDS) == []          # one active run per cluster and kind
