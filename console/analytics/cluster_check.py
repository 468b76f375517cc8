"""What the analytics need from the executors of a Spark cluster, asked of the executors
themselves, with a sentence for each answer that is wrong.

Each probe runs as a small Spark job, one task per executor core, and returns what that
Python worker sees: its host, its Python version, whether it imports the project (shipped by
console.analytics.spark), whether the lake's directory exists there, whether the brokers
answer from there. The probe functions are local closures, so cloudpickle sends them by value:
they work even where the project cannot be imported, and say so.
"""
from __future__ import annotations

import os
import sys

class SparkUnavailable(RuntimeError):
    """Spark cannot run jobs now; the message says why, in a sentence for the run's page."""


# PySpark's own error when the versions differ (pyspark/worker.py), found in a failed task's text.
PYSPARK_VERSION_ERROR = "Python in worker has different version"


def _probe_tasks(session) -> int:
    return max(2, session.sparkContext.defaultParallelism)


def python_mismatch(driver: str, executors: dict[str, str]) -> str | None:
    """A sentence when an executor host's Python minor version differs from the driver's."""
    wrong = {host: v for host, v in executors.items() if v != driver}
    if not wrong:
        return None
    hosts = ", ".join(f"{host} runs Python {version}" for host, version in sorted(wrong.items()))
    return (f"The Spark executors' Python differs from the analytics worker's (Python {driver}): {hosts}. "
            "PySpark needs the same minor version on both sides: install it on the workers, or point "
            "spark.pyspark.python at it.")


def lake_path(lake_url: str) -> str | None:
    """The local path of a lake that executors read as files (a path or file://); None for a URL
    Spark reads through Hadoop's file systems (s3a://, hdfs://), which the executors' JVMs check."""
    if "://" not in lake_url:
        return lake_url
    return lake_url[len("file://"):] if lake_url.startswith("file://") else None


def executors_check(session, *, lake_url: str) -> None:
    """SparkUnavailable when an executor runs another Python, cannot import the shipped
    project, or does not see the lake's directory."""
    path = lake_path(lake_url)
    if path is not None and not os.path.isdir(path):
        path = None          # no snapshot yet: nothing to look for on the executors either

    def probe(_):
        import os
        import socket
        import sys as worker_sys
        try:
            import console.kafka_gateway.spark_source  # noqa: F401 - the shipped project imports
            imported = ""
        except Exception as exc:  # noqa: BLE001 - reported to the driver
            imported = f"{type(exc).__name__}: {exc}"
        seen = path is None or os.path.isdir(path)
        yield socket.gethostname(), "%d.%d" % worker_sys.version_info[:2], imported, seen

    try:
        answers = session.sparkContext.parallelize(range(_probe_tasks(session)), _probe_tasks(session)) \
            .mapPartitions(probe).collect()
    except Exception as exc:  # noqa: BLE001 - PySpark refuses a worker of another Python version itself
        if PYSPARK_VERSION_ERROR in str(exc):
            raise SparkUnavailable(f"The Spark executors run another Python than the analytics worker "
                                   f"(Python {_version()}): {_line_with(str(exc), PYSPARK_VERSION_ERROR)}. "
                                   "Install the same minor version on the workers, or point "
                                   "spark.pyspark.python at it.") from None
        raise
    mismatch = python_mismatch(_version(), {host: version for host, version, _, _ in answers})
    if mismatch:
        raise SparkUnavailable(mismatch)
    for host, _, imported, seen in answers:
        if imported:
            raise SparkUnavailable(f"The Spark executor on {host} cannot import the project shipped to it "
                                   f"({imported}): are the project's requirements installed in its Python?")
        if not seen:
            raise SparkUnavailable(f"The lake {lake_url} is not there on the Spark executor on {host}: with "
                                   "SPARK_MASTER on a cluster, ANALYTICS_LAKE must be a URL every executor "
                                   "reads and writes (s3a://, hdfs://, or a directory shared by every host).")


def brokers_reachable(session, *, bootstrap_servers: str) -> None:
    """SparkUnavailable when no broker of `bootstrap_servers` answers from an executor (the Kafka
    data source's readers connect from there, not from the analytics worker)."""
    servers = [s.strip() for s in bootstrap_servers.split(",") if s.strip()]

    def probe(_):
        import socket
        reasons = []
        for server in servers:
            host, _, port = server.rpartition(":")
            try:
                socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
                yield socket.gethostname(), ""
                return
            except (OSError, ValueError) as exc:
                reasons.append(f"{server}: {getattr(exc, 'strerror', None) or exc}")
        yield socket.gethostname(), "; ".join(reasons)

    answers = session.sparkContext.parallelize(range(_probe_tasks(session)), _probe_tasks(session)) \
        .mapPartitions(probe).collect()
    for host, failure in answers:
        if failure:
            raise SparkUnavailable(f"The Spark executor on {host} cannot reach the cluster's brokers ({failure}). "
                                   "The Kafka data source reads from the executors: the cluster's bootstrap "
                                   "servers must be addresses every Spark worker reaches (not loopback, unless "
                                   "Spark runs on the brokers' host).")


def readable_spark_error(exc: BaseException) -> str:
    """The first line that says what went wrong: for an error raised in the JVM, its message
    (and a Python worker's own error, when one failed a task), not "An error occurred while
    calling o123.parquet"."""
    text = str(exc)
    for marker in ("KafkaSourceError: ", PYSPARK_VERSION_ERROR):
        if marker in text:
            return _line_with(text, marker)[:2000]
    java = getattr(exc, "java_exception", None)
    if java is not None:
        message = java.getMessage() or java.toString()
        return str(message).strip().splitlines()[0][:2000]
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[0] if lines else repr(exc))[:2000]


def _line_with(text: str, marker: str) -> str:
    line = next(line for line in text.splitlines() if marker in line)
    return line[line.index(marker):].strip()


def _version() -> str:
    return "%d.%d" % sys.version_info[:2]
