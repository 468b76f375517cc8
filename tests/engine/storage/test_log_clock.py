"""The log reads the engine's clock (engine/clock.py) when no time is passed, so a test's
manual clock governs it as it governs the rest of the engine."""
from engine import clock
from engine.clock import ManualClock

from .conftest import make_batch, values

MANUAL_MS = 1_000_000_000_000      # 2001: far from any real "now"


def test_a_log_restarted_without_a_time_stamps_its_new_segment_with_the_engine_clock(open_log):
    log = open_log()
    log.append(make_batch(values(3)), leader_epoch=0, now_ms=MANUAL_MS)
    with clock.use(ManualClock(MANUAL_MS)) as manual:
        manual.advance(5_000)
        log.truncate_fully_and_start_at(10)
    assert log.active_segment.created_ms == MANUAL_MS + 5_000
