"""The Worker: runs the connectors and tasks a herder gives it, and reports their statuses.

A connector instance lives on the herder's thread: `start()` is called with its config and
its target state (STARTED, PAUSED or STOPPED; a paused or stopped connector is not running,
as in Connect), `task_configs()` when the herder asks for them. A task runs on its own
thread (source_task.py, sink_task.py). Stopping tasks asks them all at once and waits up to
`task.shutdown.graceful.timeout.ms` for each; a task that does not stop in time is
abandoned (its thread is a daemon) and reported, as Connect does.

Statuses (connector and task: RUNNING, PAUSED, STOPPED, FAILED with the trace, UNASSIGNED)
go to the status store with this worker's id and the group generation.
"""
from __future__ import annotations

import logging
import threading
import time
import traceback

from engine.connect.api import ConnectorContext, SinkConnector
from engine.connect.config_store import PAUSED as TARGET_PAUSED, STOPPED as TARGET_STOPPED
from engine.connect.connector_config import tasks_max
from engine.connect.plugins import Plugins
from engine.connect.sink_task import WorkerSinkTask
from engine.connect.source_task import WorkerSourceTask
from engine.connect.status_store import FAILED, PAUSED, RUNNING, STOPPED, UNASSIGNED, Status

log = logging.getLogger("engine.connect.worker")


class _Context(ConnectorContext):
    def __init__(self, worker: "Worker", name: str) -> None:
        self.worker, self.name = worker, name

    def request_task_reconfiguration(self) -> None:
        if self.worker.on_reconfiguration is not None:
            self.worker.on_reconfiguration(self.name)

    def raise_error(self, error: Exception) -> None:
        self.worker.connector_failed(self.name, error)


class WorkerConnector:
    def __init__(self, name: str, connector, config: dict[str, str]) -> None:
        self.name, self.connector, self.config = name, connector, config
        self.started = False
        self.failed = False

    @property
    def is_sink(self) -> bool:
        return isinstance(self.connector, SinkConnector)


