"""Metadata records and how each one changes the image.

A record is a plain dict with a "type" key, so the journal can store it as one JSON line.
Applying records is deterministic: replaying the journal at start rebuilds the same image.
"""
from __future__ import annotations

import uuid
from typing import Any

from engine.cluster import acl_records, scram_credentials
from engine.cluster.topics import collision_key, is_legal_name
from engine.cluster.metadata import BrokerRegistration, MetadataImage, PartitionState, TopicState


def cluster_record(cluster_id: str) -> dict:
    return {"type": "cluster", "cluster_id": cluster_id}


def broker_record(node_id: int, host: str, port: int, rack: str | None,
                  endpoints: tuple[tuple[str, str, int], ...] = ()) -> dict:
    record = {"type": "broker", "node_id": node_id, "host": host, "port": port, "rack": rack}
    if endpoints:
        record["endpoints"] = [list(endpoint) for endpoint in endpoints]
    return record


def topic_record(name: str, topic_id: uuid.UUID, configs: dict[str, Any]) -> dict:
    return {"type": "topic", "name": name, "topic_id": str(topic_id), "configs": configs}


def partition_record(topic_id: uuid.UUID, partition: int, replicas: list[int], leader: int,
                     leader_epoch: int, isr: list[int], partition_epoch: int = 0,
                     adding: list[int] | None = None, removing: list[int] | None = None) -> dict:
    return {"type": "partition", "topic_id": str(topic_id), "partition": partition, "replicas": replicas,
            "leader": leader, "leader_epoch": leader_epoch, "isr": isr, "partition_epoch": partition_epoch,
            "adding": adding or [], "removing": removing or []}


def remove_topic_record(topic_id: uuid.UUID) -> dict:
    return {"type": "remove_topic", "topic_id": str(topic_id)}


def config_record(resource: str, name: str, key: str, value: Any) -> dict:
    """resource is "topic", "broker" or "group"; name "" is the cluster-wide broker default;
    value None deletes."""
    return {"type": "config", "resource": resource, "name": name, "key": key, "value": value}


def client_quota_record(entity, key: str, value: float | None) -> dict:
    """entity: (type, name) pairs, name None for the default; value None removes the quota."""
    return {"type": "client_quota", "entity": [[t, n] for t, n in entity], "key": key, "value": value}


def controller_record(controller_id: int, controller_epoch: int) -> dict:
    return {"type": "controller", "controller_id": controller_id, "controller_epoch": controller_epoch}


def producer_ids_record(next_producer_id: int) -> dict:
    return {"type": "producer_ids", "next_producer_id": next_producer_id}


class MetadataRecordError(ValueError):
    """A record that decodes but cannot be applied: an unknown type or id, a value out of range."""


def printable(record: dict) -> dict:
    """The record as an error message may show it: SCRAM keys and salts left out."""
    if isinstance(record, dict) and record.get("type") == "scram_credential" and record.get("credential"):
        return {**record, "credential": "<redacted>"}
    return record


def apply(image: MetadataImage, record: dict) -> None:
    """Check `record` against `image`, then apply it (a journal replayed at start)."""
    check(image, record)
    apply_checked(image, record)


def apply_checked(image: MetadataImage, record: dict) -> None:
    """Apply a record `check_batch` already took (a controller's commit): not checked again."""
    try:
        _APPLY[record["type"]](image, record)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise MetadataRecordError(f"{type(exc).__name__}: {exc}") from None
    image.version += 1


def check(image: MetadataImage | BatchView, record: dict) -> None:
    """Raise MetadataRecordError if `record` would not apply to `image` whole."""
    if not isinstance(record, dict) or record.get("type") not in _APPLY:
        raise MetadataRecordError(f"unknown record type {record.get('type') if isinstance(record, dict) else record!r}")
    missing = [key for key in _REQUIRED.get(record["type"], ()) if key not in record]
    if missing:
        raise MetadataRecordError(f"a {record['type']} record needs {', '.join(missing)}")
    try:
        _CHECKS.get(record["type"], _no_check)(image, record)
    except MetadataRecordError:
        raise
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise MetadataRecordError(f"{type(exc).__name__}: {exc}") from None


