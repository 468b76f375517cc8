"""Recent timings of one kind (a request type's total time, log flushes), for percentiles.

Kafka's Yammer histograms keep a decaying sample of 1,028 values; this keeps the last
`size` values in a ring (Dropwizard's SlidingWindowReservoir), plus the count and sum of all
of them. `record` is the hot path: one store, two additions. Percentiles are computed only
when a scrape asks (`snapshot`).

Not locked: written from the event loop (and, for log flushes, from a log thread now and
then); a sample lost to a race between two writers moves no percentile that matters.
"""
from __future__ import annotations

from dataclasses import dataclass

QUANTILES = (0.5, 0.75, 0.95, 0.98, 0.99, 0.999)     # the percentiles Kafka's MBeans expose
DEFAULT_SIZE = 1024


@dataclass(frozen=True)
class ReservoirSnapshot:
    count: int
    total: float
    quantiles: tuple[tuple[float, float], ...]        # ((0.5, value), ...); values 0 when empty


class Reservoir:
    __slots__ = ("_values", "_mask", "count", "total")

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        if size <= 0 or size & (size - 1):
            raise ValueError(f"reservoir size must be a power of two, not {size}")
        self._values = [0.0] * size
        self._mask = size - 1
        self.count = 0
        self.total = 0.0

    def record(self, value: float) -> None:
        self._values[self.count & self._mask] = value
        self.count += 1
        self.total += value

    def snapshot(self) -> ReservoirSnapshot:
        count = self.count
        recent = sorted(self._values[:min(count, self._mask + 1)])
        return ReservoirSnapshot(count, self.total, tuple((q, _quantile(recent, q)) for q in QUANTILES))


def _quantile(ordered: list[float], q: float) -> float:
    """Dropwizard's Snapshot.getValue: linear interpolation between the two nearest ranks."""
    if not ordered:
        return 0.0
    pos = q * (len(ordered) + 1)
    if pos < 1:
        return ordered[0]
    if pos >= len(ordered):
        return ordered[-1]
    lower = ordered[int(pos) - 1]
    upper = ordered[int(pos)]
    return lower + (pos - int(pos)) * (upper - lower)
