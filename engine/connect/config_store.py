"""Connector configs, task configs, target states and restart requests, in the config topic
in Kafka Connect's format (KafkaConfigBackingStore), or in memory for a standalone worker.

Records (string keys; JSON values, schemas disabled, as Connect's internal converter):
- `connector-<name>`: `{"properties": {...}}`; a tombstone deletes the connector.
- `task-<name>-<n>`: `{"properties": {...}}`, applied only once the commit below is read.
- `commit-<name>`: `{"tasks": N}`: task configs 0..N-1 written before it are the connector's
  tasks (a commit whose task configs are missing marks the connector inconsistent).
- `target-state-<name>`: `{"state": "STARTED"|"PAUSED", "state.v2": "STARTED"|"PAUSED"|"STOPPED"}`
  (a stopped connector reads PAUSED to workers that predate KIP-875).
- `restart-connector-<name>`: `{"include-tasks": bool, "only-failed": bool}` (KIP-745).

One writer: the group's leader (DistributedHerder forwards writes to it). The topic has one
partition, so the order of the log is the order of the changes; `offset` is the next offset
to read, which workers compare in their group metadata.

Thread-safety: records are applied on the log's reader thread under `_lock`; `snapshot()`
copies the state under it for the herder.
"""
from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field

from engine.connect.topic_log import CompactedTopicStore

log = logging.getLogger("engine.connect.config_store")

STARTED, PAUSED, STOPPED = "STARTED", "PAUSED", "STOPPED"


@dataclass(frozen=True)
class RestartRequest:
    connector: str
    only_failed: bool
    include_tasks: bool


@dataclass
class ClusterConfigState:
    """A consistent copy of the config topic's state at `offset`."""
    offset: int = -1
    connector_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    task_configs: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    target_states: dict[str, str] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)

    def connectors(self) -> list[str]:
        return sorted(self.connector_configs)

    def tasks(self, connector: str) -> list[tuple[str, int]]:
        if connector in self.inconsistent:
            return []
        return [(connector, i) for i in range(len(self.task_configs.get(connector, [])))]

    def all_tasks(self) -> list[tuple[str, int]]:
        return [task for c in self.connectors() for task in self.tasks(c)]

    def target_state(self, connector: str) -> str:
        return self.target_states.get(connector, STARTED)

    def task_config(self, task: tuple[str, int]) -> dict[str, str] | None:
        configs = self.task_configs.get(task[0], [])
        return configs[task[1]] if task[1] < len(configs) else None


class ConfigStore:
    """In memory (standalone); KafkaConfigStore below persists to the config topic."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = ClusterConfigState(offset=0)
        self._deferred: dict[str, dict[int, dict[str, str]]] = {}
        self.listeners: list = []       # called (kind, name) after a change: "connector", "tasks", ...

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            s = self._state
            return ClusterConfigState(s.offset, {k: dict(v) for k, v in s.connector_configs.items()},
                                      {k: [dict(t) for t in v] for k, v in s.task_configs.items()},
                                      dict(s.target_states), set(s.inconsistent))

    def refresh(self, timeout: float = 30.0) -> bool:
        return True

    # --- writes (standalone applies them at once) ----------------------------------------------

    def put_connector_config(self, name: str, config: dict[str, str], target_state: str | None = None) -> None:
        if target_state is not None:
            self._apply(f"target-state-{name}", _target_state_value(target_state))
        self._apply(f"connector-{name}", {"properties": config})

    def remove_connector_config(self, name: str) -> None:
        self._apply(f"connector-{name}", None)
        self._apply(f"target-state-{name}", None)

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        for i, config in enumerate(configs):
            self._apply(f"task-{name}-{i}", {"properties": config})
        self._apply(f"commit-{name}", {"tasks": len(configs)})

    def put_target_state(self, name: str, state: str) -> None:
        self._apply(f"target-state-{name}", _target_state_value(state))

    def put_restart_request(self, request: RestartRequest) -> None:
        self._apply(f"restart-connector-{request.connector}",
                    {"include-tasks": request.include_tasks, "only-failed": request.only_failed})

    def _apply(self, key: str, value) -> None:
        self._record(key, value)
        with self._lock:
            self._state.offset += 1

    # --- applying records ---------------------------------------------------------------------

    def _record(self, key: str, value) -> None:
        """Apply one record of the config topic's format to the state."""
        notify = None
        with self._lock:
            state = self._state
            if key.startswith("target-state-"):
                name = key[len("target-state-"):]
                if value is None:
                    state.target_states.pop(name, None)
                else:
                    state.target_states[name] = value.get("state.v2") or value.get("state") or STARTED
                notify = ("target_state", name)
            elif key.startswith("connector-"):
                name = key[len("connector-"):]
                if value is None:
                    state.connector_configs.pop(name, None)
                    state.task_configs.pop(name, None)
                    state.inconsistent.discard(name)
                    self._deferred.pop(name, None)
                else:
                    state.connector_configs[name] = dict(value.get("properties") or {})
                notify = ("connector", name)
            elif key.startswith("task-"):
                name, _, index = key[len("task-"):].rpartition("-")
                if value is not None and index.isdigit():
                    self._deferred.setdefault(name, {})[int(index)] = dict(value.get("properties") or {})
            elif key.startswith("commit-"):
                name = key[len("commit-"):]
                count = int((value or {}).get("tasks", 0))
                deferred = self._deferred.pop(name, {})
                previous = state.task_configs.get(name, [])
                configs = [deferred.get(i, previous[i] if i < len(previous) else None) for i in range(count)]
                if any(c is None for c in configs):
                    log.warning("Connector %s's task configs are incomplete after a commit of %d tasks; "
                                "it is inconsistent until its tasks are written again", name, count)
                    state.inconsistent.add(name)
                else:
                    state.task_configs[name] = configs
                    state.inconsistent.discard(name)
                notify = ("tasks", name)
            elif key.startswith("restart-connector-") and value is not None:
                name = key[len("restart-connector-"):]
                notify = ("restart", RestartRequest(name, bool(value.get("only-failed")),
                                                    bool(value.get("include-tasks"))))
        if notify is not None:
            for listener in self.listeners:
                listener(*notify)


def _target_state_value(state: str) -> dict:
    return {"state": PAUSED if state == STOPPED else state, "state.v2": state}


class KafkaConfigStore(CompactedTopicStore, ConfigStore):
    def __init__(self, topic: str, settings: dict[str, str], *, replication_factor: int, client_id: str) -> None:
        super().__init__()
        self.attach_topic(topic, settings, partitions=1, replication_factor=replication_factor,
                          client_id=f"{client_id}-configs", purpose="connector configurations", single_partition=True)

    def _on_record(self, key: bytes | None, value: bytes | None, offset: int, partition: int) -> None:
        if key is not None:
            try:
                parsed = None if value is None else json.loads(value)
            except ValueError:
                log.error("Ignoring a config record with a value that is not JSON at offset %d", offset)
                parsed = None if value is None else {}
            if parsed is None or isinstance(parsed, dict):
                self._record(key.decode("utf-8", errors="replace"), parsed)
        with self._lock:
            self._state.offset = offset + 1

    def _apply(self, key: str, value) -> None:
        """Write, wait for the broker's acknowledgement, then read it back (one writer)."""
        data = None if value is None else json.dumps(value, separators=(",", ":")).encode()
        self.log.send(key.encode(), data).result(30)
        if not self.log.read_to_end(30):
            raise TimeoutError(f"Timed out reading back the config topic {self.topic}")
