"""Reads for the Connect section: a Kafka cluster's Connect clusters with their connectors
and statuses, one connector in full (config with secrets hidden, tasks, traces, topics,
offsets), the plugins, and a plugin's config definition for the creation form.

Every read asks Connect at once (statuses change by the second); a Connect cluster that does
not answer is shown as such, with Connect's sentence, and the others still are.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import INTERNAL
from console.connect.client import ConnectApiError, ConnectClient
from console.connect.masking import HIDDEN, masked, masked_json_text
from console.connect.models import ConnectCluster
from console.errors import ConsoleError, NotFound

CONNECT_TIMEOUT = 10.0
# A live render shares its cluster's feed with the other live parts of the Kafka cluster's
# pages: a Connect that does not answer may hold them up this long, no more.
LIVE_TIMEOUT = 3.0
STATE_ORDER = ("FAILED", "RESTARTING", "UNASSIGNED", "PAUSED", "STOPPED", "RUNNING")


def client_for(connect: ConnectCluster, *, timeout: float = CONNECT_TIMEOUT) -> ConnectClient:
    return ConnectClient(name=connect.name, url=connect.url, username=connect.username,
                         password=connect.password(), timeout=timeout)


def connect_clusters(*, cluster: Cluster):
    return ConnectCluster.objects.filter(cluster=cluster)


def connect_cluster_get(*, cluster: Cluster, connect_id: int) -> ConnectCluster:
    found = ConnectCluster.objects.filter(cluster=cluster, pk=connect_id).first()
    if found is None:
        raise NotFound(f"No Connect cluster {connect_id} for Kafka cluster {cluster.name!r}.")
    return found


@dataclass(frozen=True)
class TaskState:
    id: int
    state: str
    worker_id: str
    trace: str | None = None


@dataclass(frozen=True)
class ConnectorRow:
    name: str
    type: str
    plugin: str
    state: str
    worker_id: str
    trace: str | None
    tasks: tuple[TaskState, ...]

    @property
    def linkable(self) -> bool:
        """The console's pages take names without '/' (Connect's own REST paths need them escaped)."""
        return "/" not in self.name and bool(self.name)

    @property
    def plugin_short(self) -> str:
        return self.plugin.rsplit(".", 1)[-1]

    @property
    def task_summary(self) -> str:
        """`2 running, 1 failed` (or `no tasks`)."""
        counts: dict[str, int] = {}
        for task in self.tasks:
            counts[task.state] = counts.get(task.state, 0) + 1
        if not counts:
            return "no tasks"
        return ", ".join(f"{counts[s]} {s.lower()}" for s in STATE_ORDER if s in counts)

    @property
    def failed_tasks(self) -> int:
        return sum(1 for t in self.tasks if t.state == "FAILED")

    @property
    def worst(self) -> str:
        """The state a list sorts and colours by: the connector's, or a task's if worse."""
        states = [self.state] + [t.state for t in self.tasks]
        return min(states, key=lambda s: STATE_ORDER.index(s) if s in STATE_ORDER else 0)


def _row(name: str, entry: dict) -> ConnectorRow:
    status = entry.get("status") or {}
    info = entry.get("info") or {}
    connector = status.get("connector") or {}
    tasks = tuple(TaskState(int(t.get("id", 0)), str(t.get("state", "UNASSIGNED")), str(t.get("worker_id", "")),
                            t.get("trace")) for t in status.get("tasks") or [])
    return ConnectorRow(name=name, type=str(status.get("type") or info.get("type") or "unknown"),
                        plugin=str((info.get("config") or {}).get("connector.class", "")),
                        state=str(connector.get("state", "UNASSIGNED")), worker_id=str(connector.get("worker_id", "")),
                        trace=connector.get("trace"), tasks=tuple(sorted(tasks, key=lambda t: t.id)))


@dataclass(frozen=True)
class ConnectClusterView:
    id: int
    name: str
    url: str
    is_bundled: bool
    reachable: bool
    error: str | None
    version: str | None
    kafka_cluster_id: str | None
    other_kafka_cluster: bool          # its workers use another Kafka cluster than this one
    connectors: tuple[ConnectorRow, ...]
    fetched_at: datetime
    connect: ConnectCluster = field(metadata=INTERNAL)

    @property
    def failed(self) -> int:
        return sum(1 for c in self.connectors if c.worst == "FAILED")


def kafka_cluster_id(cluster: Cluster) -> str | None:
    try:
        with cluster_gateway(cluster) as gateway:
            return gateway.metadata(cached=True).cluster_id
    except ConsoleError:
        return None


def connect_overview(*, cluster: Cluster, connect: ConnectCluster, kafka_cluster_id: str | None = None,
                     timeout: float = CONNECT_TIMEOUT) -> ConnectClusterView:
    now = timezone.now()
    try:
        client = client_for(connect, timeout=timeout)
        root = client.root() or {}
        connectors = client.connectors()
    except ConsoleError as exc:
        return ConnectClusterView(connect.pk, connect.name, connect.url, connect.is_bundled, False, str(exc), None,
                                  None, False, (), now, connect)
    rows = sorted((_row(name, entry or {}) for name, entry in connectors.items()), key=lambda r: r.name)
    theirs = root.get("kafka_cluster_id")
    return ConnectClusterView(connect.pk, connect.name, connect.url, connect.is_bundled, True, None,
                              root.get("version"), theirs,
                              bool(theirs and kafka_cluster_id and theirs != kafka_cluster_id), tuple(rows), now,
                              connect)


def connect_list(*, cluster: Cluster) -> list[ConnectClusterView]:
    registered = list(connect_clusters(cluster=cluster))
    ours = kafka_cluster_id(cluster) if registered else None
    return [connect_overview(cluster=cluster, connect=c, kafka_cluster_id=ours) for c in registered]


@dataclass(frozen=True)
class OffsetRow:
    partition: dict
    offset: dict | None
    kafka_topic: str | None = None        # sinks: the topic partition and offset
    kafka_partition: int | None = None
    kafka_offset: int | None = None


@dataclass(frozen=True)
class ConnectorDetail:
    connect_name: str
    row: ConnectorRow
    config: dict
    topics: tuple[str, ...]
    offsets: tuple[OffsetRow, ...]
    offsets_error: str | None
    fetched_at: datetime

    @property
    def stopped(self) -> bool:
        return self.row.state == "STOPPED"

    @property
    def paused(self) -> bool:
        return self.row.state == "PAUSED"


def password_keys(client: ConnectClient, plugin: str) -> frozenset[str]:
    """The keys the plugin declares as PASSWORD (none if Connect cannot say)."""
    if not plugin:
        return frozenset()
    try:
        return frozenset(d.get("name") for d in client.plugin_config(plugin) if d.get("type") == "PASSWORD")
    except ConsoleError:
        return frozenset()


def connector_detail(*, connect: ConnectCluster, name: str) -> ConnectorDetail:
    client = client_for(connect)
    info = client.connector(name)
    try:
        status = client.status(name)
    except ConsoleError:
        status = {"connector": {"state": "UNASSIGNED", "worker_id": ""}, "tasks": [], "type": info.get("type")}
    row = _row(name, {"status": status, "info": info})
    config = masked(info.get("config") or {}, password_keys(client, row.plugin))
    try:
        topics = tuple(sorted(client.topics(name)))
    except ConsoleError:
        topics = ()
    offsets, offsets_error = (), None
    try:
        offsets = tuple(_offset_row(o) for o in client.offsets(name))
    except ConsoleError as exc:
        offsets_error = str(exc)
    return ConnectorDetail(connect.name, row, dict(sorted(config.items())), topics, offsets, offsets_error,
                           timezone.now())


@dataclass(frozen=True)
class ConnectorLive:
    """The live part of a connector's page: its state and its tasks', or why Connect could not
    tell them (`error`, with the last figures gone rather than shown stale)."""
    row: ConnectorRow | None
    error: str | None
    fetched_at: datetime

    @property
    def stopped(self) -> bool:
        return self.row is not None and self.row.state == "STOPPED"

    @property
    def paused(self) -> bool:
        return self.row is not None and self.row.state == "PAUSED"


def connector_live(*, connect: ConnectCluster, name: str) -> ConnectorLive:
    """The connector's status and info (two GETs), for its page's live part. NotFound once
    Connect no longer knows the connector; any other failure of Connect is told in `error`,
    not raised, since it says nothing of the Kafka cluster the page's live feed belongs to."""
    client = client_for(connect, timeout=LIVE_TIMEOUT)
    try:
        info = client.connector(name)
        status = client.status(name)
    except ConnectApiError as exc:
        if exc.status == 404:
            raise NotFound(f"Connect cluster {connect.name!r} has no connector {name!r}.") from None
        return ConnectorLive(None, str(exc), timezone.now())
    except ConsoleError as exc:
        return ConnectorLive(None, str(exc), timezone.now())
    return ConnectorLive(_row(name, {"status": status, "info": info}), None, timezone.now())


