"""The engine's wall clock, in one place so that tests can control it.

Code that stamps or compares wall-clock times (record timestamps, group session expiry,
offset retention, producer expiry) calls `now_ms()`. Tests swap the clock with `use()`:

    with clock.use(ManualClock(1_700_000_000_000)) as manual:
        ...
        manual.advance(30_000)

Interval timers (asyncio.sleep) are the event loop's business and are not covered here.
"""
from __future__ import annotations

import contextlib
import time
from typing import Iterator, Protocol


class Clock(Protocol):
    def now_ms(self) -> int: ...


class SystemClock:
    def now_ms(self) -> int:
        return int(time.time() * 1000)


class ManualClock:
    """A clock that moves only when told to."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now_ms = start_ms

    def now_ms(self) -> int:
        return self._now_ms

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError("a clock does not go back")
        self._now_ms += ms
        return self._now_ms

    def set(self, now_ms: int) -> None:
        self._now_ms = now_ms


_clock: Clock = SystemClock()


def now_ms() -> int:
    return _clock.now_ms()


def current() -> Clock:
    return _clock


@contextlib.contextmanager
def use(clock: Clock) -> Iterator[Clock]:
    """Make `clock` the engine's clock inside the `with` block."""
    global _clock
    previous, _clock = _clock, clock
    try:
        yield clock
    finally:
        _clock = previous