def check_batch(image: MetadataImage, records: list[dict]) -> None:
    """Raise MetadataRecordError, naming the record, if any of `records` would not apply to
    `image` after the ones before it. The controller checks a commit this way before it is
    journaled: a record the image refuses must never reach the journal, where it would stop
    the next start. Nothing is applied or copied (see BatchView)."""
    view = BatchView(image)
    for record in records:
        try:
            check(view, record)
        except MetadataRecordError as exc:
            raise MetadataRecordError(f"the record {printable(record)!r} would not apply ({exc})") from None
        view.take(record)


class _Overlay:
    """Membership in a collection of the image, with a batch's earlier additions and removals."""

    def __init__(self, base) -> None:
        self.base, self.added, self.removed = base, {}, set()

    def __contains__(self, key) -> bool:
        return key in self.added or (key not in self.removed and key in self.base)

    def get(self, key):
        if key in self.added:
            return self.added[key]
        return None if key in self.removed else self.base.get(key)

    def add(self, key, value=None) -> None:
        self.added[key] = value
        self.removed.discard(key)

    def remove(self, key) -> None:
        self.added.pop(key, None)
        self.removed.add(key)


class _AclView:
    """The part of an AclIndex the checks read (`by_id`, `id_of`), as BatchView sees it. The
    batch's own bindings are indexed too: a CreateAcls may carry tens of thousands, and
    looking each one up among the others would hold the event loop for minutes."""

    def __init__(self, acls) -> None:
        self.by_id = _Overlay(acls.by_id)
        self._acls = acls
        self._added_ids: dict = {}       # binding -> id, of the batch's own entries still present

    def add(self, acl_id, binding) -> None:
        self.by_id.add(acl_id, binding)
        self._added_ids[binding] = acl_id

    def remove(self, acl_id) -> None:
        binding = self.by_id.added.get(acl_id)
        if binding is not None and self._added_ids.get(binding) == acl_id:
            del self._added_ids[binding]
        self.by_id.remove(acl_id)

    def id_of(self, binding):
        acl_id = self._added_ids.get(binding)
        if acl_id is not None:
            return acl_id
        acl_id = self._acls.id_of(binding)
        return None if acl_id in self.by_id.removed else acl_id


class BatchView:
    """What the checks read of an image (topic ids and names, ACL ids and bindings) as it would
    be after some records of a batch: only those records' own changes are kept, so checking a
    commit costs nothing per topic of the cluster."""

    def __init__(self, image: MetadataImage) -> None:
        self.topics_by_id = _Overlay(image.topics_by_id)
        self.topics = _Overlay(image.topics)
        self.acls = _AclView(image.acls)

    def take(self, record: dict) -> None:
        kind = record["type"]
        if kind == "topic":
            self.topics_by_id.add(uuid.UUID(record["topic_id"]), record["name"])
            self.topics.add(record["name"])
        elif kind == "remove_topic":
            topic_id = uuid.UUID(record["topic_id"])
            topic = self.topics_by_id.get(topic_id)
            self.topics.remove(topic if isinstance(topic, str) else topic.name)
            self.topics_by_id.remove(topic_id)
        elif kind == acl_records.ENTRY:
            self.acls.add(record["id"], acl_records.binding_of(record))
        elif kind == acl_records.REMOVE:
            self.acls.remove(record["id"])


# --- checks: a record is applied whole or refused, never half-way ----------------------------

def _no_check(image: MetadataImage, record: dict) -> None:
    pass


def _int(record: dict, key: str, minimum: int) -> int:
    value = record[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise MetadataRecordError(f"{key} must be an integer >= {minimum}, not {value!r}")
    return value


def _string(record: dict, key: str) -> str:
    value = record[key]
    if not isinstance(value, str) or not value:
        raise MetadataRecordError(f"{key} must be a non-empty string, not {value!r}")
    return value


def _broker_ids(record: dict, key: str) -> list[int]:
    value = record.get(key, [])
    if not isinstance(value, list) or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 0
                                              for b in value):
        raise MetadataRecordError(f"{key} must be a list of broker ids, not {value!r}")
    return value