def transform_aliases(config) -> dict[str, str]:
    """The keys of `config` (a dict or a QueryDict) that name transforms and predicates and their
    classes: `transforms`, `predicates`, `transforms.<alias>.type`, `predicates.<alias>.type`."""
    return {key: str(config.get(key)) for key in config
            if config.get(key) not in (None, "") and (key in ("transforms", "predicates") or (
                key.startswith(("transforms.", "predicates.")) and key.endswith(".type")))}


_CONNECTOR_CLASS = re.compile(r'"connector\.class"\s*:\s*"([^"\\]+)"')


def json_document_shown(*, connect: ConnectCluster, text: str) -> tuple[str, list[str]]:
    """A connector's JSON as its operator typed it, to be shown back: every secret `[hidden]`
    (the keys its plugin declares PASSWORD, and the names console.connect.masking knows), and the
    keys whose typed values were hidden."""
    plugin = _CONNECTOR_CLASS.search(text)
    keys = password_keys(client_for(connect), plugin.group(1)) if plugin else frozenset()
    return masked_json_text(text, keys)


def connector_config(*, connect: ConnectCluster, name: str) -> dict[str, str]:
    """The connector's config, sorted, secrets `[hidden]` (to edit it as JSON)."""
    client = client_for(connect)
    config = client.connector(name).get("config") or {}
    return dict(sorted(masked(config, password_keys(client, config.get("connector.class", ""))).items()))


