"""Writes for brokers: stopping and starting a bundled-engine broker."""
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
