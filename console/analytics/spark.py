"""One warm SparkSession per process.

Spark takes ~10 s to start, so a page request never starts it: the analytics Celery worker
opens the session when its process starts (see tasks.py) and every job of that process
reuses it. `SPARK_MASTER` (default `local[*]`) and `spark.*` settings from the environment
(settings.SPARK_CONF) point the same jobs at a Spark cluster.
"""
from __future__ import annotations

import os
import sys
import threading

from pathlib import Path

from pyspark.sql import SparkSession

from console.kafka_gateway.spark_source import KafkaDataSource

PROJECT_ROOT = str(Path(__file__).resolve().parents[2])

# Sensible for a console's small-to-medium jobs; any of them can be overridden by SPARK_CONF.
DEFAULTS = {
    "spark.app.name": "kafka-console-analytics",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
}

_lock = threading.Lock()
_session: SparkSession | None = None


def build_session(*, master: str, conf: dict[str, str] | None = None) -> SparkSession:
    """A new (or the JVM's existing) session with our defaults, then `conf` on top."""
    # Python workers (the Kafka data source, UDFs) must run this interpreter, with our packages.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # ... and import the project (the Kafka data source is unpickled there). On a Spark cluster,
    # ship the project with spark.submit.pyFiles instead.
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if PROJECT_ROOT not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([PROJECT_ROOT, *filter(None, paths)])
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")     # stay on loopback, whatever the hostname says
    builder = SparkSession.builder.master(master)
    for key, value in {**DEFAULTS, **(conf or {})}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    session.dataSource.register(KafkaDataSource)
    return session


def spark_session() -> SparkSession:
    """The process's session, started on first use from settings.SPARK_MASTER and SPARK_CONF."""
    global _session
    with _lock:
        if _session is None:
            from django.conf import settings
            _session = build_session(master=settings.SPARK_MASTER, conf=settings.SPARK_CONF)
        return _session


def spark_session_stop() -> None:
    global _session
    with _lock:
        if _session is not None:
            _session.stop()
            _session = None
