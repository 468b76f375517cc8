"""Reads for consumer groups: the groups list and one group in detail.

Lag is Kafka's: the partition's high watermark (its log end offset for a consumer) minus the
group's committed offset; unknown when either is. Both pages batch their requests through
`console.kafka_gateway.groups` (see its docstring): the list costs ListGroups per broker, one
FindCoordinator, DescribeGroups and OffsetFetch per coordinator, one Metadata for the topics
the groups name, and ListOffsets per leader, whatever the number of groups.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.core.paginator import Paginator
from django.template.defaultfilters import pluralize

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.records import ClusterRef
from console.errors import NotFound
from console.groups.reset import ResetPlan, ResetSpec, delete_refusal, group_coordinator, reset_plan
from console.kafka_gateway import Gateway, GatewayError, cache
from console.kafka_gateway.cache import GroupLagSnapshot, SnapshotAge
from console.kafka_gateway.group_lag import group_lags, groups_committed_on
from console.kafka_gateway.groups import LagSnapshot
from console.kafka_gateway.records import ConfigEntry
from console.kafka_gateway.group_records import CommittedOffset, DescribedGroup, GroupMember, TopicPartitionKey
from kafka_rules.lag import PartitionLag, lag, total_lag

# Classic groups' states, then those only groups of the consumer group protocol (KIP-848) have.
STATES = ("Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead", "Assigning", "Reconciling")
SORTS = {"id": "group id", "lag": "total lag, largest first"}
# ListGroups v5's types (KIP-848, KIP-932): classic groups, consumer-protocol groups, share groups.
TYPES = {"classic": "classic", "consumer": "consumer (KIP-848)", "share": "share (KIP-932)"}
SHARE = "share"


@dataclass(frozen=True)
class GroupRow:
    group_id: str
    state: str
    protocol_type: str
    assignor: str
    members: int
    coordinator: int | None
    topics: tuple[str, ...]           # committed on, assigned or subscribed
    total_lag: int | None             # over the committed partitions with a known log end
    worst: PartitionLag | None
    error: str | None = None
    group_type: str = "classic"       # "consumer": the consumer group protocol (KIP-848)


def _lag_age(snapshot: GroupLagSnapshot | None) -> SnapshotAge:
    """When the lags the list is sorted by were collected (console.kafka_gateway.cache.GROUP_LAGS)."""
    return SnapshotAge.of(snapshot if snapshot is not None and snapshot.lag is not None else None,
                          snapshots=cache.GROUP_LAGS, max_age=settings.GROUP_LAG_MAX_AGE_SECONDS)


@dataclass(frozen=True)
class GroupsPage:
    cluster: ClusterRef
    supported: bool                   # False: the cluster has no consumer group APIs
    groups: list[GroupRow]
    search: str
    state: str
    topic: str
    sort: str
    page: int
    pages: int
    per_page: int
    matching: int
    total: int
    warnings: list[str]
    lag_age: SnapshotAge | None = None     # sorted by lag collected in the background; None: read by this page
    consumers_age: SnapshotAge | None = None   # a topic's groups named by the background lag snapshot
    group_type: str = ""                   # the type filter: "" (all), classic, consumer or share


def _type_of(listing) -> str:
    """A listed group's type; brokers before ListGroups v5 do not say: classic until described."""
    return listing.group_type or "classic"


