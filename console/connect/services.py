"""Writes for the Connect section, each audited (who, what, which Connect cluster and
connector, the result with Connect's message): registering Connect clusters (admins), and
creating, reconfiguring, pausing, resuming, restarting, stopping and deleting connectors and resetting their
offsets (operators). A connector config is checked with Connect's `config/validate` before it
is created, so a field's error is shown on the form and nothing is stored; secret values
(keys the plugin declares PASSWORD, or named like one) never reach the audit log.
"""
from __future__ import annotations

import re

from django.core.exceptions import ValidationError

from console.accounts.services import audited
from console.clusters.models import Cluster
from console.connect.client import ConnectApiError
from console.connect.masking import HIDDEN, masked
from console.connect.models import ConnectCluster
from console.connect.selectors import client_for, password_keys, validation_errors
from console.errors import ConsoleError, InvalidInput

BUNDLED_NAME = "local connect"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
ACTIONS = ("pause", "resume", "stop", "restart", "restart-failed", "restart-all", "delete", "reset-offsets")


class ConnectorConfigInvalid(InvalidInput):
    """Connect's `config/validate` found errors: `errors` maps each field to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        count = sum(len(e) for e in errors.values())
        super().__init__(f"Connect found {count} error{'s' if count != 1 else ''} in this configuration.")
        self.errors = errors


def _messages(exc: ValidationError) -> str:
    return " ".join(m for messages in exc.message_dict.values() for m in messages)


def connect_cluster_add(*, actor, cluster: Cluster, name: str, url: str, username: str = "",
                        password_env: str = "") -> ConnectCluster:
    with audited(actor=actor, cluster=cluster, action="connect.cluster.add", target=name,
                 details={"url": url, "username": username, "password_env": password_env}):
        connect = ConnectCluster(cluster=cluster, name=name.strip(), url=url.strip(), username=username,
                                 password_env=password_env)
        try:
            connect.full_clean()
        except ValidationError as exc:
            raise InvalidInput(_messages(exc)) from None
        connect.save()
        return connect


def connect_cluster_update(*, actor, connect: ConnectCluster, **changes: str) -> ConnectCluster:
    editable = ("name", "url", "username", "password_env")
    unknown = set(changes) - set(editable)
    if unknown:
        raise InvalidInput(f"Cannot edit {', '.join(sorted(unknown))}.")
    changed = {k: v for k, v in changes.items() if getattr(connect, k) != v}
    with audited(actor=actor, cluster=connect.cluster, action="connect.cluster.update", target=connect.name,
                 details={"changed": {k: [getattr(connect, k), v] for k, v in changed.items()}}):
        for key, value in changed.items():
            setattr(connect, key, value)
        try:
            connect.full_clean()
        except ValidationError as exc:
            connect.refresh_from_db()
            raise InvalidInput(_messages(exc)) from None
        connect.save()
    return connect


def connect_cluster_remove(*, actor, connect: ConnectCluster) -> None:
    """Forget a Connect cluster (its connectors keep running)."""
    with audited(actor=actor, cluster=connect.cluster, action="connect.cluster.remove", target=connect.name,
                 details={"url": connect.url}):
        connect.delete()


def connect_cluster_register_bundled(*, cluster: Cluster, url: str) -> ConnectCluster:
    """The worker `make run` starts, registered once for the bundled Kafka cluster at `url`."""
    connect = ConnectCluster.objects.filter(cluster=cluster, is_bundled=True).first()
    if connect is None:
        return ConnectCluster.objects.create(cluster=cluster, name=BUNDLED_NAME, url=url, is_bundled=True)
    if connect.url != url:
        connect.url = url
        connect.save(update_fields=["url"])
    return connect


# --- connectors -------------------------------------------------------------------------------------

def _check_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise InvalidInput("Give the connector a name.")
    if "/" in name or _CONTROL.search(name):
        raise InvalidInput("A connector name here may not hold '/' or control characters (the console's pages "
                           "and Connect's REST paths carry it).")
    if len(name) > 249:
        raise InvalidInput("A connector name is at most 249 characters.")
    return name


def connector_validate(*, connect: ConnectCluster, config: dict[str, str]) -> dict:
    """Connect's ConfigInfos for `config` (its `connector.class` names the plugin)."""
    plugin = (config.get("connector.class") or "").strip()
    if not plugin:
        raise InvalidInput("The configuration names no connector.class.")
    return client_for(connect).validate(plugin, config)


