"""What the REST API asks of a herder, with Kafka Connect's answers and messages
(AbstractHerder, DistributedHerder). Reads of statuses answer from any worker; changes run
on the herder's thread (`submit`) and on the leader only (NotLeader elsewhere, which the REST
layer forwards). Mixed into Herder (herder.py), whose state these methods use.
"""
from __future__ import annotations

import logging

from kafka.admin import KafkaAdminClient
from kafka.structs import OffsetAndMetadata, TopicPartition
import kafka.errors as Errors

from engine.connect import connector_config
from engine.connect.api import ConnectError, SinkConnector
from engine.connect.config_store import STARTED, STOPPED, RestartRequest
from engine.connect.errors import AlreadyExists, BadRequest, ConnectRestError, NotAssigned, NotFound
from engine.connect.plugins import PluginNotFound
from engine.connect.status_store import FAILED, RESTARTING
from engine.client_settings import kafka_python_settings

log = logging.getLogger("engine.connect.herder")

_STOPPED_FIRST = ("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for "
                  "the specified connector by issuing a 'PUT' request to the '/connectors/{0}/stop' endpoint")


class HerderRequests:
    # --- reads -------------------------------------------------------------------------------

    def connectors(self) -> list[str]:
        return self.config_store.snapshot().connectors()

    def _config(self, name: str) -> dict[str, str]:
        config = self.config_store.snapshot().connector_configs.get(name)
        if config is None:
            raise NotFound(f"Connector {name} not found")
        return config

    def connector_type(self, config: dict[str, str]) -> str:
        try:
            plugin = self.plugins.connector(config.get("connector.class", ""))
        except PluginNotFound:
            return "unknown"
        return "sink" if issubclass(plugin.cls, SinkConnector) else "source"

    def connector_info(self, name: str) -> dict:
        snapshot = self.config_store.snapshot()
        config = snapshot.connector_configs.get(name)
        if config is None:
            raise NotFound(f"Connector {name} not found")
        return {"name": name, "config": dict(config),
                "tasks": [{"connector": c, "task": t} for c, t in snapshot.tasks(name)],
                "type": self.connector_type(config)}

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._config(name))

    def connector_status(self, name: str) -> dict:
        status = self.status_store.connector(name)
        if status is None:
            raise NotFound(f"No status found for connector {name}")
        config = self.config_store.snapshot().connector_configs.get(name, {})
        tasks = [{"id": index, **s.info()} for index, s in sorted(self.status_store.connector_tasks(name).items())]
        return {"name": name, "connector": status.info(), "tasks": tasks, "type": self.connector_type(config)}

    def task_status(self, name: str, task: int) -> dict:
        status = self.status_store.task((name, task))
        if status is None:
            raise NotFound(f"No status found for task {name}-{task}")
        return {"id": task, **status.info()}

    def task_configs(self, name: str) -> list[dict]:
        snapshot = self.config_store.snapshot()
        if name not in snapshot.connector_configs:
            raise NotFound(f"Connector {name} not found")
        return [{"id": {"connector": name, "task": i}, "config": dict(config)}
                for i, config in enumerate(snapshot.task_configs.get(name, []) if name not in snapshot.inconsistent
                                           else [])]

    def active_topics(self, name: str) -> dict:
        return {name: {"topics": self.status_store.active_topics(name)}}

    # --- plugins and validation ----------------------------------------------------------------

    def validate(self, props: dict) -> dict:
        try:
            return connector_config.validate(self.plugins, props,
                                             worker_group=self.config.values.get("group.id"))
        except PluginNotFound as exc:
            raise NotFound(str(exc)) from None
        except connector_config.ConfigValidationError as exc:
            raise BadRequest(str(exc)) from None

    def plugin_config(self, name: str) -> list[dict]:
        try:
            return connector_config.plugin_config(self.plugins, name)
        except PluginNotFound:
            raise NotFound(f"Unknown plugin {name}.") from None

    # --- changes (leader) ----------------------------------------------------------------------

    def put_connector_config(self, name: str, config: dict, *, allow_replace: bool,
                             initial_state: str | None = None) -> tuple[bool, dict]:
        def run():
            self.require_leader("Only the leader can set connector configs.")
            exists = name in self.config_store.snapshot().connector_configs
            if exists and not allow_replace:
                raise AlreadyExists(f"Connector {name} already exists")
            infos = self.validate(config)
            try:
                connector_config.raise_for_errors(infos)
            except connector_config.ConfigValidationError as exc:
                raise BadRequest(str(exc)) from None
            state = None if exists else (initial_state or None)
            if state == "RUNNING":
                state = STARTED
            if state == STOPPED:
                self.config_store.put_task_configs(name, [])
            self.config_store.put_connector_config(name, {k: str(v) for k, v in config.items()}, state)
            return not exists, self.connector_info(name)
        return self.submit(run)

    def patch_connector_config(self, name: str, patch: dict) -> dict:
        def run():
            self.require_leader("Only the leader can set connector configs.")
            current = dict(self._config(name))
            for key, value in patch.items():
                if value is None:
                    current.pop(key, None)
                else:
                    current[key] = value
            return self.put_connector_config(name, current, allow_replace=True)[1]
        return self.submit(run)

    def delete_connector(self, name: str) -> None:
        def run():
            self.require_leader("Only the leader can delete connector configs.")
            self._config(name)
            self.config_store.remove_connector_config(name)
            self.status_store.put_connector(name, None)
            for index in self.status_store.connector_tasks(name):
                self.status_store.put_task((name, index), None)
            self.status_store.delete_topics(name)
        self.submit(run)

    def put_task_configs(self, name: str, configs: list[dict]) -> None:
        """The internal endpoint a connector's worker forwards its task configs to."""
        def run():
            self.require_leader("Only the leader may write task configurations.")
            self._config(name)
            self.config_store.put_task_configs(name, [{str(k): str(v) for k, v in c.items()} for c in configs])
        self.submit(run)

    def _set_target_state(self, name: str, state: str) -> None:
        def run():
            self.require_leader("Only the leader can transition connectors.")
            snapshot = self.config_store.snapshot()
            if name not in snapshot.connector_configs:
                raise NotFound(f"Unknown connector {name}")
            if state == STOPPED:
                self.config_store.put_task_configs(name, [])
            self.config_store.put_target_state(name, state)
        self.submit(run)

    def pause_connector(self, name: str) -> None:
        self._set_target_state(name, "PAUSED")

    def resume_connector(self, name: str) -> None:
        self._set_target_state(name, STARTED)

    def stop_connector(self, name: str) -> None:
        self._set_target_state(name, STOPPED)

    def restart_connector(self, name: str, *, include_tasks: bool, only_failed: bool) -> dict | None:
        request = RestartRequest(name, only_failed, include_tasks)

        def run():
            self.require_leader("Only the leader can process restart requests.")
            if name not in self.config_store.snapshot().connector_configs:
                raise NotFound(f"Unknown connector: {name}")
            if self.status_store.connector(name) is None and (include_tasks or only_failed):
                raise NotFound(f"Status for connector {name} not found")
            answer = self.restart_state(request) if (include_tasks or only_failed) else None
            self.config_store.put_restart_request(request)      # each owner marks its part RESTARTING
            return answer
        return self.submit(run)

    def restart_task(self, name: str, task: int) -> None:
        def run():
            snapshot = self.config_store.snapshot()
            if name not in snapshot.connector_configs:
                raise NotFound(f"Unknown connector: {name}")
            if (name, task) not in snapshot.tasks(name):
                raise NotFound(f"Unknown task: {name}-{task}")
            if (name, task) in self.running_tasks:
                self.worker.stop_tasks([(name, task)])
                with self._lock:
                    self.running_tasks.discard((name, task))
                self._start_task((name, task))
                return
            if self.is_leader():
                raise NotAssigned("Cannot restart task since it is not assigned to this member",
                                  self.membership.owner_url((name, task)))
            raise NotAssigned("Cannot restart task since it is not assigned to this member", self.leader_url)
        self.submit(run)

    def reset_active_topics(self, name: str) -> None:
        self._config(name)
        self.status_store.delete_topics(name)

    def restart_plan(self, request: RestartRequest) -> tuple[bool, list[tuple[str, int]]]:
        """Connect's RestartPlan: the connector and the tasks a restart request covers."""
        status = self.status_store.connector(request.connector)
        connector = not request.only_failed or (status is not None and status.state == FAILED)
        tasks = []
        if request.include_tasks:
            for index, task_status in sorted(self.status_store.connector_tasks(request.connector).items()):
                if not request.only_failed or task_status.state == FAILED:
                    tasks.append((request.connector, index))
        return connector, tasks

    def restart_state(self, request: RestartRequest) -> dict:
        """Connect's answer to a restart: the statuses now, RESTARTING where the plan restarts
        (built from the plan, so a worker that restarts a task at once does not change it)."""
        state = self.connector_status(request.connector)
        connector, tasks = self.restart_plan(request)
        if connector:
            state["connector"]["state"] = RESTARTING
        planned = {index for _, index in tasks}
        for task in state["tasks"]:
            if task["id"] in planned:
                task["state"] = RESTARTING
        return state

    # --- offsets (KIP-875) -----------------------------------------------------------------------

    def _admin(self) -> KafkaAdminClient:
        return KafkaAdminClient(client_id="connect-offsets-admin", request_timeout_ms=30000,
                                **kafka_python_settings(self.config.client_settings("admin")))

    def connector_offsets(self, name: str) -> dict:
        config = self._config(name)
        if self.connector_type(config) != "sink":
            self.offset_store.refresh(10)
            return {"offsets": [{"partition": p, "offset": o} for p, o in self.offset_store.connector_offsets(name)]}
        admin = self._admin()
        try:
            committed = admin.list_group_offsets(f"connect-{name}").get(f"connect-{name}", {})
        finally:
            admin.close()
        return {"offsets": [{"partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                             "offset": {"kafka_offset": meta.offset}}
                            for tp, meta in sorted(committed.items()) if meta.offset >= 0]}

    def _check_stopped(self, name: str) -> dict[str, str]:
        snapshot = self.config_store.snapshot()
        config = snapshot.connector_configs.get(name)
        if config is None:
            raise NotFound(f"Connector {name} not found")
        if snapshot.target_state(name) != STOPPED or snapshot.task_configs.get(name):
            raise BadRequest(_STOPPED_FIRST.format(name))
        return config

    def alter_offsets(self, name: str, offsets: list[dict]) -> dict:
        def run():
            self.require_leader("Only the leader can process external offsets modification requests")
            config = self._check_stopped(name)
            self._modify_offsets(name, config, offsets, reset=False)
            return {"message": "The offsets for this connector have been altered successfully"}
        return self.submit(run)

    def reset_offsets(self, name: str) -> dict:
        def run():
            self.require_leader("Only the leader can process external offsets modification requests")
            config = self._check_stopped(name)
            self._modify_offsets(name, config, None, reset=True)
            return {"message": "The offsets for this connector have been reset successfully"}
        return self.submit(run)

    def _modify_offsets(self, name: str, config: dict[str, str], offsets: list[dict] | None, *, reset: bool) -> None:
        connector = self.plugins.connector(config.get("connector.class", "")).cls()
        sink = isinstance(connector, SinkConnector)
        try:
            if sink:
                pairs = {} if reset else _sink_offsets(offsets)
                connector.alter_offsets(config, pairs)
                self._modify_sink_offsets(name, pairs, reset=reset)
            else:
                if reset:
                    pairs = [(p, None) for p, _ in self.offset_store.connector_offsets(name)]
                else:
                    pairs = _source_offsets(offsets)
                connector.alter_offsets(config, pairs)
                self.offset_store.put(name, pairs)
        except ConnectError as exc:
            raise BadRequest(str(exc)) from None

    def _modify_sink_offsets(self, name: str, pairs: dict, *, reset: bool) -> None:
        group = f"connect-{name}"
        admin = self._admin()
        try:
            if reset:
                try:
                    admin.delete_groups([group])
                except (Errors.GroupIdNotFoundError, Errors.GroupNotEmptyError) as exc:
                    if isinstance(exc, Errors.GroupNotEmptyError):
                        raise ConnectRestError("Failed to reset offsets for connector - it is possible that the "
                                               "connector's consumer group is still active") from None
                return
            to_set = {tp: OffsetAndMetadata(o, "", -1) for tp, o in pairs.items() if o is not None}
            to_delete = [tp for tp, o in pairs.items() if o is None]
            if to_set:
                admin.alter_group_offsets(group, to_set)
            if to_delete:
                admin.delete_group_offsets(group, to_delete)
        except Errors.KafkaError as exc:
            raise ConnectRestError(f"Failed to alter consumer group offsets for connector {name}: {exc}") from None
        finally:
            admin.close()


def _source_offsets(offsets: list[dict]) -> list[tuple[dict, dict | None]]:
    pairs = []
    for entry in offsets:
        partition, offset = entry.get("partition"), entry.get("offset")
        if not isinstance(partition, dict):
            raise BadRequest("Source connector offsets: every entry needs a 'partition' object")
        if offset is not None and not isinstance(offset, dict):
            raise BadRequest("Source connector offsets: an 'offset' is an object or null")
        for value in list(partition.values()) + list((offset or {}).values()):
            if isinstance(value, (dict, list)):
                raise BadRequest("Offsets may only contain primitive types as values")
        pairs.append((partition, offset))
    return pairs


def _sink_offsets(offsets: list[dict]) -> dict:
    pairs = {}
    for entry in offsets:
        partition, offset = entry.get("partition") or {}, entry.get("offset")
        topic, index = partition.get("kafka_topic"), partition.get("kafka_partition")
        if not isinstance(topic, str) or not isinstance(index, int) or isinstance(index, bool):
            raise BadRequest("Failed to parse the following Kafka partition value in the provided offsets: "
                             f"'{partition}'. Partition values for sink connectors need to be integers.")
        if offset is None:
            pairs[TopicPartition(topic, index)] = None
            continue
        value = offset.get("kafka_offset") if isinstance(offset, dict) else None
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise BadRequest(f"Failed to parse the following Kafka offset value in the provided offsets: "
                             f"'{offset}'. Offset values for sink connectors need to be integers.")
        pairs[TopicPartition(topic, index)] = value
    return pairs