def group_list(*, cluster: Cluster, search: str = "", state: str = "", topic: str = "", sort: str = "id",
               page: int | str = 1, per_page: int | None = None, group_type: str = "") -> GroupsPage:
    """Sorted by id without a topic filter, only the page's groups are read beyond ListGroups
    (search, state and type come from it); sorting by lag or filtering by topic reads every matching
    group (`GroupCalls.lag_snapshot`: three round trips whatever their number), except that
    the lag sort alone ranks by the lags collected in the background (`_cached_lags`), whose
    age the page shows. Share groups (KIP-932) have no committed offsets: their rows come from
    ShareGroupDescribe and DescribeShareGroupOffsets (`_share_rows`); by lag they rank last."""
    group_type = group_type if group_type in TYPES else ""
    state = state if state in STATES else ""
    sort = sort if sort in SORTS else "id"
    per_page = per_page or settings.GROUPS_PER_PAGE
    needle, topic = search.strip().lower(), topic.strip()
    warnings: list[str] = []
    lag_age = None
    with cluster_gateway(cluster) as gw:
        listed = gw.groups.list_groups()
        if listed is None:
            return GroupsPage(ClusterRef.of(cluster), False, [], search, state, topic, sort, 1, 1, per_page, 0, 0, [])
        # ListGroups before v4 (KIP-518) gives no state: then the descriptions decide.
        states_listed = all(g.state for g in listed)
        candidates = [g for g in listed if (not needle or needle in g.group_id.lower())
                      and (not state or not states_listed or g.state == state)
                      and (not group_type or _type_of(g) == group_type)]
        shares = {g.group_id: g for g in candidates if _type_of(g) == SHARE}
        share_rows = _share_rows(gw, list(shares.values())) if topic and shares else {}
        candidates = [g for g in candidates if g.group_id not in shares
                      or not topic or topic in share_rows[g.group_id].topics]
        consumers_age = None
        if topic:
            readers, consumers_age = _may_read_topic(gw, [g for g in candidates if g.group_id not in shares],
                                                     topic, states_listed)
            candidates = readers + [g for g in candidates if g.group_id in shares]
            candidates.sort(key=lambda g: g.group_id)
        if sort == "lag" or topic or (state and not states_listed):
            # Members' topics are needed to filter by topic; sorting by lag needs only offsets,
            # and then only the page's groups are described.
            describe_all = bool(topic) or (state and not states_listed)
            if not describe_all and settings.GROUP_LAG_MAX_AGE_SECONDS > 0:
                snapshot, lag_age = _cached_lags(gw, warnings)
            else:
                snapshot = _snapshot(gw, [g.group_id for g in candidates if g.group_id not in shares], warnings,
                                     describe=describe_all)
            if not describe_all:
                candidates.sort(key=lambda g: -1 if (t := _total_lag(g.group_id, snapshot)) is None else t,
                                reverse=True)
                matching = candidates
                shown = Paginator(matching, per_page).get_page(page)
                if lag_age is not None:       # the page's groups' coordinators now, not as of the lags
                    snapshot.coordinators.update(gw.groups.find_coordinators(
                        g.group_id for g in shown.object_list).found)
                snapshot.described.update(gw.groups.describe_groups(
                    {g.group_id: snapshot.coordinators[g.group_id] for g in shown.object_list
                     if g.group_id in snapshot.coordinators and g.group_id not in shares}))
                share_rows.update(_share_rows(gw, [g for g in shown.object_list if g.group_id in shares
                                                   and g.group_id not in share_rows]))
                rows = [share_rows.get(g.group_id) or _row(g.group_id, g.state, g.protocol_type, snapshot)
                        for g in shown.object_list]
            else:
                share_rows.update(_share_rows(gw, [g for g in candidates if g.group_id in shares
                                                   and g.group_id not in share_rows]))
                matching = [r for r in (share_rows.get(g.group_id) or _row(g.group_id, g.state, g.protocol_type,
                                                                           snapshot) for g in candidates)
                            if (not topic or topic in r.topics) and (not state or r.state == state)]
                if sort == "lag":
                    matching.sort(key=lambda r: -1 if r.total_lag is None else r.total_lag, reverse=True)
                shown = Paginator(matching, per_page).get_page(page)
                rows = list(shown.object_list)
        else:
            matching = candidates
            shown = Paginator(matching, per_page).get_page(page)
            snapshot = _snapshot(gw, [g.group_id for g in shown.object_list if g.group_id not in shares], warnings,
                                 all_topics=False)
            share_rows = _share_rows(gw, [g for g in shown.object_list if g.group_id in shares])
            rows = [share_rows.get(g.group_id) or _row(g.group_id, g.state, g.protocol_type, snapshot)
                    for g in shown.object_list]
    return GroupsPage(cluster=ClusterRef.of(cluster), supported=True, groups=rows, search=search.strip(),
                      state=state, topic=topic, sort=sort, page=shown.number, pages=shown.paginator.num_pages,
                      per_page=per_page, matching=len(matching), total=len(listed), warnings=warnings,
                      lag_age=lag_age, consumers_age=consumers_age, group_type=group_type)


