"""Writes for brokers: remembering brokers seen, and stopping/starting a bundled-engine broker."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.utils import timezone

from console.accounts.services import audited
from console.brokers.models import KnownBroker
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import InvalidInput, NotFound
from console.events import notify_on_commit
from console.kafka_gateway import BrokerNode, EngineBroker

LAST_SEEN_PRECISION = timedelta(minutes=1)


def broker_record_seen(*, cluster: Cluster, brokers: Iterable[BrokerNode | EngineBroker]) -> None:
    """Remember these brokers (live in Metadata, or listed by the engine). At most three
    queries, and writes only for new brokers or changed addresses, since every page calls it."""
    seen = {b.node_id: b for b in brokers}
    if not seen:
        return
    now = timezone.now()
    known = {kb.broker_id: kb for kb in KnownBroker.objects.filter(cluster=cluster)}
    new = [KnownBroker(cluster=cluster, broker_id=i, host=b.host, port=b.port, rack=getattr(b, "rack", None) or "",
                       last_seen=now)
           for i, b in seen.items() if i not in known]
    if new:
        KnownBroker.objects.bulk_create(new, ignore_conflicts=True)
    for i, b in seen.items():
        kb = known.get(i)
        rack = getattr(b, "rack", None) or ""
        if kb is not None and (kb.host, kb.port, kb.rack) != (b.host, b.port, rack):
            kb.host, kb.port, kb.rack, kb.last_seen = b.host, b.port, rack, now
            kb.save(update_fields=["host", "port", "rack", "last_seen"])
    live = [i for i, b in seen.items() if isinstance(b, BrokerNode)]
    if live:   # a minute's precision is plenty, and spares most page views a write
        KnownBroker.objects.filter(cluster=cluster, broker_id__in=live,
                                   last_seen__lt=now - LAST_SEEN_PRECISION).update(last_seen=now)


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