def _known_topic_id(image: MetadataImage, record: dict) -> None:
    if uuid.UUID(record["topic_id"]) not in image.topics_by_id:
        raise MetadataRecordError(f"unknown topic id {record['topic_id']}")


def _check_topic(image: MetadataImage, record: dict) -> None:
    if not isinstance(record["name"], str) or not is_legal_name(record["name"]):
        raise MetadataRecordError(f"illegal topic name {record['name']!r}")
    if not isinstance(record["configs"], dict):
        raise MetadataRecordError("configs must be an object")
    uuid.UUID(record["topic_id"])


def _check_partition(image: MetadataImage, record: dict) -> None:
    _known_topic_id(image, record)
    _int(record, "partition", 0)
    _int(record, "leader", -1)
    _int(record, "leader_epoch", 0)
    if "partition_epoch" in record:
        _int(record, "partition_epoch", 0)
    if not _broker_ids(record, "replicas"):
        raise MetadataRecordError("a partition needs at least one replica")
    for key in ("isr", "adding", "removing"):
        _broker_ids(record, key)


def _check_config(image: MetadataImage, record: dict) -> None:
    if record["resource"] not in ("topic", "broker", "group"):
        raise MetadataRecordError(f"unknown config resource {record['resource']!r}")
    if record["resource"] == "topic" and record["name"] not in image.topics:
        raise MetadataRecordError(f"config for unknown topic {record['name']!r}")
    if not isinstance(record["name"], str) or not isinstance(record["key"], str):
        raise MetadataRecordError("a config's resource name and key must be strings")


def _check_client_quota(image: MetadataImage, record: dict) -> None:
    pairs = record["entity"]
    if not isinstance(pairs, list) or not pairs or not all(
            isinstance(p, list) and len(p) == 2 and p[0] in ("user", "client-id", "ip") and
            (p[1] is None or isinstance(p[1], str)) for p in pairs) or len({p[0] for p in pairs}) != len(pairs):
        raise MetadataRecordError(f"bad client quota entity {pairs!r}")
    if not isinstance(record["key"], str):
        raise MetadataRecordError("a client quota key must be a string")
    value = record["value"]
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
        raise MetadataRecordError(f"a client quota value must be a positive number, not {value!r}")


def _check_broker(image: MetadataImage, record: dict) -> None:
    _int(record, "node_id", 0)
    _int(record, "port", 0)
    endpoints = record.get("endpoints", [])
    if not isinstance(endpoints, list) or not all(
            isinstance(e, list) and len(e) == 3 and isinstance(e[0], str) and isinstance(e[1], str)
            and isinstance(e[2], int) for e in endpoints):
        raise MetadataRecordError(f"bad broker endpoints {endpoints!r}")


_REQUIRED = {
    "controller": ("controller_id", "controller_epoch"),
    "cluster": ("cluster_id",),
    "broker": ("node_id", "host", "port", "rack"),
    "topic": ("name", "topic_id", "configs"),
    "partition": ("topic_id", "partition", "replicas", "leader", "leader_epoch", "isr"),
    "remove_topic": ("topic_id",),
    "config": ("resource", "name", "key", "value"),
    "producer_ids": ("next_producer_id",),
    "client_quota": ("entity", "key", "value"),
    "scram_credential": ("user", "mechanism", "credential"),
    acl_records.ENTRY: ("id", "resource_type", "resource_name", "pattern_type", "principal", "host", "operation",
                        "permission_type"),
    acl_records.REMOVE: ("id",),
}

