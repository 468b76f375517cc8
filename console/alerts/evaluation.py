"""Which subjects breach a rule in one observation: pure functions, no database.

`breaches(rule, observation, now)` answers {subject: value} for the subjects over the rule's
threshold, and `worst(...)` the value the rule's sparkline shows. Subjects and values:

- group rules (lag, time lag, Burrow status, catch-up): each group the target matches, by its
  id; the group's lag (records), max time lag (s), Burrow code (group status, or the partition
  status that matched), catch-up time (s, +inf when not gaining);
- under-replicated / offline partitions: each matching topic, by name; the count of its
  partitions in that state;
- broker down: each broker id named as a replica but not live; 1;
- log dir usage: each "broker <id> <dir>" whose used share of the volume (1 - usable/total,
  DescribeLogDirs v4) is above the threshold (0-1);
- uncleanable partitions: each "broker <id>" with more partitions its log cleaner gave up on
  than the threshold (our engine says which in a broker config; no Kafka API does);
- hanging transaction: each "topic-partition" whose oldest open transaction's producer last
  wrote more than threshold seconds ago (Kafka's find-hanging uses transaction.max.timeout.ms,
  15 minutes).

Targets match group ids or topic names exactly, by prefix, or with an RE2 regex (google-re2:
linear time, so a user's pattern cannot hang a worker); `matcher` compiles one per rule.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import re2

from console.metrics.assessment import BURROW_CODES

GROUP_KINDS = ("group_lag", "group_time_lag", "group_status", "catch_up")
TOPIC_KINDS = ("under_replicated", "offline", "hanging_transaction")
BURROW_CHOICES = ("WARN", "ERR", "STALL", "STOP")


def matcher(target_type: str, target: str) -> Callable[[str], bool]:
    if target_type == "exact":
        return lambda name: name == target
    if target_type == "prefix":
        return lambda name: name.startswith(target)
    if target_type == "regex":
        pattern = re2.compile(target)
        return lambda name: pattern.fullmatch(name) is not None
    return lambda name: True


class Targets:
    """The names each target matches, worked out once per round: rules often share a prefix
    or a regex, and RE2's Python binding costs microseconds a call."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str, int], list[str]] = {}

    def matching(self, target_type: str, target: str, names) -> list[str]:
        key = (target_type, target, id(names))
        found = self._found.get(key)
        if found is None:
            if target_type == "exact":
                found = [target] if target in names else []
            else:
                match = matcher(target_type, target)
                found = [n for n in names if match(n)]
            self._found[key] = found
        return found


def breaches(rule, observation, now: float, targets: Targets | None = None) -> dict[str, float]:
    targets = targets or Targets()
    match = matcher(rule.target_type, rule.target)
    assessment = observation.assessment
    if assessment is None or observation.metadata is None:
        return {}
    kind, threshold = rule.kind, rule.threshold
    if kind in GROUP_KINDS:
        return _group_breaches(rule, assessment.groups, targets.matching(rule.target_type, rule.target,
                                                                           assessment.groups))
    if kind == "under_replicated":
        return _count_by_topic(assessment.under_replicated, match, threshold)
    if kind == "offline":
        return _count_by_topic(assessment.offline, match, threshold)
    if kind == "broker_down":
        return {f"broker {b}": 1.0 for b in assessment.brokers_down}
    if kind == "log_dir_usage":
        found = {}
        for d in observation.log_dirs:
            if d.total_bytes > 0 and d.usable_bytes >= 0:
                used = 1 - d.usable_bytes / d.total_bytes
                if used > threshold:
                    found[f"broker {d.broker_id} {d.log_dir}"] = used
        return found
    if kind == "uncleanable":
        return {f"broker {b}": float(len(p)) for b, p in observation.uncleanable.items() if len(p) > threshold}
    if kind == "hanging_transaction":
        found = {}
        for (topic, partition), last_ms in observation.open_transactions.items():
            age = now - last_ms / 1000
            if age > threshold and match(topic):
                found[f"{topic}-{partition}"] = age
        return found
    return {}


def _group_breaches(rule, groups, matched: list[str]) -> dict[str, float]:
    found, rule.peak = {}, 0.0
    kind, threshold = rule.kind, rule.threshold
    wanted = {s.strip() for s in rule.statuses.split(",") if s.strip()}
    for group_id in matched:
        g = groups[group_id]
        if kind == "group_lag":
            value = g.lag
        elif kind == "group_time_lag":
            if g.max_time_lag is None:
                continue
            value = g.max_time_lag
        elif kind == "catch_up":
            if g.catch_up_seconds is None:
                continue
            value = g.catch_up_seconds
        else:
            hit = ({g.status} | set(g.partition_statuses)) & wanted
            if hit:
                found[group_id] = float(max(BURROW_CODES[s] for s in hit))
            continue
        rule.peak = max(rule.peak, float(value))
        if value > threshold:
            found[group_id] = float(value)
    return found


def _count_by_topic(partitions, match, threshold: float) -> dict[str, float]:
    counts: dict[str, float] = {}
    for topic, _ in partitions:
        if match(topic):
            counts[topic] = counts.get(topic, 0.0) + 1
    return {t: n for t, n in counts.items() if n > threshold}


def worst(rule, found: dict[str, float]) -> float:
    """The sparkline's value: the largest value of the subjects the rule looks at (for group
    rules, breaching or not, so a lag's trend shows before it fires), 0 when none; infinite
    catch-up times are drawn at the top as 1e12."""
    value = max([*found.values(), getattr(rule, "peak", 0.0)], default=0.0)
    return value if not math.isinf(value) else 1e12
