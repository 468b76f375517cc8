"""One warm SparkSession per process: on Sail, on `local[*]`, or on a Spark cluster.

Spark takes ~10 s to start, so a page request never starts it: the analytics Celery worker
opens the session when its process starts (see tasks.py) and every job of that process
reuses it. `SPARK_MASTER` picks the engine, and `spark.*` settings from the environment
(settings.SPARK_CONF) go with it:
- `sail` (the default): Sail, Spark's API on a native engine (Apache DataFusion), as a Spark
  Connect server inside this process on loopback, and a Connect session to it. It starts in
  a fraction of a second and runs the jobs at 0.6 to 2.4x DuckDB's time on one machine, where
  Spark's JVM takes 3.4 to 11x (docs/benchmarks/analytics.md). It reads the lake and runs the
  Kafka data source in this process, so it is for one machine: a lake that outgrows one
  goes to a cluster. PySpark runs a process either on the JVM or on Connect, never both.
- `local[*]`, `local[N]`: Spark's JVM in this process.
- a cluster (`spark://...`, any master Spark takes): Spark's JVM as the driver, and below.

On a cluster (any master but `sail` and `local...`) this module does what the cluster needs:
- the master must answer (`spark://` masters are probed before the JVM is asked to register,
  up to SPARK_MASTER_WAIT_SECONDS: Spark itself would try for 60 s, then fail obscurely);
- the project is shipped to the executors: a zip of the project's packages built when the
  session starts, unpacked by every executor and put on its Python workers' path (what
  `spark.submit.pyFiles` does for a zip under spark-submit, but unpacked: the engine's
  protocol specs are files), before the Kafka data source is registered;
- the executors' Python is checked against the worker's (PySpark needs the same minor
  version on both sides), and so are the lake (a path must exist on every executor) and,
  before a records run, the brokers (console.analytics.cluster_check);
- a session with no executor is not trusted: a restarted master kills the executors of the
  applications it does not know, and the old session would wait for resources forever. So a
  session is checked before each run (a task must come back from the executors) and built
  again when it shows no executor within WARM_SESSION_EXECUTOR_SECONDS, and a watch
  thread cancels the jobs of a session that had no executor for SPARK_EXECUTOR_WAIT_SECONDS
  (the run fails with that reason; the next one reconnects).
"""
from __future__ import annotations

import logging
import os
import socket
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

from pyspark.sql import SparkSession

from console.analytics.cluster_check import SparkUnavailable, executors_check, readable_spark_error
from console.kafka_gateway.spark_source import KafkaDataSource

PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
SHIPPED_PACKAGES = ("console", "engine", "kafka_rules")
SHIPPED_NAME = "kafka-console-project"
HEALTH_JOB_GROUP = "kafka-console-health"
# How long a warm session gets to show an executor before a run: a master restarted without
# recovery never gives the old application executors again, and a session built anew waits
# SPARK_EXECUTOR_WAIT_SECONDS for its own. Too short costs only a rebuilt session.
WARM_SESSION_EXECUTOR_SECONDS = 10.0
log = logging.getLogger(__name__)

# Sensible for a console's small-to-medium jobs; any of them can be overridden by SPARK_CONF.
DEFAULTS = {
    "spark.app.name": "kafka-console-analytics",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    # Results' times as Parquet's microseconds since the epoch in UTC, as Sail writes them (the
    # JVM's default, INT96, reads back without a time zone): pages read one format.
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}


# Sail's settings for the analytics, unless the environment sets them (SAIL_<SECTION>__<KEY>):
# a per-partition top-k for ROW_NUMBER <= k windows rather than a sort of every row (Burrow's
# last snapshots of each group partition: 2.3 s to 0.9 s at 20M rows).
SAIL_DEFAULTS = {"SAIL_OPTIMIZER__ENABLE_WINDOW_TOPN": "true"}
SAIL = "sail"


_lock = threading.Lock()
_session: SparkSession | None = None
_watch: ExecutorWatch | None = None
_sail_server = None     # the Sail server of this process's session: it stops when collected


def is_sail(master: str) -> bool:
    return master == SAIL


def is_cluster(master: str) -> bool:
    return not master.startswith("local") and not is_sail(master)


def master_addresses(master: str) -> list[tuple[str, int]]:
    """host:port of each master of a `spark://h1:p1,h2:p2` URL (none for yarn, k8s://...)."""
    if not master.startswith("spark://"):
        return []
    addresses = []
    for part in master[len("spark://"):].split(","):
        host, _, port = part.strip().rpartition(":")
        addresses.append((host.strip("[]"), int(port or 7077)))
    return addresses


