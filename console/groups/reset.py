"""Offset reset plans, with the meaning of `kafka-consumer-groups.sh --reset-offsets` (and the
engine's `groups --reset-offsets`):

- targets: `earliest` (log start offset), `latest` (log end offset), `datetime` (the first
  offset whose record is at or after the time; the log end when there is none), `offset` N,
  `shift` by ±N from the committed offset;
- scopes: every partition the group has committed offsets for, every partition of one topic,
  or chosen partitions of one topic;
- an offset before the log start or past the log end is clamped into the log's range, and the
  plan says so for that partition;
- Kafka commits the new offsets only while the group has no members: the plan names them.

`reset_plan` is a read (the preview); `console.groups.services.group_reset_offsets` rebuilds
it and commits it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from console.errors import InvalidInput, NotFound
from console.formatting import timestamp_utc
from console.groups.members import client_host_shown
from console.kafka_gateway import Gateway, GatewayError, PartitionInfo
from console.kafka_gateway.group_records import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, CommittedOffset, GroupMember

TARGETS = {"earliest": "the earliest offset", "latest": "the latest offset", "datetime": "a date and time",
           "offset": "a given offset", "shift": "shift by ±N"}
SCOPES = {"all": "every topic of the group", "topic": "one topic", "partitions": "chosen partitions of one topic"}
MAX_PARTITIONS_LISTED = 50   # in an audit entry


@dataclass(frozen=True)
class ResetSpec:
    target: str
    scope: str = "all"
    topic: str = ""
    partitions: tuple[int, ...] = ()
    offset: int | None = None          # target "offset"
    shift: int | None = None           # target "shift"
    timestamp_ms: int | None = None    # target "datetime"

    def check(self) -> None:
        if self.target not in TARGETS:
            raise InvalidInput(f"Unknown reset target {self.target!r}: use one of {', '.join(TARGETS)}.")
        if self.scope not in SCOPES:
            raise InvalidInput(f"Unknown scope {self.scope!r}: use one of {', '.join(SCOPES)}.")
        if self.scope != "all" and not self.topic:
            raise InvalidInput("Name the topic to reset.")
        if self.scope == "partitions" and not self.partitions:
            raise InvalidInput("Choose at least one partition.")
        needed = {"offset": self.offset, "shift": self.shift, "datetime": self.timestamp_ms}
        if self.target in needed and needed[self.target] is None:
            raise InvalidInput(f"The target {TARGETS[self.target]} needs a value.")

    def summary(self) -> str:
        """In a person's words: "the earliest offset, every topic", "the first offset at or after
        2026-11-27 14:00:00 UTC, topic orders"; the preview, the message and the audit log say it."""
        target = {"offset": f"offset {self.offset}", "shift": f"a shift by {self.shift:+d}" if self.shift is not None
                  else "a shift", "datetime": f"the first offset at or after {timestamp_utc(self.timestamp_ms)}"
                  }.get(self.target, TARGETS.get(self.target, self.target))
        scope = {"all": "every topic", "topic": f"topic {self.topic}",
                 "partitions": f"{self.topic} partitions {', '.join(map(str, self.partitions))}"}.get(self.scope,
                                                                                                     self.scope)
        return f"{target}, {scope}"


@dataclass(frozen=True)
class ResetRow:
    topic: str
    partition: int
    current_offset: int | None
    new_offset: int
    log_start_offset: int
    log_end_offset: int
    clamped: bool = False
    note: str = ""
    metadata: str = ""                 # the committed metadata, kept by the reset

    @property
    def lag_after(self) -> int:
        return self.log_end_offset - self.new_offset


@dataclass(frozen=True)
class ResetPlan:
    group_id: str
    coordinator: int
    state: str
    spec: ResetSpec
    rows: list[ResetRow]
    members: list[str] = field(default_factory=list)   # "member id (client id @ host)" of live members

    @property
    def refusal(self) -> str | None:
        """Why Kafka would refuse to commit this plan now (None: it would not)."""
        if not self.members:
            return None
        return (f"Kafka resets offsets only while a group has no members, and {self.group_id} has "
                f"{len(self.members)} ({self.state}): {'; '.join(self.members)}. Stop these consumers first.")

    def audit_details(self) -> dict:
        listed = [f"{r.topic}-{r.partition}: {r.current_offset if r.current_offset is not None else '-'} -> "
                  f"{r.new_offset}" for r in self.rows[:MAX_PARTITIONS_LISTED]]
        return {"partitions": len(self.rows), "changes": listed, "clamped": sum(r.clamped for r in self.rows)}


def new_offset(spec: ResetSpec, *, current: int | None, start: int, end: int, found: int | None,
               where: str = "a partition") -> tuple[int, str]:
    """(the offset before clamping, a note); found: ListOffsets by timestamp for `datetime`."""
    if spec.target == "earliest":
        return start, ""
    if spec.target == "latest":
        return end, ""
    if spec.target == "datetime":
        if found is None or found < 0:
            return end, "no record at or after that time: the log end offset"
        return found, ""
    if spec.target == "offset":
        return spec.offset, ""
    if current is None:
        raise InvalidInput(f"Cannot shift {where}: the group has no committed offset there "
                           "(as kafka-consumer-groups.sh, a shift starts from the committed offset).")
    return current + spec.shift, ""


