"""The life of one task on its own thread, shared by source and sink tasks: start the task,
report RUNNING, run until stopped, report FAILED with the trace if the task (or the
framework for it) raises, and stop the task. Pause and resume are target states the loop
reads between polls. Subclasses supply `_prepare`, `_execute` and `_finish`.
"""
from __future__ import annotations

import logging
import threading
import traceback

from engine.connect import converters
from engine.connect.status_store import FAILED, PAUSED, RUNNING, UNASSIGNED, Status

log = logging.getLogger("engine.connect.task")


class TaskRunner:
    kind = "WorkerTask"

    def __init__(self, worker, task_id: tuple[str, int], task, connector_config: dict[str, str],
                 task_config: dict[str, str], target_state: str, generation: int) -> None:
        self.worker = worker
        self.task_id = task_id
        self.connector = task_id[0]
        self.id_text = f"{task_id[0]}-{task_id[1]}"
        self.name = f"{self.kind}{{id={self.id_text}}}"
        self.task = task
        self.connector_config = connector_config
        self.task_config = task_config
        self.target_state = target_state
        self.generation = generation
        self.stopping = threading.Event()
        self.resumed = threading.Event()
        self.failed = False
        self.quiet = False          # stopped because it is gone (deleted connector, fewer tasks): no status
        self.flush_interval = worker.config["offset.flush.interval.ms"] / 1000
        self.flush_timeout = worker.config["offset.flush.timeout.ms"] / 1000
        self.key_converter = self._converter("key")
        self.value_converter = self._converter("value")
        self.thread = threading.Thread(target=self._run, name=f"task-{self.id_text}", daemon=True)

    def _converter(self, which: str):
        """The connector's converter if it names one, else the worker's (with its settings)."""
        prefix = f"{which}.converter"
        source = self.connector_config if self.connector_config.get(prefix) else self.worker.config.raw
        name = source.get(prefix) or self.worker.config[prefix]
        return converters.build(name, converters.prefixed(source, prefix), is_key=which == "key")

    def start(self) -> None:
        self.thread.start()

    def _status(self, state: str, trace: str | None = None) -> None:
        self.worker.status_store.put_task(self.task_id, Status(state, self.worker.worker_id, self.generation, trace))

    def _run(self) -> None:
        try:
            self._prepare()
            self.task.start(dict(self.task_config))
            log.info("%s Source task finished initialization and start" if self.kind == "WorkerSourceTask"
                     else "%s Sink task finished initialization and start", self.name)
            self._status(PAUSED if self.target_state == PAUSED else RUNNING)
            self._execute()
        except Exception:
            self.failed = True
            trace = traceback.format_exc()
            log.error("%s Task threw an uncaught and unrecoverable exception. Task is being killed and will not "
                      "recover until manually restarted\n%s", self.name, trace)
            self._status(FAILED, trace)
        finally:
            self._close()

    def _close(self) -> None:
        try:
            self._finish()
        except Exception:
            log.exception("%s Failed while finishing", self.name)
        try:
            self.task.stop()
        except Exception:
            log.exception("%s Task threw an exception while stopping", self.name)
        if not self.failed and not self.quiet and not self.worker.shutting_down:
            self._status(UNASSIGNED)

    def transition(self, target_state: str) -> None:
        if target_state == self.target_state:
            return
        self.target_state = target_state
        if target_state == PAUSED:
            self.resumed.clear()
            if not self.failed:
                self._status(PAUSED)
        else:
            self.resumed.set()
            if not self.failed:
                self._status(RUNNING)

    def _await_resume(self) -> None:
        self._on_pause()
        while self.target_state == PAUSED and not self.stopping.is_set():
            self.resumed.wait(0.2)
            self._while_paused()
        self._on_resume()

    def _on_pause(self) -> None:
        pass

    def _while_paused(self) -> None:
        pass

    def _on_resume(self) -> None:
        pass

    def stop(self) -> None:
        self.stopping.set()
        self.resumed.set()

    def join(self, timeout: float) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()

    # subclasses
    def _prepare(self) -> None:
        raise NotImplementedError

    def _execute(self) -> None:
        raise NotImplementedError

    def _finish(self) -> None:
        pass