def master_wait(master: str, *, seconds: float) -> None:
    """Return once a master of `master` accepts connections; SparkUnavailable after `seconds`."""
    addresses = master_addresses(master)
    deadline = time.monotonic() + seconds
    while addresses:
        reasons = []
        for address in addresses:
            try:
                socket.create_connection(address, timeout=2).close()
                return
            except OSError as exc:
                reasons.append(f"{address[0]}:{address[1]} ({exc.strerror or exc})")
        if time.monotonic() >= deadline:
            raise SparkUnavailable(f"The Spark master {master} does not answer: {', '.join(reasons)}; waited "
                                   f"{seconds:.0f} s. Start it, or point SPARK_MASTER at one that runs.")
        time.sleep(1.0)


def project_archive(directory: str) -> str:
    """A zip of the project's packages, every file but compiled ones (the engine's protocol
    specs are JSON files read from its package directory, so the executors unpack it)."""
    path = os.path.join(directory, f"{SHIPPED_NAME}.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in SHIPPED_PACKAGES:
            for file in sorted(Path(PROJECT_ROOT, package).rglob("*")):
                if file.is_file() and "__pycache__" not in file.parts and file.suffix != ".pyc":
                    archive.write(file, file.relative_to(PROJECT_ROOT).as_posix())
    return path


def project_ship(session: SparkSession) -> None:
    """Send the project to the executors, unpacked in their working directory and put on their
    Python workers' path, as addPyFile does for a zip imported in place (hence its list of
    includes); before any Python function, the data source's too, is created."""
    context = session.sparkContext
    context.addArchive(f"{project_archive(tempfile.mkdtemp(prefix='kafka-console-spark-'))}#{SHIPPED_NAME}")
    context._python_includes.append(SHIPPED_NAME)


def build_session(*, master: str, conf: dict[str, str] | None = None) -> SparkSession:
    """A new (or the JVM's existing) session with our defaults, then `conf` on top."""
    if is_sail(master):
        return sail_session(conf=conf)
    # Python workers (the Kafka data source, UDFs) must run this interpreter, with our packages;
    # on a cluster whose executors keep Python elsewhere, set spark.pyspark.python.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # ... and import the project: locally through PYTHONPATH, on a cluster from the archive.
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
    if is_cluster(master):
        project_ship(session)
    session.dataSource.register(KafkaDataSource)
    return session


def sail_session(*, conf: dict[str, str] | None = None) -> SparkSession:
    """Sail's Spark Connect server in this process (one per process, kept until it exits) and a
    session on it, with the Kafka data source registered. Sail takes the `spark.sql.*` settings
    it knows and ignores the JVM's (memory, UI, code generation)."""
    global _sail_server
    from pysail.spark import SparkConnectServer

    for key, value in SAIL_DEFAULTS.items():
        os.environ.setdefault(key, value)
    if _sail_server is None:
        server = SparkConnectServer(ip="127.0.0.1", port=0)
        server.start(background=True)
        _sail_server = server
    host, port = _sail_server.listening_address
    session = SparkSession.builder.remote(f"sc://{host}:{port}").getOrCreate()
    for key, value in {**DEFAULTS, **(conf or {})}.items():
        if key.startswith("spark.sql."):
            session.conf.set(key, value)
    session.dataSource.register(KafkaDataSource)
    return session


def executor_count(session: SparkSession) -> int:
    """Executors registered with the session (the driver is not one)."""
    return max(0, len(session.sparkContext._jsc.sc().statusTracker().getExecutorInfos()) - 1)


def executors_wait(session: SparkSession, *, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while executor_count(session) == 0:
        if time.monotonic() >= deadline or session.sparkContext._jsc.sc().isStopped():
            return False
        time.sleep(0.5)
    return True


class ExecutorWatch(threading.Thread):
    """Cancels the jobs of a cluster session that has had no executor for `seconds` while jobs
    ran (they would wait forever), and remembers why: `reason` is the run's error."""

    def __init__(self, session: SparkSession, *, master: str, seconds: float) -> None:
        super().__init__(name="spark-executor-watch", daemon=True)
        self.session, self.master, self.seconds = session, master, seconds
        self.reason = ""
        self.stopped = threading.Event()

    def run(self) -> None:
        without_since = None
        while not self.stopped.wait(1.0):
            try:
                context = self.session.sparkContext._jsc.sc()
                busy = len(context.statusTracker().getActiveJobIds()) > 0
                none = executor_count(self.session) == 0
            except Exception:  # noqa: BLE001 - the session is being stopped
                return
            # Only time with jobs waiting counts: an idle session's lost executors are the next
            # run's health check's to find.
            without_since = (without_since or time.monotonic()) if busy and none else None
            if without_since is not None and time.monotonic() - without_since >= self.seconds:
                self.reason = (f"The Spark cluster {self.master} left this run without executors for "
                               f"{self.seconds:.0f} s (its master restarted, or every worker stopped), so the "
                               "run was cancelled. The analytics worker reconnects for the next run.")
                log.warning("%s", self.reason)
                context.cancelAllJobs()
                without_since = None


def spark_session() -> SparkSession:
    """The process's session, started on first use from settings.SPARK_MASTER and SPARK_CONF.
    On a cluster, a session without executors is stopped and built again (see the docstring);
    SparkUnavailable when the cluster cannot give one."""
    global _session, _watch
    from django.conf import settings
    master = settings.SPARK_MASTER
    with _lock:
        if _session is not None and not _healthy(_session, master, settings.SPARK_EXECUTOR_WAIT_SECONDS):
            log.warning("The Spark session on %s has no executors left: starting a new one", master)
            _stop_locked()
        if _session is None:
            if is_cluster(master):
                master_wait(master, seconds=settings.SPARK_MASTER_WAIT_SECONDS)
            session = build_session(master=master, conf=settings.SPARK_CONF)
            if is_cluster(master):
                try:
                    _cluster_ready(session, master, settings)
                except Exception:
                    session.stop()
                    raise
                _watch = ExecutorWatch(session, master=master, seconds=settings.SPARK_EXECUTOR_WAIT_SECONDS)
                _watch.start()
            _session = session
        if _watch is not None:
            _watch.reason = ""
        return _session


def _healthy(session: SparkSession, master: str, wait_seconds: float) -> bool:
    if is_sail(master):
        return not session.is_stopped
    if session.sparkContext._jsc.sc().isStopped():
        return False
    if not is_cluster(master):
        return True
    return (executors_wait(session, seconds=min(wait_seconds, WARM_SESSION_EXECUTOR_SECONDS))
            and _round_trip(session, seconds=wait_seconds))


def _round_trip(session: SparkSession, *, seconds: float) -> bool:
    """A task on the executors answers within `seconds`: the driver may still list executors
    that a restarted master has just killed, and a job sent to them would wait forever. Once
    the driver has listed no executor for WARM_SESSION_EXECUTOR_SECONDS the answer is no, without
    waiting out `seconds`: the old application gets none from a restarted master."""
    context = session.sparkContext
    finished = threading.Event()
    watch = threading.Thread(target=_round_trip_watch, args=(session, finished, seconds),
                             name="spark-round-trip-watch", daemon=True)
    context.setJobGroup(HEALTH_JOB_GROUP, "analytics worker: are the executors there?", interruptOnCancel=True)
    watch.start()
    try:
        context.parallelize(range(2), 2).count()
        return True
    except Exception:  # noqa: BLE001 - cancelled, or the executors failed it: not healthy
        return False
    finally:
        finished.set()
        watch.join()
        context.setLocalProperty("spark.jobGroup.id", None)


def _round_trip_watch(session: SparkSession, finished: threading.Event, seconds: float) -> None:
    """Cancels the round trip's job at `seconds`, or once no executor was listed for
    WARM_SESSION_EXECUTOR_SECONDS."""
    deadline = time.monotonic() + seconds
    without_since = None
    while not finished.wait(0.5):
        now = time.monotonic()
        try:
            without_since = (without_since or now) if executor_count(session) == 0 else None
        except Exception:  # noqa: BLE001 - the session is being stopped: the job fails on its own
            return
        if now >= deadline or (without_since is not None and now - without_since >= WARM_SESSION_EXECUTOR_SECONDS):
            session.sparkContext.cancelJobGroup(HEALTH_JOB_GROUP)
            return


def _cluster_ready(session: SparkSession, master: str, settings) -> None:
    if not executors_wait(session, seconds=settings.SPARK_EXECUTOR_WAIT_SECONDS):
        raise SparkUnavailable(f"The Spark master {master} gave this application no executor within "
                               f"{settings.SPARK_EXECUTOR_WAIT_SECONDS:.0f} s: are workers registered with "
                               "free cores and memory (spark.cores.max, spark.executor.memory)?")
    executors_check(session, lake_url=settings.ANALYTICS_LAKE)


def run_error(exc: BaseException) -> str:
    """The sentence a failed run shows: the watch's reason when it cancelled the jobs, else
    Spark's own message without the Java call that carried it."""
    if _watch is not None and _watch.reason:
        return _watch.reason
    return readable_spark_error(exc)


def spark_session_stop() -> None:
    with _lock:
        _stop_locked()


def _stop_locked() -> None:
    global _session, _watch
    if _watch is not None:
        _watch.stopped.set()
        _watch = None
    if _session is not None:
        try:
            _session.stop()
        finally:
            _session = None
