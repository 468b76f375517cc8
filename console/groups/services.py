"""Writes for consumer groups: reset offsets, delete a topic's offsets, delete the group, change
its configs.

Each service checks its input (`InvalidInput`), changes the cluster through the gateway,
writes an audit log entry however it ends, and announces the change after commit. Kafka
refuses the offset changes and the delete while the group has members; the services refuse
first, naming them. Configs change at any time: members get them at their next heartbeat.
"""
from __future__ import annotations

from collections.abc import Mapping

from console.accounts.services import audited
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import InvalidInput, NotFound
from console.events import notify_on_commit
from console.groups.reset import ResetPlan, ResetSpec, delete_refusal, group_coordinator, member_label, reset_plan
from console.kafka_gateway import Gateway, GatewayError
from console.kafka_gateway.group_records import DescribedGroup
from console.kafka_gateway.groups import CONSUMER_GROUP_CONFIGS


def group_reset_offsets(*, cluster: Cluster, actor, group_id: str, spec: ResetSpec) -> ResetPlan:
    with audited(actor=actor, cluster=cluster, action="group.reset_offsets", target=group_id,
                 details={"reset": spec.summary()}) as details:
        with cluster_gateway(cluster) as gw:
            plan = reset_plan(gw, cluster_name=cluster.name, group_id=group_id, spec=spec)
            if plan.refusal:
                raise InvalidInput(plan.refusal)
            failed = gw.groups.commit_offsets(group_id, coordinator=plan.coordinator, offsets={
                (r.topic, r.partition): (r.new_offset, r.metadata) for r in plan.rows})
            if failed:
                raise GatewayError(_failures("Kafka refused the new offsets", failed))
        details.update(plan.audit_details())
    notify_on_commit("group.offsets_reset", {"cluster": cluster.pk, "group": group_id})
    return plan


def group_delete_offsets(*, cluster: Cluster, actor, group_id: str, topic: str, confirmation: str) -> int:
    """OffsetDelete for every partition of `topic` the group committed on; returns how many."""
    with audited(actor=actor, cluster=cluster, action="group.delete_offsets", target=group_id,
                 details={"topic": topic}) as details:
        _confirmed(group_id, confirmation)
        with cluster_gateway(cluster) as gw:
            coordinator = group_coordinator(gw, group_id)
            group = _known_group(gw, cluster, group_id, coordinator)
            offsets = gw.groups.committed_offsets({group_id: coordinator}).offsets.get(group_id, {})
            partitions = sorted(tp for tp in offsets if tp[0] == topic)
            if not partitions:
                raise InvalidInput(f"{group_id} has no committed offsets on {topic!r}.")
            readers = [member_label(m) for m in group.members if topic in m.subscribed_topics]
            if readers:
                raise InvalidInput(f"Kafka keeps the offsets of a topic while members subscribe to it: "
                                   f"{'; '.join(readers)}.")
            failed = gw.groups.delete_offsets(group_id, coordinator=coordinator, partitions=partitions)
            if failed:
                raise GatewayError(_failures("Kafka kept some offsets", failed))
        details["partitions"] = len(partitions)
    notify_on_commit("group.offsets_deleted", {"cluster": cluster.pk, "group": group_id, "topic": topic})
    return len(partitions)


def group_delete(*, cluster: Cluster, actor, group_id: str, confirmation: str) -> None:
    with audited(actor=actor, cluster=cluster, action="group.delete", target=group_id, details={}):
        _confirmed(group_id, confirmation)
        with cluster_gateway(cluster) as gw:
            coordinator = group_coordinator(gw, group_id)
            group = _known_group(gw, cluster, group_id, coordinator)
            refusal = delete_refusal(group_id, group.members)
            if refusal:
                raise InvalidInput(refusal)
            failed = gw.groups.delete_groups({group_id: coordinator})
            if failed:
                raise GatewayError(failed[group_id])
    notify_on_commit("group.deleted", {"cluster": cluster.pk, "group": group_id})


def group_configs_alter(*, cluster: Cluster, actor, group_id: str, values: Mapping[str, str | None]) -> None:
    """Set the consumer group configs given a value, reset those given None to the brokers'.
    Kafka checks each value against its group.consumer.min/max.* and answers INVALID_CONFIG."""
    unknown = sorted(set(values) - set(CONSUMER_GROUP_CONFIGS))
    if unknown:
        raise InvalidInput(f"Not a consumer group config: {', '.join(unknown)}.")
    set_configs = {name: value for name, value in values.items() if value is not None}
    reset = sorted(name for name, value in values.items() if value is None)
    with audited(actor=actor, cluster=cluster, action="group.alter_configs", target=group_id,
                 details={"set": set_configs, "reset": reset}):
        with cluster_gateway(cluster) as gw:
            _known_group(gw, cluster, group_id, group_coordinator(gw, group_id))
            gw.groups.alter_configs(group_id, set_configs=set_configs, delete=reset)
    notify_on_commit("group.configs_altered", {"cluster": cluster.pk, "group": group_id})


def _confirmed(group_id: str, confirmation: str) -> None:
    if confirmation != group_id:
        raise InvalidInput("Type the group's id exactly to confirm.")


def _known_group(gw: Gateway, cluster: Cluster, group_id: str, coordinator: int) -> DescribedGroup:
    group = gw.groups.describe_groups({group_id: coordinator})[group_id]
    if group.error:
        raise GatewayError(f"Group {group_id!r} could not be described: {group.error}")
    if not group.is_known and not gw.groups.committed_offsets({group_id: coordinator}).offsets.get(group_id):
        raise NotFound(f"Cluster {cluster.name} has no consumer group {group_id!r}.")
    return group


def _failures(what: str, failed: dict) -> str:
    shown = "; ".join(f"{t}-{p}: {why}" for (t, p), why in sorted(failed.items())[:5])
    more = f" (+{len(failed) - 5} more)" if len(failed) > 5 else ""
    return f"{what}: {shown}{more}"