def _share_rows(gw: Gateway, listings: list) -> dict[str, GroupRow]:
    """Rows of share groups: members from ShareGroupDescribe, share partitions and lag from
    DescribeShareGroupOffsets (KIP-1226's lag; unknown from clusters before it), one request
    of each per coordinator."""
    if not listings:
        return {}
    coordinators = gw.groups.find_coordinators(g.group_id for g in listings)
    described = gw.share_groups.describe(coordinators.found) if coordinators.found else {}
    offsets = gw.share_groups.offsets(coordinators.found) if coordinators.found else None
    rows = {}
    for g in listings:
        info = described.get(g.group_id)
        partitions = offsets.offsets.get(g.group_id, []) if offsets else []
        lags = [PartitionLag(o.topic, o.partition, o.lag) for o in partitions if o.lag is not None]
        topics = {o.topic for o in partitions if o.start_offset >= 0}
        members = info.members if info is not None else ()
        topics.update(t for m in members for t in m.subscribed_topics)
        error = coordinators.errors.get(g.group_id) or (info.error if info is not None else None) or \
            (offsets.errors.get(g.group_id) if offsets else None)
        rows[g.group_id] = GroupRow(
            group_id=g.group_id, state=(info.state if info is not None and info.state else g.state),
            protocol_type=SHARE, assignor=info.assignor if info is not None else "", members=len(members),
            coordinator=coordinators.found.get(g.group_id), topics=tuple(sorted(topics)),
            total_lag=total_lag(p.lag for p in lags),
            worst=max(lags, key=lambda p: p.lag) if lags else None, error=error, group_type=SHARE)
    return rows


def _may_read_topic(gw: Gateway, candidates: list, topic: str, states_listed: bool
                    ) -> tuple[list, SnapshotAge | None]:
    """The candidates that may read `topic`: those with a committed offset on it (one
    OffsetFetch per coordinator, naming only its partitions), and those that may have members
    (whose subscriptions and assignments the full read checks). At 2,000 groups this keeps
    the topic's consumers from reading every group's offsets and every partition's end."""
    info = gw.metadata([topic]).topic(topic)
    if info is None:
        return candidates, None         # offsets may outlive the topic: read them all
    committed_here = groups_committed_on(gw, topic, max_age=settings.GROUP_LAG_MAX_AGE_SECONDS,
                                         wait_first=settings.GROUP_LAG_WAIT_SECONDS)
    if committed_here is not None:      # the background snapshot names them: no OffsetFetch of every group
        return [g for g in candidates if g.group_id in committed_here.groups
                or not states_listed or g.state not in ("Empty", "Dead")], committed_here.age
    coordinators = gw.groups.find_coordinators(g.group_id for g in candidates).found
    mine = [(topic, p.partition) for p in info.partitions]
    committed = gw.groups.committed_offsets(coordinators, {g: mine for g in coordinators}).offsets
    return [g for g in candidates if committed.get(g.group_id) or g.group_id not in coordinators
            or not states_listed or g.state not in ("Empty", "Dead")], None


@dataclass
class _Snapshot:
    coordinators: dict[str, int]
    described: dict[str, DescribedGroup]
    committed: dict[str, dict[TopicPartitionKey, CommittedOffset]]
    log_end: dict[TopicPartitionKey, int]
    errors: dict[str, str]
    last_stable: dict[TopicPartitionKey, int] | None = None
    log_start: dict[TopicPartitionKey, int] | None = None     # of the partitions without a commit


