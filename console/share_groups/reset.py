"""Start offset reset plans for share groups, with the meaning of `kafka-share-groups.sh
--reset-offsets` (and the engine's `share-groups --reset-offsets`):

- targets: `earliest` (the log start offset), `latest` (the high watermark), `datetime` (the
  first offset whose record is at or after the time; the high watermark when there is none),
  `offset` N;
- scopes: every share partition the group has state for, or every partition of one topic;
- an offset before the log start or past the high watermark is clamped, and the plan says so;
- Kafka sets a share group's start offsets only while the group has no members: the plan names them.

`share_reset_plan` is a read (the preview); `console.share_groups.services.share_group_reset`
rebuilds it and applies it with AlterShareGroupOffsets.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from console.errors import InvalidInput, NotFound
from console.formatting import timestamp_utc
from console.groups.members import client_host_shown
from console.kafka_gateway import Gateway, GatewayError
from console.kafka_gateway.group_records import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

TARGETS = {"earliest": "the earliest offset", "latest": "the latest offset", "datetime": "a date and time",
           "offset": "a given offset"}
SCOPES = {"all": "every topic of the group", "topic": "one topic"}


@dataclass(frozen=True)
class ShareResetSpec:
    target: str
    scope: str = "all"
    topic: str = ""
    offset: int | None = None
    timestamp_ms: int | None = None

    def check(self) -> None:
        if self.target not in TARGETS:
            raise InvalidInput(f"Unknown reset target {self.target!r}: use one of {', '.join(TARGETS)}.")
        if self.scope not in SCOPES:
            raise InvalidInput(f"Unknown scope {self.scope!r}: use one of {', '.join(SCOPES)}.")
        if self.scope == "topic" and not self.topic:
            raise InvalidInput("Name the topic to reset.")
        if self.target == "offset" and self.offset is None or self.target == "datetime" and self.timestamp_ms is None:
            raise InvalidInput(f"The target {TARGETS[self.target]} needs a value.")

    def summary(self) -> str:
        """In a person's words: "the earliest offset, every topic", "the first offset at or after
        2026-11-27 14:00:00 UTC, topic orders"."""
        target = {"offset": f"offset {self.offset}",
                  "datetime": f"the first offset at or after {timestamp_utc(self.timestamp_ms)}"}.get(
            self.target, TARGETS.get(self.target, self.target))
        return f"{target}, {'every topic' if self.scope == 'all' else 'topic ' + self.topic}"


@dataclass(frozen=True)
class ShareResetRow:
    topic: str
    partition: int
    current_start_offset: int | None
    new_start_offset: int
    log_start_offset: int
    high_watermark: int
    note: str = ""

    @property
    def lag_after(self) -> int:
        return max(self.high_watermark - self.new_start_offset, 0)


@dataclass(frozen=True)
class SharePlan:
    group_id: str
    spec: ShareResetSpec
    state: str
    coordinator: int
    members: list[str]
    rows: list[ShareResetRow] = field(default_factory=list)

    @property
    def refusal(self) -> str | None:
        if self.members:
            return (f"Kafka sets a share group's start offsets only while it has no members, and "
                    f"{self.group_id} has {len(self.members)}: {'; '.join(self.members)}. Stop them first.")
        if not self.rows:
            return "The reset names no share partition: choose a topic the group reads, or one that exists."
        return None

    def audit_details(self) -> dict:
        return {"state": self.state, "partitions": [f"{r.topic}-{r.partition}: {r.current_start_offset} -> "
                                                    f"{r.new_start_offset}" for r in self.rows[:50]]}


def share_reset_plan(gw: Gateway, *, cluster_name: str, group_id: str, spec: ShareResetSpec) -> SharePlan:
    spec.check()
    found = gw.groups.find_coordinators([group_id])
    if group_id not in found.found:
        raise GatewayError(f"No coordinator for group {group_id!r}: {found.errors.get(group_id, 'unknown')}")
    coordinator = found.found[group_id]
    info = gw.share_groups.describe({group_id: coordinator})[group_id]
    if info.error is not None:
        if "GROUP_ID_NOT_FOUND" in info.error:
            raise NotFound(f"Cluster {cluster_name} has no share group {group_id!r}.")
        raise GatewayError(f"Share group {group_id!r} could not be described: {info.error}")
    offsets = gw.share_groups.offsets({group_id: coordinator})
    current = {(o.topic, o.partition): o.start_offset for o in offsets.offsets.get(group_id, [])
               if o.start_offset >= 0}
    metadata = gw.metadata(sorted({t for t, _ in current} | ({spec.topic} if spec.scope == "topic" else set())))
    partitions = {(p.topic, p.partition): p for t in metadata.topics for p in t.partitions}
    if spec.scope == "topic":
        if spec.topic not in {t.name for t in metadata.topics}:
            raise InvalidInput(f"Cluster {cluster_name} has no topic {spec.topic!r}.")
        wanted = sorted(tp for tp in partitions if tp[0] == spec.topic)
    else:
        wanted = sorted(tp for tp in current if tp in partitions)
    chosen = [partitions[tp] for tp in wanted]
    starts = gw.groups.log_offsets(chosen, timestamp=EARLIEST_TIMESTAMP).offsets
    ends = gw.groups.log_offsets(chosen, timestamp=LATEST_TIMESTAMP).offsets
    found_at = gw.groups.log_offsets(chosen, timestamp=spec.timestamp_ms).offsets \
        if spec.target == "datetime" else {}
    rows = []
    for tp in wanted:
        if tp not in starts or tp not in ends:
            continue
        low, high = starts[tp], ends[tp]
        target = {"earliest": low, "latest": high, "offset": spec.offset,
                  "datetime": found_at.get(tp, -1) if found_at.get(tp, -1) >= 0 else high}[spec.target]
        new = min(max(target, low), high)
        note = "" if new == target else f"clamped to the log's range [{low}, {high}]"
        rows.append(ShareResetRow(tp[0], tp[1], current.get(tp), new, low, high, note))
    members = [f"{m.client_id} ({m.member_id}) on {client_host_shown(m.client_host)}" for m in info.members]
    return SharePlan(group_id, spec, info.state, coordinator, members, rows)
