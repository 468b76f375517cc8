"""A real standalone Spark cluster on loopback: a master and workers, each its own JVM,
started with pyspark's own `spark-class` (org.apache.spark.deploy.master.Master and
org.apache.spark.deploy.worker.Worker), as `sbin/start-master.sh` would without daemonizing.

    cluster = SparkCluster(tmp / "spark", workers=2).start()
    cluster.master_url              # spark://127.0.0.1:<port>
    cluster.kill_worker(0)          # kill -9
    cluster.restart_master()        # kill -9, then a new master on the same port
    cluster.stop()

The workers run with an environment of their own: no PYTHONPATH, so executors import the
project only from what the driver ships them. The master's state is read from its web UI's
JSON (`state()`), as an operator's monitoring would.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.request
from pathlib import Path

import pyspark

from tests.support.engine_process import free_port_range
from tests.support.spark import QUICK_JVM_OPTIONS
from tests.support.waiting import wait_until

SPARK_HOME = Path(pyspark.__file__).resolve().parent
# No REST submission server (a fixed port, 6066, that parallel test runs would share).
MASTER_PROPERTIES = "spark.master.rest.enabled false\nspark.worker.cleanup.enabled false\n"


class SparkCluster:
    def __init__(self, directory: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g") -> None:
        self.directory = Path(directory)
        self.worker_count, self.cores, self.memory = workers, cores, memory
        self.master_port = self.ui_port = 0
        self.master: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen | None] = [None] * workers

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    def env(self) -> dict[str, str]:
        keep = ("PATH", "HOME", "JAVA_HOME", "LANG", "TMPDIR")
        return {**{k: os.environ[k] for k in keep if k in os.environ}, "SPARK_HOME": str(SPARK_HOME),
                "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1", "SPARK_LOG_DIR": str(self.directory),
                "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM_OPTIONS}

    def start(self, timeout: float = 180.0) -> SparkCluster:
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "spark.properties").write_text(MASTER_PROPERTIES)
        self.master_port, self.ui_port = free_port_range(1), free_port_range(1)
        self.start_master(timeout)
        for index in range(self.worker_count):
            self.start_worker(index)
        self.wait_for_workers(self.worker_count, timeout)
        return self

    def _spawn(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.directory / f"{name}.log", "ab")
        try:
            # spark-class ends in `exec java ...`: the pid is the JVM's, so kill -9 hits the JVM.
            return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], cwd=self.directory,
                                    env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()

    def start_master(self, timeout: float = 180.0) -> None:
        self.master = self._spawn("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                  "--port", str(self.master_port), "--webui-port", str(self.ui_port),
                                  "--properties-file", str(self.directory / "spark.properties"))
        wait_until(lambda: self._master_alive(), timeout=timeout, interval=0.5,
                   message=f"the Spark master to be ALIVE\n{self.log_text('master')}")

    def _master_alive(self) -> bool:
        if self.master.poll() is not None:
            raise AssertionError(f"the Spark master exited:\n{self.log_text('master')}")
        try:
            return self.state().get("status") == "ALIVE"
        except OSError:
            return False

    def start_worker(self, index: int) -> None:
        work = self.directory / f"worker-{index}"
        work.mkdir(exist_ok=True)
        self.workers[index] = self._spawn(
            f"worker-{index}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores",
            str(self.cores), "--memory", self.memory, "--webui-port", "0", "--work-dir", str(work),
            "--properties-file", str(self.directory / "spark.properties"), self.master_url)

    def state(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as answer:
            return json.load(answer)

    def alive_workers(self) -> int:
        try:
            return sum(1 for w in self.state().get("workers", []) if w.get("state") == "ALIVE")
        except OSError:
            return 0

    def wait_for_workers(self, count: int, timeout: float = 180.0) -> None:
        wait_until(lambda: self.alive_workers() >= count, timeout=timeout, interval=0.5,
                   message=f"{count} Spark workers registered\n{self.log_text('master')}")

    def active_apps(self) -> list[dict]:
        return self.state().get("activeapps", [])

    @staticmethod
    def executor_processes(app_id: str) -> list[int]:
        """Pids of the executor JVMs of application `app_id` on this machine."""
        pids = []
        for proc in Path("/proc").iterdir():
            try:
                command = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"CoarseGrainedExecutorBackend" in command and app_id.encode() in command:
                pids.append(int(proc.name))
        return pids

    def kill_worker(self, index: int) -> None:
        """kill -9 the worker's JVM (its executor notices the lost worker and exits too)."""
        process = self.workers[index]
        if process is not None:
            process.kill()
            process.wait(10)
            self.workers[index] = None

    def restart_master(self, timeout: float = 180.0) -> None:
        """kill -9 the master, then a new one on the same ports, without recovery state: it knows
        no application, and kills the executors of the old ones when their workers re-register."""
        self.master.kill()
        self.master.wait(10)
        self.start_master(timeout)

    def log_text(self, name: str) -> str:
        path = self.directory / f"{name}.log"
        return path.read_text(errors="replace")[-5000:] if path.exists() else ""

    def stop(self) -> None:
        for process in [*self.workers, self.master]:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in [*self.workers, self.master]:
            if process is not None:
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)
