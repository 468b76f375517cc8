"""Writes for share groups (KIP-932): reset start offsets, delete a topic's offsets, delete the
group, change the group's share configs.

Each service checks its input (`InvalidInput`), changes the cluster through the gateway,
writes an audit log entry however it ends, and announces the change after commit. Kafka
refuses the first three while the group has members; the services refuse first, naming them.
"""
from __future__ import annotations

from collections.abc import Mapping

from django.template.defaultfilters import pluralize

from console.accounts.services import audited
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import InvalidInput, NotFound
from console.events import notify_on_commit
from console.groups.members import client_host_shown
from console.kafka_gateway import Gateway, GatewayError
from console.kafka_gateway.share_groups import SHARE_GROUP_CONFIGS
from console.kafka_gateway.share_records import ShareGroupInfo
from console.share_groups.reset import SharePlan, ShareResetSpec, share_reset_plan


def share_group_reset(*, cluster: Cluster, actor, group_id: str, spec: ShareResetSpec) -> SharePlan:
    with audited(actor=actor, cluster=cluster, action="share_group.reset_offsets", target=group_id,
                 details={"reset": spec.summary()}) as details:
        with cluster_gateway(cluster) as gw:
            plan = share_reset_plan(gw, cluster_name=cluster.name, group_id=group_id, spec=spec)
            if plan.refusal:
                raise InvalidInput(plan.refusal)
            failed = gw.share_groups.alter_offsets(group_id, coordinator=plan.coordinator, offsets={
                (r.topic, r.partition): r.new_start_offset for r in plan.rows})
            if failed:
                raise GatewayError(_failures("Kafka refused the new start offsets", failed))
        details.update(plan.audit_details())
    notify_on_commit("share_group.offsets_reset", {"cluster": cluster.pk, "group": group_id})
    return plan


def share_group_delete_offsets(*, cluster: Cluster, actor, group_id: str, topic: str, confirmation: str) -> None:
    """DeleteShareGroupOffsets for one topic: the group reads it afresh next time
    (share.auto.offset.reset)."""
    with audited(actor=actor, cluster=cluster, action="share_group.delete_offsets", target=group_id,
                 details={"topic": topic}):
        _confirmed(group_id, confirmation)
        with cluster_gateway(cluster) as gw:
            coordinator, info = _known_group(gw, cluster, group_id)
            _refuse_members(info, "deletes a share group's offsets")
            topics = {o.topic for o in gw.share_groups.offsets({group_id: coordinator}).offsets.get(group_id, [])
                      if o.start_offset >= 0}
            if topic not in topics:
                raise InvalidInput(f"{group_id} has no share offsets on {topic!r}.")
            failed = gw.share_groups.delete_offsets(group_id, coordinator=coordinator, topics=[topic])
            if failed:
                raise GatewayError(failed[topic])
    notify_on_commit("share_group.offsets_deleted", {"cluster": cluster.pk, "group": group_id, "topic": topic})


def share_group_delete(*, cluster: Cluster, actor, group_id: str, confirmation: str) -> None:
    with audited(actor=actor, cluster=cluster, action="share_group.delete", target=group_id, details={}):
        _confirmed(group_id, confirmation)
        with cluster_gateway(cluster) as gw:
            coordinator, info = _known_group(gw, cluster, group_id)
            _refuse_members(info, "deletes only share groups without members")
            failed = gw.groups.delete_groups({group_id: coordinator})
            if failed:
                raise GatewayError(failed[group_id])
    notify_on_commit("share_group.deleted", {"cluster": cluster.pk, "group": group_id})


def share_group_configs_alter(*, cluster: Cluster, actor, group_id: str, values: Mapping[str, str | None]) -> None:
    """Set the share configs given a value, reset those given None to the broker's."""
    unknown = sorted(set(values) - set(SHARE_GROUP_CONFIGS))
    if unknown:
        raise InvalidInput(f"Not a share group config: {', '.join(unknown)}.")
    changes = {name: value for name, value in values.items()}
    with audited(actor=actor, cluster=cluster, action="share_group.alter_configs", target=group_id,
                 details={"set": {k: v for k, v in changes.items() if v is not None},
                          "reset": sorted(k for k, v in changes.items() if v is None)}):
        with cluster_gateway(cluster) as gw:
            _known_group(gw, cluster, group_id)
            gw.share_groups.alter_configs(group_id, set_configs={k: v for k, v in changes.items() if v is not None},
                                          delete=[k for k, v in changes.items() if v is None])
    notify_on_commit("share_group.configs_altered", {"cluster": cluster.pk, "group": group_id})


def _confirmed(group_id: str, confirmation: str) -> None:
    if confirmation != group_id:
        raise InvalidInput("Type the group's id exactly to confirm.")


def _known_group(gw: Gateway, cluster: Cluster, group_id: str) -> tuple[int, ShareGroupInfo]:
    found = gw.groups.find_coordinators([group_id])
    if group_id not in found.found:
        raise GatewayError(f"No coordinator for group {group_id!r}: {found.errors.get(group_id, 'unknown')}")
    info = gw.share_groups.describe({group_id: found.found[group_id]})[group_id]
    if info.error is not None:
        if "GROUP_ID_NOT_FOUND" in info.error:
            raise NotFound(f"Cluster {cluster.name} has no share group {group_id!r}.")
        raise GatewayError(f"Share group {group_id!r} could not be described: {info.error}")
    return found.found[group_id], info


def _refuse_members(info: ShareGroupInfo, what: str) -> None:
    if info.members:
        names = "; ".join(f"{m.client_id} ({m.member_id}) on {client_host_shown(m.client_host)}" for m in info.members)
        raise InvalidInput(f"Kafka {what}, and {info.group_id} has {len(info.members)} "
                           f"member{pluralize(len(info.members))}: {names}.")


def _failures(what: str, failed: dict) -> str:
    shown = "; ".join(f"{t}-{p}: {why}" for (t, p), why in sorted(failed.items())[:5])
    more = f" (+{len(failed) - 5} more)" if len(failed) > 5 else ""
    return f"{what}: {shown}{more}"
