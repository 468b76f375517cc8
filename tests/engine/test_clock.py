"""The engine's clock: the system's by default, a manual one where a test swaps it in."""
import time

import pytest

from engine import clock
from engine.clock import ManualClock


def test_the_default_clock_is_the_wall_clock():
    assert abs(clock.now_ms() - time.time() * 1000) < 60_000


def test_a_manual_clock_moves_only_when_told_and_is_restored_afterwards():
    with clock.use(ManualClock(1_000)) as manual:
        assert clock.now_ms() == 1_000
        manual.advance(250)
        assert clock.now_ms() == 1_250
        with pytest.raises(ValueError):
            manual.advance(-1)
    assert clock.now_ms() > 1_600_000_000_000


def test_callers_see_the_swapped_clock():
    """Modules that imported `now_ms` by name still ask the current clock."""
    from engine.coordinator import membership
    with clock.use(ManualClock(42)):
        assert membership.now_ms() == 42
