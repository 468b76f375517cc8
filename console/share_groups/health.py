"""Queue health of a share group, Burrow-style: each share partition is judged on its last
snapshots (the analytics lake's `share_group_partitions`, one row per partition per snapshot),
and the group's status is its worst partition's. Pure functions of the samples.

Flags, each with the sentence that says why:
- POISON: records were archived after reaching the delivery limit (or rejected) during the
  window: records that keep failing, whatever consumer gets them.
- LOCKS: acquisition locks expired in at least half of the window's intervals: consumers keep
  records longer than `share.record.lock.duration.ms`, or die holding them.
- STALLED: the start offset did not move during the whole window while records waited: the
  oldest in-flight record holds the queue back.
OK otherwise, saying how far the start offset moved. The counters (archived, lock expiries)
come from the bundled engine's admin interface; on another cluster they are unknown, and
only STALLED can be judged. Counters restart from 0 when a partition's leader changes: a
drop is read as a restart, never as a negative rise.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.template.defaultfilters import pluralize

OK, POISON, LOCKS, STALLED, UNKNOWN = "OK", "POISON", "LOCKS", "STALLED", "UNKNOWN"
SEVERITIES = {UNKNOWN: 0, OK: 1, LOCKS: 2, STALLED: 3, POISON: 4}
WINDOW = 10                    # snapshots, as Burrow's default `intervals`


@dataclass(frozen=True)
class Sample:
    """One snapshot of one share partition; None where the cluster does not tell."""
    ts: float                  # epoch seconds
    start_offset: int
    lag: int | None
    archived_poison: int | None      # archived at the delivery limit or rejected, so far
    lock_expiries: int | None


@dataclass(frozen=True)
class Flag:
    status: str
    reason: str


@dataclass(frozen=True)
class PartitionHealth:
    topic: str
    partition: int
    status: str                # the worst flag's status
    flags: tuple[Flag, ...]


def rise(values: list[int | None]) -> tuple[int, int]:
    """(total rise, intervals that rose) of a counter that may restart from 0 (leader change)."""
    total = rising = 0
    for before, after in zip(values, values[1:]):
        if before is None or after is None:
            continue
        step = after - before if after >= before else after     # a restart counts what came since
        if step > 0:
            total += step
            rising += 1
    return total, rising


def evaluate(samples: list[Sample], *, lock_duration_ms: int | None = None) -> tuple[str, tuple[Flag, ...]]:
    """The partition's status and flags over its last WINDOW samples (oldest first)."""
    window = sorted(samples, key=lambda s: s.ts)[-WINDOW:]
    if len(window) < 2:
        return UNKNOWN, (Flag(UNKNOWN, f"{len(window)} snapshot{pluralize(len(window))} so far: at least 2 are needed to judge."),)
    span = _span(window[-1].ts - window[0].ts)
    flags = []
    poison = [s.archived_poison for s in window]
    if all(v is not None for v in poison):
        archived, _ = rise(poison)
        if archived:
            flags.append(Flag(POISON, f"{archived:,} record{pluralize(archived)} archived in the last {span} after reaching the "
                                      "delivery limit or being rejected: records that fail whoever gets them "
                                      "(poison records)."))
    expiries = [s.lock_expiries for s in window]
    if all(v is not None for v in expiries):
        expired, rising = rise(expiries)
        if expired and rising * 2 >= len(window) - 1:
            lock = f" ({lock_duration_ms / 1000:g} s)" if lock_duration_ms else ""
            flags.append(Flag(LOCKS, f"Acquisition locks expired {expired:,} time{pluralize(expired)}, in {rising} of the last "
                                     f"{len(window) - 1} intervals ({span}): consumers hold records longer than "
                                     f"share.record.lock.duration.ms{lock}, or stop while holding them."))
    starts = {s.start_offset for s in window}
    waiting = [s.lag for s in window]
    if len(starts) == 1 and all(lag is not None and lag > 0 for lag in waiting):
        flags.append(Flag(STALLED, f"The start offset stayed at {window[0].start_offset:,} for {span} while "
                                   f"{waiting[-1]:,} record{pluralize(waiting[-1])} waited: the oldest record in flight holds the "
                                   "queue back."))
    if not flags:
        moved = window[-1].start_offset - window[0].start_offset
        unknown = "" if all(v is not None for v in poison + expiries) else \
            " Archived records and lock expiries are not known for this cluster."
        flags.append(Flag(OK, f"The start offset moved {moved:,} in {span}; nothing archived, no lock expired."
                          if not unknown else f"The start offset moved {moved:,} in {span}.{unknown}"))
    worst = max(flags, key=lambda f: SEVERITIES[f.status])
    return worst.status, tuple(flags)


def group_status(partitions: list[PartitionHealth]) -> str:
    return max((p.status for p in partitions), key=SEVERITIES.get, default=UNKNOWN)


def _span(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"
