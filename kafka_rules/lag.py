"""Consumer lag, as Kafka's `kafka-consumer-groups.sh` computes it.

Lag is the partition's log end offset as a consumer sees it (the high watermark; for a
read_committed consumer, the last stable offset) minus the group's committed offset. It is
unknown when either is (a negative offset is Kafka's "none").
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def lag(log_end_offset: int | None, committed_offset: int | None) -> int | None:
    """Log end offset minus committed offset; None when either is unknown (shown as "-")."""
    if log_end_offset is None or log_end_offset < 0 or committed_offset is None or committed_offset < 0:
        return None
    return log_end_offset - committed_offset


def total_lag(lags: Iterable[int | None]) -> int | None:
    """The sum of the known lags; None when none is known. A committed offset past the log end
    (an offset set ahead, or records deleted after the commit) has a negative lag, which
    kafka-consumer-groups.sh prints as it is; in a total it counts as 0, so it never hides
    another partition's lag (Redpanda Console and Burrow count it so too)."""
    known = [max(0, value) for value in lags if value is not None]
    return sum(known) if known else None


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    lag: int