_CHECKS = {
    "topic": _check_topic,
    "partition": _check_partition,
    "remove_topic": _known_topic_id,
    "config": _check_config,
    "broker": _check_broker,
    "client_quota": _check_client_quota,
    "producer_ids": lambda image, record: _int(record, "next_producer_id", 0),
    "controller": lambda image, record: (_int(record, "controller_id", -1), _int(record, "controller_epoch", 0)),
    "cluster": lambda image, record: _string(record, "cluster_id"),
    "scram_credential": lambda image, record: scram_credentials.check_record(record),
    acl_records.ENTRY: lambda image, record: acl_records.check_entry(image.acls, record),
    acl_records.REMOVE: lambda image, record: acl_records.check_remove(image.acls, record),
}


# --- appliers ----------------------------------------------------------------------------------

def _apply_cluster(image: MetadataImage, record: dict) -> None:
    image.cluster_id = record["cluster_id"]


def _apply_broker(image: MetadataImage, record: dict) -> None:
    image.brokers[record["node_id"]] = BrokerRegistration(record["node_id"], record["host"], record["port"],
                                                          record["rack"],
                                                          tuple(tuple(e) for e in record.get("endpoints", [])))


def _apply_topic(image: MetadataImage, record: dict) -> None:
    topic = TopicState(record["name"], uuid.UUID(record["topic_id"]), {}, dict(record["configs"]))
    image.topics[topic.name] = topic
    image.topics_by_id[topic.topic_id] = topic
    image.topics_by_collision_key[collision_key(topic.name)] = topic.name


def _apply_partition(image: MetadataImage, record: dict) -> None:
    topic = image.topics_by_id[uuid.UUID(record["topic_id"])]
    topic.partitions[record["partition"]] = PartitionState(
        record["partition"], list(record["replicas"]), record["leader"], record["leader_epoch"], list(record["isr"]),
        record.get("partition_epoch", 0), list(record.get("adding", [])), list(record.get("removing", [])))


def install_partitions(image: MetadataImage, topic_id: uuid.UUID, partitions: dict[int, PartitionState]) -> None:
    """Add partitions built from partition records on a scratch image (a big change applies
    its records there, in slices) to the topic, as applying those records here would."""
    image.topics_by_id[topic_id].partitions.update(partitions)
    image.version += len(partitions)


def _apply_remove_topic(image: MetadataImage, record: dict) -> None:
    topic = image.topics_by_id.pop(uuid.UUID(record["topic_id"]))
    del image.topics[topic.name]
    image.topics_by_collision_key.pop(collision_key(topic.name), None)


def _apply_config(image: MetadataImage, record: dict) -> None:
    if record["resource"] == "topic":
        configs = image.topics[record["name"]].configs
    elif record["resource"] == "group":
        configs = image.group_configs.setdefault(record["name"], {})
    else:
        configs = image.broker_configs.setdefault(record["name"], {})
    if record["value"] is None:
        configs.pop(record["key"], None)
    else:
        configs[record["key"]] = record["value"]
    if record["resource"] == "group" and not configs:
        del image.group_configs[record["name"]]


def _apply_client_quota(image: MetadataImage, record: dict) -> None:
    entity = tuple(sorted((t, n) for t, n in record["entity"]))
    values = image.client_quotas.setdefault(entity, {})
    if record["value"] is None:
        values.pop(record["key"], None)
    else:
        values[record["key"]] = float(record["value"])
    if not values:
        del image.client_quotas[entity]


def _apply_producer_ids(image: MetadataImage, record: dict) -> None:
    image.next_producer_id = record["next_producer_id"]


def _apply_controller(image: MetadataImage, record: dict) -> None:
    image.controller_id = record["controller_id"]
    image.controller_epoch = record["controller_epoch"]


_APPLY = {
    "controller": _apply_controller,
    "cluster": _apply_cluster,
    "broker": _apply_broker,
    "topic": _apply_topic,
    "partition": _apply_partition,
    "remove_topic": _apply_remove_topic,
    "config": _apply_config,
    "producer_ids": _apply_producer_ids,
    "client_quota": _apply_client_quota,
    "scram_credential": lambda image, record: scram_credentials.apply_record(image.scram_credentials, record),
    acl_records.ENTRY: lambda image, record: acl_records.apply_entry(image.acls, record),
    acl_records.REMOVE: lambda image, record: acl_records.apply_remove(image.acls, record),
}