def _cached_lags(gw: Gateway, warnings: list[str]) -> tuple[_Snapshot, SnapshotAge]:
    """Every group's committed offsets and log ends as last collected in the background
    (copied: the page adds its own groups' descriptions). None collected yet: no lags, and
    the page says they are being collected."""
    cached = group_lags(gw, max_age=settings.GROUP_LAG_MAX_AGE_SECONDS, wait_first=settings.GROUP_LAG_WAIT_SECONDS)
    if cached is not None and cached.error:
        warnings.append(f"The groups' lag could not be collected: {cached.error}")
    if cached is None or cached.lag is None:
        if cached is None:
            warnings.append("The groups' lag is being collected: sorted by group id until it is.")
        return _Snapshot({}, {}, {}, {}, {}), _lag_age(None)
    snapshot = _snapshot_of(cached.lag, warnings)
    snapshot.coordinators, snapshot.described = dict(snapshot.coordinators), {}
    return snapshot, _lag_age(cached)


def _snapshot(gw: Gateway, group_ids: list[str], warnings: list[str], *, all_topics: bool = True,
              describe: bool = True, last_stable: bool = False, whole_topics: bool = False) -> _Snapshot:
    """Coordinators, descriptions, committed offsets and log end offsets of these groups
    (`GroupCalls.lag_snapshot`)."""
    snapshot = gw.groups.lag_snapshot(group_ids, all_topics=all_topics, describe=describe, last_stable=last_stable,
                                      whole_topics=whole_topics)
    return _snapshot_of(snapshot, warnings)


def _snapshot_of(snapshot: LagSnapshot, warnings: list[str]) -> _Snapshot:
    """A group that fails keeps its error; a partition whose log end is unknown has an
    unknown lag, with a warning."""
    errors = {**snapshot.coordinators.errors, **snapshot.committed.errors}
    errors.update({g: d.error for g, d in snapshot.described.items() if d.error})
    if snapshot.log_end_offsets.errors:
        unknown = snapshot.log_end_offsets.errors
        warnings.append(f"Log end offsets of {len(unknown)} partition{pluralize(len(unknown))} are unknown: {next(iter(unknown.values()))}")
    if errors:
        warnings.append(f"{len(errors)} group{pluralize(len(errors))} could not be read fully: {next(iter(errors.values()))}")
    stable, start = snapshot.last_stable_offsets, snapshot.log_start_offsets
    return _Snapshot(snapshot.coordinators.found, snapshot.described, snapshot.committed.offsets,
                     snapshot.log_end_offsets.offsets, errors, stable.offsets if stable is not None else None,
                     start.offsets if start is not None else None)


def _total_lag(group_id: str, snapshot: _Snapshot) -> int | None:
    log_end = snapshot.log_end
    return total_lag(lag(log_end.get(tp), c.offset) for tp, c in snapshot.committed.get(group_id, {}).items())


def _row(group_id: str, listed_state: str, listed_protocol: str, snapshot: _Snapshot) -> GroupRow:
    described = snapshot.described.get(group_id)
    committed = snapshot.committed.get(group_id, {})
    lags = [PartitionLag(t, p, value) for (t, p), c in committed.items()
            if (value := lag(snapshot.log_end.get((t, p)), c.offset)) is not None]
    topics = {t for t, _ in committed}
    members: tuple[GroupMember, ...] = described.members if described else ()
    for m in members:
        topics.update(t for t, _ in m.assignment)
        topics.update(m.subscribed_topics)
    return GroupRow(group_id=group_id, state=(described.state if described and described.state else listed_state),
                    protocol_type=(described.protocol_type if described else "") or listed_protocol,
                    assignor=described.protocol if described else "", members=len(members),
                    coordinator=snapshot.coordinators.get(group_id), topics=tuple(sorted(topics)),
                    total_lag=total_lag(p.lag for p in lags),
                    worst=max(lags, key=lambda p: p.lag) if lags else None, error=snapshot.errors.get(group_id),
                    group_type=described.group_type if described else "classic")


# --- one group ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemberRow:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    subscribed_topics: tuple[str, ...]
    assignment: tuple[tuple[str, tuple[int, ...]], ...]   # ((topic, (partitions...)), ...)
    undecodable: bool
    protocol: str = ""     # a KIP-848 group's member: "classic" or "consumer" ("" when not told)


