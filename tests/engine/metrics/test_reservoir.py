"""The ring of recent timings: its percentiles against a sorted-list reference, its window,
and its lifetime count and sum."""
from __future__ import annotations

import random

import pytest

from engine.metrics.reservoir import QUANTILES, Reservoir
from engine.metrics.stats import BrokerStats


def reference(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = q * (len(ordered) + 1)
    if pos < 1:
        return ordered[0]
    if pos >= len(ordered):
        return ordered[-1]
    low, high = ordered[int(pos) - 1], ordered[int(pos)]
    return low + (pos - int(pos)) * (high - low)


def test_percentiles_of_the_last_values_only():
    rng = random.Random(7)
    reservoir = Reservoir(size=256)
    old = [1000.0 + rng.random() for _ in range(500)]
    recent = [rng.expovariate(1 / 20) for _ in range(256)]
    for value in old + recent:
        reservoir.record(value)
    snapshot = reservoir.snapshot()
    assert snapshot.count == 756 and snapshot.total == pytest.approx(sum(old) + sum(recent))
    assert [q for q, _ in snapshot.quantiles] == list(QUANTILES)
    for q, value in snapshot.quantiles:
        assert value == pytest.approx(reference(recent, q))
    assert max(v for _, v in snapshot.quantiles) < 1000          # the old values left the window


def test_an_empty_reservoir_and_a_bad_size():
    assert Reservoir().snapshot().quantiles[0] == (0.5, 0.0)
    with pytest.raises(ValueError, match="power of two"):
        Reservoir(size=1000)


def test_deleted_topics_lose_their_counters():
    stats = BrokerStats()
    stats.produced("kept", 3, 300)
    stats.fetched("gone", 10)
    stats.forget_topics({"kept": object()})
    assert list(stats.topics) == ["kept"] and stats.topics["kept"].messages_in == 3
