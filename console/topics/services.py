"""Writes for topics: create, delete, configs, partitions, preferred leader election, and
deleting records (Kafka's kafka-delete-records.sh; kafka-ui's "clear messages").

Each service checks its input (`InvalidInput`), changes the cluster through the gateway,
writes an audit log entry however it ends, and announces the change after commit.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from console import formatting
from console.accounts.services import audited
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import InvalidInput, NotFound
from console.events import notify_on_commit
from console.kafka_gateway import ElectionResult
from console.stats import is_preferred_leader

_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
MAX_PARTITIONS = 100_000


def topic_name_check(name: str) -> None:
    """Kafka's rule for topic names (kafka.common.internals.Topic.validate)."""
    if name in (".", "..") or not _LEGAL_TOPIC.match(name):
        raise InvalidInput(f"{name!r} is not a legal topic name: use 1-249 of a-z, A-Z, 0-9, '.', '_' and '-', "
                           "and not '.' or '..'.")


def _topic_create_input_check(*, name: str, partitions: int, replication_factor: int) -> None:
    topic_name_check(name)
    if not 1 <= partitions <= MAX_PARTITIONS:
        raise InvalidInput(f"Partitions must be between 1 and {MAX_PARTITIONS}.")
    if replication_factor < 1:
        raise InvalidInput("The replication factor must be at least 1.")


def topic_create_check(*, cluster: Cluster, name: str, partitions: int, replication_factor: int,
                       configs: Mapping[str, str] | None = None) -> None:
    """The cluster's own checks of a new topic (CreateTopics validate_only: name, counts, every
    config value), before the operator confirms; creates nothing, so nothing is audited."""
    _topic_create_input_check(name=name, partitions=partitions, replication_factor=replication_factor)
    with cluster_gateway(cluster) as gw:
        gw.create_topic(name=name, num_partitions=partitions, replication_factor=replication_factor,
                        configs=dict(configs or {}), validate_only=True)


def topic_create(*, cluster: Cluster, actor, name: str, partitions: int, replication_factor: int,
                 configs: Mapping[str, str] | None = None) -> None:
    configs = dict(configs or {})
    details = {"partitions": partitions, "replication_factor": replication_factor, "configs": configs}
    with audited(actor=actor, cluster=cluster, action="topic.create", target=name, details=details):
        _topic_create_input_check(name=name, partitions=partitions, replication_factor=replication_factor)
        with cluster_gateway(cluster) as gw:
            gw.create_topic(name=name, num_partitions=partitions, replication_factor=replication_factor,
                            configs=configs)
    notify_on_commit("topic.created", {"cluster": cluster.pk, "topic": name})


def topic_delete(*, cluster: Cluster, actor, name: str, confirmation: str) -> None:
    with audited(actor=actor, cluster=cluster, action="topic.delete", target=name, details={}):
        if confirmation != name:
            raise InvalidInput(f"Type the topic's name, {name}, to confirm the deletion.")
        with cluster_gateway(cluster) as gw:
            gw.delete_topic(name)
    notify_on_commit("topic.deleted", {"cluster": cluster.pk, "topic": name})


def topic_delete_records(*, cluster: Cluster, actor, name: str, partition: int | None, before_offset: int | None,
                         confirmation: str) -> dict[int, int]:
    """Delete the records below `before_offset` in one partition, or every record up to the
    high watermark (`before_offset` None) in one partition or, with `partition` None, in all.
    Returns each partition's new log start offset. Kafka refuses it on a compact-only topic
    (POLICY_VIOLATION) and past the high watermark (OFFSET_OUT_OF_RANGE)."""
    details = {"partition": partition, "before_offset": before_offset}
    with audited(actor=actor, cluster=cluster, action="topic.delete_records", target=name, details=details) as out:
        if confirmation != name:
            raise InvalidInput(f"Type the topic's name, {name}, to confirm deleting its records.")
        if before_offset is not None and (partition is None or before_offset < 0):
            raise InvalidInput("An offset needs a partition (all partitions are emptied up to their end), "
                               "and cannot be negative.")
        with cluster_gateway(cluster) as gw:
            topic = gw.metadata([name]).topic(name)
            if topic is None:
                raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
            ids = sorted(p.partition for p in topic.partitions)
            if partition is not None and partition not in ids:
                raise InvalidInput(f"Topic {name} has no partition {partition} (it has {len(ids)}).")
            wanted = {p: -1 if before_offset is None else before_offset      # -1: Kafka's "the high watermark"
                      for p in (ids if partition is None else [partition])}
            log_starts = gw.delete_records(name, wanted)
        out["log_start_offsets"] = {str(p): o for p, o in sorted(log_starts.items())}
    notify_on_commit("topic.records_deleted", {"cluster": cluster.pk, "topic": name})
    return log_starts