@dataclass(frozen=True)
class PartitionRow:
    topic: str
    partition: int
    committed_offset: int | None
    log_end_offset: int | None
    lag: int | None
    owner: str | None                 # member id
    owner_client_id: str | None
    metadata: str
    last_stable_offset: int | None = None
    lag_read_committed: int | None = None    # from the last stable offset: a read_committed consumer's lag
    log_start_offset: int | None = None      # known for partitions without a commit

    @property
    def has_commit(self) -> bool:
        return self.committed_offset is not None

    @property
    def records(self) -> int | None:
        """Records in the partition (log end minus log start): without a commit, what a consumer
        that starts from the earliest offset would have to read."""
        if self.log_end_offset is None or self.log_start_offset is None:
            return None
        return max(0, self.log_end_offset - self.log_start_offset)


@dataclass(frozen=True)
class TopicLag:
    topic: str
    partitions: int                   # every partition of the topic
    lag: int | None                   # over the partitions with a commit
    committed: int = 0                # partitions with a commit
    uncommitted_records: int | None = None   # records in the partitions without one

    @property
    def uncommitted_partitions(self) -> int:
        return self.partitions - self.committed


@dataclass(frozen=True)
class Uncommitted:
    """The partitions of the group's topics without a committed offset: not in the total lag,
    which counts only committed partitions (as kafka-consumer-groups.sh shows "-" for them).
    A consumer that starts there reads from its auto.offset.reset: `records` (from the earliest
    offset), or none (from the latest)."""

    partitions: int = 0
    records: int | None = None


@dataclass(frozen=True)
class GroupConfigs:
    entries: list[ConfigEntry]
    error: str = ""


def _group_configs(gw: Gateway, group_id: str) -> GroupConfigs:
    """A consumer group's configs (KIP-848: consumer.session.timeout.ms and
    consumer.heartbeat.interval.ms) with their sources; the refusal in words when the cluster
    does not describe them (Kafka before 4.0 has no GROUP resource)."""
    try:
        return GroupConfigs(entries=gw.groups.configs(group_id))
    except GatewayError as exc:
        return GroupConfigs(entries=[], error=f"The group's configs could not be read: {exc}")


@dataclass(frozen=True)
class GroupDetail:
    cluster: ClusterRef
    group_id: str
    state: str
    protocol_type: str
    assignor: str
    coordinator: int
    members: list[MemberRow]
    partitions: list[PartitionRow]
    topics: list[TopicLag]
    total_lag: int | None
    warnings: list[str]
    total_lag_read_committed: int | None = None
    group_type: str = "classic"       # "consumer": the consumer group protocol (KIP-848)
    uncommitted: Uncommitted = Uncommitted()
    configs: GroupConfigs | None = None   # consumer-protocol groups only: they have configs of their own

    @property
    def committed_partitions(self) -> int:
        return sum(1 for p in self.partitions if p.has_commit)

    @property
    def has_commit_metadata(self) -> bool:
        """Whether any commit carries metadata: the partitions table has a column for it only then."""
        return any(p.metadata for p in self.partitions)

    @property
    def is_mixed(self) -> bool:
        """A consumer-protocol group with classic members (being migrated, KIP-848): the members
        table says who speaks which protocol then."""
        return any(m.protocol == "classic" for m in self.members)

    @property
    def classic_members(self) -> int:
        return sum(1 for m in self.members if m.protocol == "classic")

    @property
    def is_empty(self) -> bool:
        """No members: the group only holds committed offsets (and can be reset or deleted)."""
        return not self.members


