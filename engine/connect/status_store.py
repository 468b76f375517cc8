"""Connector, task and topic statuses: in the status topic in Kafka Connect's format
(KafkaStatusBackingStore), or in memory for a standalone worker.

Records (string keys, JSON values with schemas disabled):
- `status-connector-<name>` and `status-task-<name>-<n>`:
  `{"state": "RUNNING", "trace": null, "worker_id": "host:port", "generation": 7}`, states
  UNASSIGNED, RUNNING, PAUSED, STOPPED, FAILED, RESTARTING, DESTROYED (Connect's);
- `status-topic-<topic>:connector-<name>`:
  `{"topic": {"name": t, "connector": c, "task": n, "discoverTimestamp": ms}}` - the topics a
  connector has used (KIP-558); a tombstone forgets one.

Every worker writes its own connectors' and tasks' statuses and reads everyone's, so the REST
API answers a status from any worker. A status from an older group generation never replaces a
newer one (a worker that lost its work late cannot overwrite its successor's RUNNING).

Thread-safety: the maps change under `_lock` (the reader thread); reads copy under it.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass

from engine.connect.topic_log import CompactedTopicStore

log = logging.getLogger("engine.connect.status_store")

UNASSIGNED, RUNNING, PAUSED, STOPPED, FAILED, RESTARTING, DESTROYED = (
    "UNASSIGNED", "RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING", "DESTROYED")


@dataclass(frozen=True)
class Status:
    state: str
    worker_id: str
    generation: int
    trace: str | None = None

    def info(self) -> dict:
        out = {"state": self.state, "worker_id": self.worker_id}
        if self.trace:
            out["trace"] = self.trace
        return out


class StatusStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.connectors: dict[str, Status] = {}
        self.tasks: dict[tuple[str, int], Status] = {}
        self.topics: dict[str, dict[str, dict]] = {}       # connector -> topic -> record

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def refresh(self, timeout: float = 30.0) -> bool:
        return True

    def connector(self, name: str) -> Status | None:
        with self._lock:
            return self.connectors.get(name)

    def task(self, task: tuple[str, int]) -> Status | None:
        with self._lock:
            return self.tasks.get(task)

    def connector_tasks(self, name: str) -> dict[int, Status]:
        with self._lock:
            return {t[1]: s for t, s in self.tasks.items() if t[0] == name}

    def active_topics(self, name: str) -> list[str]:
        with self._lock:
            return sorted(self.topics.get(name, {}))

    # --- writes ---------------------------------------------------------------------------

    def put_connector(self, name: str, status: Status | None) -> None:
        self._store(f"status-connector-{name}", status)

    def put_task(self, task: tuple[str, int], status: Status | None) -> None:
        self._store(f"status-task-{task[0]}-{task[1]}", status)

    def put_topic(self, connector: str, topic: str, task: int) -> None:
        with self._lock:
            if topic in self.topics.get(connector, {}):
                return
        self._write(f"status-topic-{topic}:connector-{connector}",
                    {"topic": {"name": topic, "connector": connector, "task": task,
                               "discoverTimestamp": int(time.time() * 1000)}})

    def delete_topics(self, connector: str) -> None:
        for topic in self.active_topics(connector):
            self._write(f"status-topic-{topic}:connector-{connector}", None)

    def _store(self, key: str, status: Status | None) -> None:
        self._write(key, None if status is None else {"state": status.state, "trace": status.trace,
                                                      "worker_id": status.worker_id,
                                                      "generation": status.generation})

    def _write(self, key: str, value: dict | None) -> None:
        self._record(key, value)

    # --- applying records -------------------------------------------------------------------

    def _record(self, key: str, value: dict | None) -> None:
        with self._lock:
            if key.startswith("status-connector-"):
                self._set(self.connectors, key[len("status-connector-"):], value)
            elif key.startswith("status-task-"):
                name, _, index = key[len("status-task-"):].rpartition("-")
                if index.isdigit():
                    self._set(self.tasks, (name, int(index)), value)
            elif key.startswith("status-topic-"):
                topic, sep, connector = key[len("status-topic-"):].rpartition(":connector-")
                if sep:
                    if value is None:
                        self.topics.get(connector, {}).pop(topic, None)
                    else:
                        self.topics.setdefault(connector, {})[topic] = value.get("topic", {})

    @staticmethod
    def _set(statuses: dict, key, value: dict | None) -> None:
        if value is None:
            statuses.pop(key, None)
            return
        try:
            status = Status(str(value["state"]), str(value.get("worker_id", "")), int(value.get("generation", 0)),
                            value.get("trace"))
        except (KeyError, TypeError, ValueError):
            log.warning("Ignoring a status record of an unexpected shape for %s", key)
            return
        current = statuses.get(key)
        if current is not None and current.worker_id != status.worker_id and current.generation > status.generation:
            return       # a late write from a worker of an older generation
        statuses[key] = status


class KafkaStatusStore(CompactedTopicStore, StatusStore):
    def __init__(self, topic: str, settings: dict[str, str], *, partitions: int, replication_factor: int,
                 client_id: str) -> None:
        super().__init__()
        self._in_flight: dict[str, int] = {}     # key -> own writes not acknowledged yet
        self._written: dict[str, int] = {}       # key -> offset of the own write acknowledged last
        self.attach_topic(topic, settings, partitions=partitions, replication_factor=replication_factor,
                          client_id=f"{client_id}-statuses", purpose="connector and task statuses")

    def _on_record(self, key: bytes | None, value: bytes | None, offset: int, partition: int) -> None:
        if key is None:
            return
        try:
            parsed = None if value is None else json.loads(value)
        except ValueError:
            log.warning("Ignoring a status record that is not JSON at %s-%d@%d", self.topic, partition, offset)
            return
        if parsed is None or isinstance(parsed, dict):
            name = key.decode("utf-8", errors="replace")
            with self._lock:
                # An older record read after this worker's own newer write must not undo it.
                stale = self._in_flight.get(name) or offset < self._written.get(name, -1)
            if not stale:
                self._record(name, parsed)

    def _write(self, key: str, value: dict | None) -> None:
        """Written asynchronously, as Connect does; applied locally at once so this worker's
        own answers do not wait for the round trip."""
        with self._lock:
            self._in_flight[key] = self._in_flight.get(key, 0) + 1
        self._record(key, value)
        data = None if value is None else json.dumps(value, separators=(",", ":")).encode()
        self.log.send(key.encode(), data).add_done_callback(lambda future: self._acknowledged(key, future))

    def _acknowledged(self, key: str, future) -> None:
        with self._lock:
            self._in_flight[key] -= 1
            if not self._in_flight[key]:
                del self._in_flight[key]
            if future.exception() is None:
                self._written[key] = max(self._written.get(key, -1), future.result())