def topic_update_configs(*, cluster: Cluster, actor, name: str, configs: Mapping[str, str]) -> dict:
    """Make `configs` the topic's complete set of overrides: set what is new or changed and
    reset (IncrementalAlterConfigs DELETE) the overrides that are no longer listed.
    Returns {"set": {...}, "reset": [...]}."""
    with audited(actor=actor, cluster=cluster, action="topic.update_configs", target=name,
                 details={"configs": dict(configs)}) as details:
        with cluster_gateway(cluster) as gw:
            current = gw.topic_configs(name)
            if not current:
                raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
            known = {c.name for c in current}
            unknown = sorted(set(configs) - known)
            if unknown:
                raise InvalidInput(f"Unknown topic config: {', '.join(unknown)}.")
            overrides = {c.name: c.value for c in current if c.source == "DYNAMIC_TOPIC_CONFIG"}
            to_set = {k: v for k, v in configs.items() if overrides.get(k) != v}
            to_reset = sorted(k for k in overrides if k not in configs)
            gw.alter_topic_configs(name, set_configs=to_set, delete=to_reset)
        details.update(set=to_set, reset=to_reset)
    notify_on_commit("topic.configs_updated", {"cluster": cluster.pk, "topic": name})
    return {"set": to_set, "reset": to_reset}


def _partitions_now(gw, *, cluster: Cluster, name: str, total_partitions: int) -> int:
    """The topic's partition count, after checking that `total_partitions` can be asked for."""
    topic = gw.metadata([name]).topic(name)
    if topic is None:
        raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
    if total_partitions <= len(topic.partitions):
        raise InvalidInput(f"{name} already has {len(topic.partitions)} partitions; "
                           "the new total must be larger (Kafka cannot remove partitions).")
    if total_partitions > MAX_PARTITIONS:
        raise InvalidInput(f"At most {MAX_PARTITIONS} partitions.")
    return len(topic.partitions)


def topic_add_partitions_check(*, cluster: Cluster, name: str, total_partitions: int) -> int:
    """The cluster's own check (CreatePartitions validate_only) before the operator confirms;
    returns the current partition count. Changes nothing."""
    with cluster_gateway(cluster) as gw:
        current = _partitions_now(gw, cluster=cluster, name=name, total_partitions=total_partitions)
        gw.create_partitions(name, total_count=total_partitions, validate_only=True)
    return current


def topic_add_partitions(*, cluster: Cluster, actor, name: str, total_partitions: int) -> None:
    with audited(actor=actor, cluster=cluster, action="topic.add_partitions", target=name,
                 details={"total_partitions": total_partitions}) as details:
        with cluster_gateway(cluster) as gw:
            details["previous_partitions"] = _partitions_now(gw, cluster=cluster, name=name,
                                                             total_partitions=total_partitions)
            gw.create_partitions(name, total_count=total_partitions)
    notify_on_commit("topic.partitions_added", {"cluster": cluster.pk, "topic": name})


@dataclass(frozen=True)
class ElectionOutcome:
    requested: int                  # partitions whose leader was not their preferred replica
    already_preferred: int
    result: ElectionResult

    def summary(self) -> str:
        parts = [f"{formatting.counted(len(self.result.elected), 'partition')} moved to their preferred leader",
                 f"{self.already_preferred + self.result.not_needed} already led by it"]
        if self.result.failed:
            reasons = "; ".join(f"{t}-{p}: {why}" for t, p, why in self.result.failed[:5])
            more = f" (+{len(self.result.failed) - 5} more)" if len(self.result.failed) > 5 else ""
            parts.append(f"{len(self.result.failed)} failed: {reasons}{more}")
        return ", ".join(parts) + "."