def _offset_row(entry: dict) -> OffsetRow:
    partition, offset = entry.get("partition") or {}, entry.get("offset")
    if "kafka_topic" in partition and isinstance(offset, dict) and "kafka_offset" in offset:
        return OffsetRow(partition, offset, partition.get("kafka_topic"), partition.get("kafka_partition"),
                         offset.get("kafka_offset"))
    return OffsetRow(partition, offset)


def plugins(*, connect: ConnectCluster) -> list[dict]:
    return sorted(client_for(connect).plugins(), key=lambda p: (p.get("type", ""), p.get("class", "")))


@dataclass(frozen=True)
class FieldDefinition:
    name: str
    type: str
    required: bool
    default: str | None
    importance: str
    documentation: str
    group: str
    display_name: str
    recommended: tuple[str, ...]

    @property
    def secret(self) -> bool:
        return self.type == "PASSWORD"


def plugin_fields(*, connect: ConnectCluster, plugin: str, config: dict | None = None
                  ) -> tuple[list[tuple[str, list[FieldDefinition]]], str]:
    """The plugin's config definition, Connect's groups in its order, and the plugin's full
    class name: from `config/validate` with nothing but the class (what Connect's own UI does),
    and the transform and predicate aliases of `config` with their types, for which Connect adds
    a group each with their keys."""
    asked = {"connector.class": plugin, **transform_aliases(config or {})}
    infos = client_for(connect).validate(plugin, asked)
    groups: dict[str, list[FieldDefinition]] = {}
    for entry in infos.get("configs") or []:
        d, v = entry.get("definition") or {}, entry.get("value") or {}
        if d.get("name") == "connector.class":
            continue
        groups.setdefault(d.get("group") or "Connector", []).append(FieldDefinition(
            str(d.get("name")), str(d.get("type", "STRING")), bool(d.get("required")), d.get("default_value"),
            str(d.get("importance", "")), str(d.get("documentation") or ""), d.get("group") or "Connector",
            str(d.get("display_name") or d.get("name")),
            tuple(str(r) for r in v.get("recommended_values") or [])))
    order = [g for g in infos.get("groups") or [] if g in groups] + [g for g in groups if g not in
                                                                       (infos.get("groups") or [])]
    return [(g, groups[g]) for g in order], str(infos.get("name") or plugin)


def validation_errors(infos: dict) -> dict[str, list[str]]:
    """Field name -> Connect's errors, from a ConfigInfos answer."""
    return {c["value"]["name"]: list(c["value"]["errors"]) for c in infos.get("configs") or []
            if c.get("value", {}).get("errors")}


__all__ = ["HIDDEN"]