def plan_row(spec: ResetSpec, *, topic: str, partition: int, committed: CommittedOffset | None, start: int, end: int,
             found: int | None = None) -> ResetRow:
    current = committed.offset if committed else None
    raw, note = new_offset(spec, current=current, start=start, end=end, found=found, where=f"{topic}-{partition}")
    clamped = False
    if raw < start:
        raw, clamped, note = start, True, f"{raw} is before the log start offset: clamped to {start}"
    elif raw > end:
        raw, clamped, note = end, True, f"{raw} is past the log end offset: clamped to {end}"
    return ResetRow(topic=topic, partition=partition, current_offset=current, new_offset=raw, log_start_offset=start,
                    log_end_offset=end, clamped=clamped, note=note, metadata=committed.metadata if committed else "")


def reset_plan(gw: Gateway, *, cluster_name: str, group_id: str, spec: ResetSpec) -> ResetPlan:
    spec.check()
    coordinator = group_coordinator(gw, group_id)
    described = gw.groups.describe_groups({group_id: coordinator})[group_id]
    fetched = gw.groups.committed_offsets({group_id: coordinator})
    if group_id in fetched.errors:
        raise GatewayError(f"Committed offsets of {group_id!r}: {fetched.errors[group_id]}")
    committed = fetched.offsets.get(group_id, {})
    if described.error:
        raise GatewayError(f"Group {group_id!r} could not be described: {described.error}")
    if not described.is_known and not committed:
        raise NotFound(f"Cluster {cluster_name} has no consumer group {group_id!r}.")
    partitions = _chosen_partitions(gw, spec, committed)
    earliest = _offsets(gw, partitions, EARLIEST_TIMESTAMP)
    latest = _offsets(gw, partitions, LATEST_TIMESTAMP)
    found = _offsets(gw, partitions, spec.timestamp_ms) if spec.target == "datetime" else {}
    rows = [plan_row(spec, topic=p.topic, partition=p.partition, committed=committed.get((p.topic, p.partition)),
                     start=earliest[(p.topic, p.partition)], end=latest[(p.topic, p.partition)],
                     found=found.get((p.topic, p.partition))) for p in partitions]
    return ResetPlan(group_id=group_id, coordinator=coordinator, state=described.state, spec=spec, rows=rows,
                     members=[member_label(m) for m in described.members])


def member_label(m: GroupMember) -> str:
    return f"{m.member_id} ({m.client_id} @ {client_host_shown(m.client_host)})"


def delete_refusal(group_id: str, members: list[GroupMember]) -> str | None:
    """Why Kafka would refuse to delete the group now (NON_EMPTY_GROUP), None when it would not:
    the delete page says it before the id is typed, and the service before the request."""
    if not members:
        return None
    return (f"Kafka deletes only groups without members, and {group_id} has {len(members)}: "
            f"{'; '.join(map(member_label, members))}. Stop these consumers first.")


def group_coordinator(gw: Gateway, group_id: str) -> int:
    coordinators = gw.groups.find_coordinators([group_id])
    if group_id not in coordinators.found:
        raise GatewayError(f"No coordinator for group {group_id!r}: {coordinators.errors.get(group_id, 'unknown')}")
    return coordinators.found[group_id]


def _chosen_partitions(gw: Gateway, spec: ResetSpec, committed: dict) -> list[PartitionInfo]:
    if spec.scope == "all":
        topics = sorted({t for t, _ in committed})
        if not topics:
            raise InvalidInput("The group has no committed offsets: choose a topic to reset.")
        return [p for t in gw.metadata(topics).topics for p in t.partitions if (p.topic, p.partition) in committed]
    topic = gw.metadata([spec.topic]).topic(spec.topic)
    if topic is None:
        raise InvalidInput(f"There is no topic {spec.topic!r}.")
    if spec.scope == "topic":
        return list(topic.partitions)
    existing = {p.partition: p for p in topic.partitions}
    unknown = sorted(set(spec.partitions) - set(existing))
    if unknown:
        raise InvalidInput(f"{spec.topic} has no partition {', '.join(map(str, unknown))} "
                           f"(it has 0-{len(existing) - 1}).")
    return [existing[p] for p in sorted(set(spec.partitions))]


def _offsets(gw: Gateway, partitions: list[PartitionInfo], timestamp: int) -> dict[tuple[str, int], int]:
    answer = gw.groups.log_offsets(partitions, timestamp=timestamp)
    if answer.errors:
        (topic, partition), reason = next(iter(answer.errors.items()))
        raise GatewayError(f"Offsets of {topic}-{partition} are unknown: {reason}")
    return answer.offsets