def topic_elect_preferred_leaders(*, cluster: Cluster, actor, name: str | None = None) -> ElectionOutcome:
    """Preferred replica election for one topic, or for all topics when `name` is None.
    Only partitions led by another replica are sent, so a balanced cluster costs one
    Metadata request."""
    with audited(actor=actor, cluster=cluster, action="topic.elect_preferred_leaders", target=name or "*",
                 details={}) as details:
        with cluster_gateway(cluster) as gw:
            metadata = gw.metadata(None if name is None else [name])
            if name is not None and metadata.topic(name) is None:
                raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
            partitions = [p for t in metadata.topics for p in t.partitions]
            off_preferred: dict[str, list[int]] = {}
            for p in partitions:
                if not is_preferred_leader(p):
                    off_preferred.setdefault(p.topic, []).append(p.partition)
            result = gw.elect_preferred_leaders(off_preferred)
        requested = sum(map(len, off_preferred.values()))
        outcome = ElectionOutcome(requested=requested, already_preferred=len(partitions) - requested, result=result)
        details.update(elected=len(result.elected), failed=[f"{t}-{p}: {why}" for t, p, why in result.failed])
    notify_on_commit("topic.leaders_elected", {"cluster": cluster.pk, "topic": name})
    return outcome


MAX_CONFIG_VALUE = 10_000


@dataclass(frozen=True)
class ConfigChange:
    key: str
    old: str | None
    new: str | None                 # None: the override was removed (back to the default)


def topic_config_check(*, cluster: Cluster, name: str, key: str, value: str | None) -> None:
    """The cluster's own check of one config change (IncrementalAlterConfigs validate_only), for
    the diff before Save: a value the broker would refuse is refused here. Changes nothing."""
    if value is not None and (not value.strip() or len(value) > MAX_CONFIG_VALUE):
        raise InvalidInput(f"Give {key} a value of 1 to {MAX_CONFIG_VALUE} characters, or reset it to the default.")
    with cluster_gateway(cluster) as gw:
        if value is None:
            gw.alter_topic_configs(name, set_configs={}, delete=[key], validate_only=True)
        else:
            gw.alter_topic_configs(name, set_configs={key: value}, validate_only=True)


def topic_config_set(*, cluster: Cluster, actor, name: str, key: str, value: str | None) -> ConfigChange:
    """Set one topic config (IncrementalAlterConfigs SET), or remove its override when `value`
    is None (DELETE: back to the broker's or Kafka's default). The broker validates the value
    and answers with Kafka's error, which the page shows with the form still filled in."""
    with audited(actor=actor, cluster=cluster, action="topic.config_set", target=f"{name} {key}",
                 details={"key": key, "value": value}) as details:
        if value is not None and (not value.strip() or len(value) > MAX_CONFIG_VALUE):
            raise InvalidInput(f"Give {key} a value of 1 to {MAX_CONFIG_VALUE} characters, or reset it to the default.")
        with cluster_gateway(cluster) as gw:
            current = {c.name: c for c in gw.topic_configs(name)}
            if not current:
                raise NotFound(f"Cluster {cluster.name} has no topic {name!r}.")
            entry = current.get(key)
            if entry is None:
                raise InvalidInput(f"{key} is not a topic config of this cluster.")
            if entry.is_sensitive:   # never into the audit log, even when the change fails
                details["value"] = "(sensitive)"
            if entry.read_only:
                raise InvalidInput(f"{key} is read-only on this cluster.")
            if value is None:
                gw.alter_topic_configs(name, set_configs={}, delete=[key])
            else:
                gw.alter_topic_configs(name, set_configs={key: value})
        old = None if entry.is_sensitive else entry.value
        details["old"] = "(sensitive)" if entry.is_sensitive else old
    notify_on_commit("topic.configs_updated", {"cluster": cluster.pk, "topic": name})
    return ConfigChange(key=key, old=old, new=value)