class Worker:
    def __init__(self, config, worker_id: str, plugins: Plugins, offset_store, status_store) -> None:
        self.config = config
        self.worker_id = worker_id
        self.plugins = plugins
        self.offset_store = offset_store
        self.status_store = status_store
        self.connectors: dict[str, WorkerConnector] = {}
        self.tasks: dict[tuple[str, int], WorkerSourceTask | WorkerSinkTask] = {}
        self.generation = 0
        self.shutting_down = False
        self.on_reconfiguration = None       # herder callback: (connector name) -> None
        self._lock = threading.Lock()

    # --- connectors ---------------------------------------------------------------------------

    def _connector_status(self, name: str, state: str, trace: str | None = None) -> None:
        self.status_store.put_connector(name, Status(state, self.worker_id, self.generation, trace))

    def start_connector(self, name: str, config: dict[str, str], target_state: str) -> bool:
        """Instantiate and (unless paused or stopped) start it; FAILED with the trace if that raises."""
        if name in self.connectors:
            return True
        try:
            connector = self.plugins.new_connector(config.get("connector.class", ""))
        except Exception:
            self._connector_status(name, FAILED, traceback.format_exc())
            log.error("Failed to create connector %s", name, exc_info=True)
            return False
        connector.initialize(_Context(self, name))
        self.connectors[name] = WorkerConnector(name, connector, config)
        return self.transition_connector(name, target_state)

    def transition_connector(self, name: str, target_state: str) -> bool:
        entry = self.connectors.get(name)
        if entry is None or entry.failed:
            return False
        if target_state in (TARGET_PAUSED, TARGET_STOPPED):
            self._stop_instance(entry)
            self._connector_status(name, STOPPED if target_state == TARGET_STOPPED else PAUSED)
            return True
        if not entry.started:
            try:
                entry.connector.start(self.config.providers.transform(entry.config))
                entry.started = True
                log.info("Finished creating connector %s", name)
            except Exception:
                self.connector_failed(name, None, traceback.format_exc())
                return False
        self._connector_status(name, RUNNING)
        return True

    def connector_failed(self, name: str, error: Exception | None, trace: str | None = None) -> None:
        entry = self.connectors.get(name)
        if entry is not None:
            entry.failed = True
            self._stop_instance(entry)
        if trace is None and error is not None:
            trace = "".join(traceback.format_exception(error))
        log.error("Connector %s failed\n%s", name, trace)
        self._connector_status(name, FAILED, trace)

    def _stop_instance(self, entry: WorkerConnector) -> None:
        if entry.started:
            entry.started = False
            try:
                entry.connector.stop()
            except Exception:
                log.exception("Error while shutting down connector %s", entry.name)

    def stop_connector(self, name: str, *, unassigned: bool = True) -> None:
        entry = self.connectors.pop(name, None)
        if entry is None:
            return
        self._stop_instance(entry)
        log.info("Stopped connector %s", name)
        if unassigned and not entry.failed and not self.shutting_down:
            self._connector_status(name, UNASSIGNED)

    def connector_task_configs(self, name: str) -> list[dict[str, str]] | None:
        """The task configs of a running connector (None if it is not running here)."""
        entry = self.connectors.get(name)
        if entry is None or not entry.started:
            return None
        maximum = tasks_max(entry.config)
        configs = entry.connector.task_configs(maximum) or []
        if len(configs) > maximum:
            raise ValueError(f"The connector {name} has generated {len(configs)} tasks, which is greater than "
                             f"{maximum}, the maximum number of tasks it is configured to create.")
        task_class = entry.connector.task_class()
        result = []
        for config in configs:
            merged = {str(k): str(v) for k, v in config.items()}
            merged["task.class"] = f"{task_class.__module__}.{task_class.__qualname__}"
            if entry.is_sink:
                for key in ("topics", "topics.regex"):
                    if entry.config.get(key):
                        merged[key] = entry.config[key]
            result.append(merged)
        return self.config.providers.reverse(entry.config, result)   # no secret stored resolved

    # --- tasks ----------------------------------------------------------------------------------

    def start_task(self, task_id: tuple[str, int], connector_config: dict[str, str], task_config: dict[str, str],
                   target_state: str) -> bool:
        if task_id in self.tasks:
            return True
        try:
            plugin = self.plugins.connector(connector_config.get("connector.class", ""))
            task = plugin.cls().task_class()()
            runner_class = WorkerSinkTask if issubclass(plugin.cls, SinkConnector) else WorkerSourceTask
            providers = self.config.providers
            runner = runner_class(self, task_id, task, providers.transform(connector_config),
                                  providers.transform(task_config),
                                  PAUSED if target_state == TARGET_PAUSED else RUNNING, self.generation)
        except Exception:
            log.error("Failed to start task %s-%d", *task_id, exc_info=True)
            self.status_store.put_task(task_id, Status(FAILED, self.worker_id, self.generation,
                                                       traceback.format_exc()))
            return False
        self.tasks[task_id] = runner
        runner.start()
        return True

    def transition_tasks(self, connector: str, target_state: str) -> None:
        state = PAUSED if target_state == TARGET_PAUSED else RUNNING
        for task_id, runner in list(self.tasks.items()):
            if task_id[0] == connector:
                runner.transition(state)

    def stop_tasks(self, task_ids: list[tuple[str, int]]) -> None:
        """Stop them together and wait for each, at most task.shutdown.graceful.timeout.ms."""
        runners = [self.tasks.pop(t) for t in task_ids if t in self.tasks]
        for runner in runners:
            runner.stop()
        deadline = time.monotonic() + self.config["task.shutdown.graceful.timeout.ms"] / 1000
        for runner in runners:
            if not runner.join(max(0.0, deadline - time.monotonic())):
                log.error("Graceful stop of task %s failed.", runner.id_text)

    def task_failed(self, task_id: tuple[str, int]) -> bool:
        runner = self.tasks.get(task_id)
        return runner is not None and runner.failed

    def stop(self) -> None:
        self.stop_tasks(list(self.tasks))
        for name in list(self.connectors):
            self.stop_connector(name)