def connector_create(*, actor, connect: ConnectCluster, name: str, config: dict[str, str]) -> dict:
    """Validate with Connect, then create; ConnectorConfigInvalid carries each field's errors.
    The answer is Connect's (name, config, tasks, type) with the config's secrets hidden."""
    name = _check_name(name)
    config = {str(k): str(v) for k, v in config.items() if v is not None and str(v) != ""}
    config["name"] = name
    client = client_for(connect)
    secret_keys = password_keys(client, config.get("connector.class", ""))
    with audited(actor=actor, cluster=connect.cluster, action="connect.connector.create",
                 target=f"{connect.name}/{name}", details={"config": masked(config, secret_keys)}):
        infos = connector_validate(connect=connect, config=config)
        errors = validation_errors(infos)
        if errors:
            raise ConnectorConfigInvalid(errors)
        created = client.create(name, config)
    return {**created, "config": masked(created.get("config") or {}, secret_keys)}


def _with_current_secrets(config: dict, current: dict, name: str) -> dict[str, str]:
    """The config to send: values left as `[hidden]` are the current ones; the name stays."""
    config = {str(k): str(v) for k, v in config.items() if v is not None and str(v) != ""}
    if config.get("name", name) != name:
        raise InvalidInput(f"A connector's name cannot change ({name}): create a new connector instead.")
    unknown = sorted(k for k, v in config.items() if v == HIDDEN and k not in current)
    if unknown:
        raise InvalidInput(f"{', '.join(unknown)} reads {HIDDEN} but has no current value: give the value.")
    return {**{k: (current[k] if v == HIDDEN else v) for k, v in config.items()}, "name": name}


def connector_config_validate(*, connect: ConnectCluster, name: str, config: dict[str, str]) -> dict[str, list[str]]:
    """Connect's errors per field for a new config of the connector `name` (secrets as `[hidden]`
    stand for their current values); empty when Connect finds none."""
    current = client_for(connect).connector(_check_name(name)).get("config") or {}
    return validation_errors(connector_validate(connect=connect, config=_with_current_secrets(config, current, name)))


def connector_config_update(*, actor, connect: ConnectCluster, name: str, config: dict[str, str]) -> dict:
    """Validate with Connect, then replace the connector's whole config (Connect restarts it).
    The audit entry names the keys that changed and holds the config, secrets hidden."""
    name = _check_name(name)
    client = client_for(connect)
    with audited(actor=actor, cluster=connect.cluster, action="connect.connector.config",
                 target=f"{connect.name}/{name}", details={}) as details:
        current = client.connector(name).get("config") or {}
        config = _with_current_secrets(config, current, name)
        secret_keys = password_keys(client, config.get("connector.class", ""))
        details["changed"] = sorted(k for k in set(config) | set(current) if config.get(k) != current.get(k))
        details["config"] = masked(config, secret_keys | password_keys(client, current.get("connector.class", "")))
        errors = validation_errors(connector_validate(connect=connect, config=config))
        if errors:
            raise ConnectorConfigInvalid(errors)
        return client.put_config(name, config)


def connector_action(*, actor, connect: ConnectCluster, name: str, action: str, task: int | None = None) -> str:
    """Run one action on a connector (or one task: `restart` with `task`); the sentence to show."""
    if action not in ACTIONS:
        raise InvalidInput(f"Unknown action {action!r}: use one of {', '.join(ACTIONS)}.")
    client = client_for(connect)
    target = f"{connect.name}/{name}" + (f"/task {task}" if task is not None else "")
    with audited(actor=actor, cluster=connect.cluster, action=f"connect.connector.{action}", target=target,
                 details={} if task is None else {"task": task}) as details:
        try:
            return _run(client, name, action, task, details)
        except ConnectApiError as exc:
            if exc.status == 400 and action == "reset-offsets":
                raise ConsoleError(f"{exc} (stop the connector first: Connect resets offsets of stopped connectors "
                                   "only).", kafka_code=exc.kafka_code) from None
            raise


def _run(client, name: str, action: str, task: int | None, details: dict) -> str:
    if action == "restart" and task is not None:
        client.restart_task(name, task)
        return f"Task {task} of {name} restarted."
    if action in ("pause", "resume", "stop"):
        getattr(client, action)(name)
        return {"pause": f"{name} is pausing.", "resume": f"{name} is resuming.",
                "stop": f"{name} is stopping; its tasks shut down and its offsets can now be reset."}[action]
    if action.startswith("restart"):
        status = client.restart(name, include_tasks=action != "restart", only_failed=action == "restart-failed")
        restarting = [t for t in (status or {}).get("tasks", []) if t.get("state") == "RESTARTING"]
        details["restarting_tasks"] = [t.get("id") for t in restarting]
        if action == "restart-failed":
            return f"{name}: {len(restarting)} failed task{'s' if len(restarting) != 1 else ''} restarting."
        return f"{name} is restarting" + (f" with its {len(restarting)} tasks." if action == "restart-all" else ".")
    if action == "delete":
        client.delete(name)
        return f"{name} deleted."
    answer = client.reset_offsets(name) or {}
    return answer.get("message") or f"The offsets of {name} have been reset."