def group_detail(*, cluster: Cluster, group_id: str) -> GroupDetail:
    warnings: list[str] = []
    with cluster_gateway(cluster) as gw:
        snapshot = _snapshot(gw, [group_id], warnings, all_topics=False, last_stable=True, whole_topics=True)
        described = snapshot.described.get(group_id)
        configs = _group_configs(gw, group_id) if described is not None and described.group_type == "consumer" \
            else None
    committed = snapshot.committed.get(group_id, {})
    if group_id not in snapshot.coordinators:
        raise GatewayError(f"No coordinator for group {group_id!r}: {snapshot.errors.get(group_id, 'unknown')}")
    if (described is None or not described.is_known) and not committed:
        if described is not None and described.error:
            raise GatewayError(f"Group {group_id!r} could not be described: {described.error}")
        raise NotFound(f"Cluster {cluster.name} has no consumer group {group_id!r}.")
    members = described.members if described else ()
    owners = {tp: m for m in members for tp in m.assignment}
    rows = []
    # Every partition of the group's topics: committed on, owned, or of a subscribed topic.
    for tp in sorted(set(committed) | set(owners) | set(snapshot.log_end) | set(snapshot.log_start or {})):
        c, owner, end = committed.get(tp), owners.get(tp), snapshot.log_end.get(tp)
        stable = (snapshot.last_stable or {}).get(tp)
        rows.append(PartitionRow(topic=tp[0], partition=tp[1], committed_offset=c.offset if c else None,
                                 log_end_offset=end, lag=lag(end, c.offset if c else None),
                                 owner=owner.member_id if owner else None,
                                 owner_client_id=owner.client_id if owner else None,
                                 metadata=c.metadata if c else "", last_stable_offset=stable,
                                 lag_read_committed=lag(stable, c.offset if c else None),
                                 log_start_offset=None if c else (snapshot.log_start or {}).get(tp)))
    topics = _topic_lags(rows)
    without = [r for r in rows if not r.has_commit]
    records = [r.records for r in without]
    return GroupDetail(cluster=ClusterRef.of(cluster), group_id=group_id, state=described.state if described else "",
                       protocol_type=described.protocol_type if described else "",
                       assignor=described.protocol if described else "",
                       coordinator=snapshot.coordinators[group_id], members=[_member_row(m) for m in members],
                       partitions=rows, topics=topics, total_lag=total_lag(r.lag for r in rows), warnings=warnings,
                       total_lag_read_committed=total_lag(r.lag_read_committed for r in rows),
                       group_type=described.group_type if described else "classic",
                       uncommitted=Uncommitted(partitions=len(without), records=None if None in records
                                               else sum(records)), configs=configs)


def _member_row(m: GroupMember) -> MemberRow:
    by_topic: dict[str, list[int]] = defaultdict(list)
    for topic, partition in m.assignment:
        by_topic[topic].append(partition)
    return MemberRow(member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                     client_host=m.client_host, subscribed_topics=m.subscribed_topics,
                     assignment=tuple((t, tuple(ps)) for t, ps in sorted(by_topic.items())), undecodable=m.undecodable,
                     protocol=m.protocol)


def _topic_lags(rows: list[PartitionRow]) -> list[TopicLag]:
    by_topic: dict[str, list[PartitionRow]] = defaultdict(list)
    for r in rows:
        by_topic[r.topic].append(r)
    result = []
    for topic, partitions in sorted(by_topic.items()):
        without = [r.records for r in partitions if not r.has_commit]
        result.append(TopicLag(topic=topic, partitions=len(partitions), lag=total_lag(r.lag for r in partitions),
                               committed=len(partitions) - len(without),
                               uncommitted_records=None if None in without else sum(without)))
    return result


def group_reset_preview(*, cluster: Cluster, group_id: str, spec: ResetSpec) -> ResetPlan:
    """What a reset would commit, partition by partition, and who would stop Kafka from committing it."""
    with cluster_gateway(cluster) as gw:
        return reset_plan(gw, cluster_name=cluster.name, group_id=group_id, spec=spec)


def group_delete_refusal(*, cluster: Cluster, group_id: str) -> str | None:
    """Why Kafka would refuse to delete the group now (its live members), before the id is typed;
    None when it would not, or when the group cannot be described (the deletion then says why)."""
    try:
        with cluster_gateway(cluster) as gw:
            group = gw.groups.describe_groups({group_id: group_coordinator(gw, group_id)})[group_id]
    except GatewayError:
        return None
    return None if group.error else delete_refusal(group_id, group.members)
