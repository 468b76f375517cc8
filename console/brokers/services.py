"""Writes for brokers: stopping and starting a bundled-engine broker, and dynamic broker configs
(IncrementalAlterConfigs on BROKER resources, checked with validate_only first)."""
from __future__ import annotations

from console.accounts.services import audited
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import InvalidInput, NotFound
from console.events import notify_on_commit
from console.kafka_gateway import EngineBroker


def broker_stop(*, cluster: Cluster, actor, broker_id: int) -> EngineBroker:
    return _broker_command(cluster=cluster, actor=actor, broker_id=broker_id, action="stop")


def broker_start(*, cluster: Cluster, actor, broker_id: int) -> EngineBroker:
    return _broker_command(cluster=cluster, actor=actor, broker_id=broker_id, action="start")


def _broker_command(*, cluster: Cluster, actor, broker_id: int, action: str) -> EngineBroker:
    with audited(actor=actor, cluster=cluster, action=f"broker.{action}", target=str(broker_id), details={}) as details:
        with cluster_gateway(cluster) as gw:
            live = [b.node_id for b in gw.metadata(topics=[]).brokers]
            endpoint = gw.engine_admin_endpoint(via_broker=min(live)) if live else None
            if endpoint is None:
                raise InvalidInput("This cluster does not advertise the engine's admin interface "
                                   "(engine.admin.endpoint): its brokers cannot be stopped or started from here.")
            if broker_id not in {b.node_id for b in gw.engine_brokers(endpoint)}:
                raise NotFound(f"The engine has no broker {broker_id}.")
            if action == "stop" and live == [broker_id]:
                # With no live broker left the console could not even find the admin interface again.
                raise InvalidInput(f"Broker {broker_id} is the last live broker; the console will not stop it.")
            change = gw.engine_broker_command(endpoint, broker_id, action)
        details["changed"] = change.changed
    event = "broker.stopped" if action == "stop" else "broker.started"
    notify_on_commit(event, {"cluster": cluster.pk, "broker": broker_id, "changed": change.changed})
    return change.broker


def _resource(broker_id: int, cluster_wide: bool) -> tuple[str, str]:
    """The BROKER resource name and what the audit log calls it."""
    return ("", "cluster-wide broker default") if cluster_wide else (str(broker_id), f"broker {broker_id}")


def broker_config_check(*, cluster: Cluster, broker_id: int, key: str, value: str | None,
                        cluster_wide: bool = False) -> None:
    """The cluster's own check of one dynamic broker config change (IncrementalAlterConfigs on
    a BROKER resource, validate_only) before the operator confirms. Changes nothing."""
    resource, _ = _resource(broker_id, cluster_wide)
    _config_value_check(key, value)
    with cluster_gateway(cluster) as gw:
        gw.alter_broker_configs(resource, set_configs={} if value is None else {key: value},
                                delete=[key] if value is None else [], validate_only=True)


def broker_config_set(*, cluster: Cluster, actor, broker_id: int, key: str, value: str | None,
                      cluster_wide: bool = False) -> None:
    """Set one dynamic config of a broker, or of every broker (`cluster_wide`: the resource
    ""), or remove that override (`value` None). Kafka decides what may change at run time and
    answers with its error; a sensitive value never reaches the audit log."""
    resource, label = _resource(broker_id, cluster_wide)
    # The value is written into the audit entry only once the cluster has said it is not a
    # password: a config it does not describe (a custom one, as Kafka treats it) counts as one.
    with audited(actor=actor, cluster=cluster, action="broker.config_set", target=f"{label} {key}",
                 details={"key": key, "scope": "cluster" if cluster_wide else "broker"}) as details:
        _config_value_check(key, value)
        with cluster_gateway(cluster) as gw:
            current = {c.name: c for c in gw.broker_config_details(broker_id)}
            entry = current.get(key)
            sensitive = entry is None or entry.is_sensitive
            details["value"] = "(sensitive)" if sensitive and value is not None else value
            details["old"] = None if entry is None else "(sensitive)" if entry.is_sensitive else entry.value
            gw.alter_broker_configs(resource, set_configs={} if value is None else {key: value},
                                    delete=[key] if value is None else [])
    notify_on_commit("broker.configs_updated", {"cluster": cluster.pk, "broker": None if cluster_wide else broker_id})


MAX_CONFIG_VALUE = 10_000


def _config_value_check(key: str, value: str | None) -> None:
    if not key or len(key) > 255:
        raise InvalidInput("Name the config to change.")
    if value is not None and (not value.strip() or len(value) > MAX_CONFIG_VALUE):
        raise InvalidInput(f"Give {key} a value of 1 to {MAX_CONFIG_VALUE} characters, or remove the override.")
