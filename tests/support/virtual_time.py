"""An asyncio event loop on virtual time, for code whose timers are `loop.call_later` handles.

The loop's clock stands still while anything is ready to run, and when nothing is, it jumps
straight to the next timer instead of sleeping. Timers therefore fire in the order of their
deadlines however loaded the machine is, and a 60 ms session timeout costs no real time.
Only the event loop's clock is virtual: wall-clock stamps (`time.time()`) stay real.
"""
from __future__ import annotations

import asyncio
import selectors


class _JumpingSelector:
    """Wraps the loop's selector: a wait for the next timer becomes a jump of the clock."""

    def __init__(self, selector: selectors.BaseSelector, loop: VirtualTimeLoop) -> None:
        self._selector = selector
        self._loop = loop

    def select(self, timeout=None):
        if timeout is None:   # no timer pending: only I/O (or a thread) can wake the loop
            return self._selector.select(None)
        events = self._selector.select(0)
        if not events and timeout > 0:
            self._loop.advance(timeout)
        return events

    def __getattr__(self, name):
        return getattr(self._selector, name)


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__(selectors.DefaultSelector())
        self._virtual_now = 0.0
        self._selector = _JumpingSelector(self._selector, self)

    def time(self) -> float:
        return self._virtual_now

    def advance(self, seconds: float) -> None:
        self._virtual_now += seconds


def run_in_virtual_time(coroutine):
    """asyncio.run() on a VirtualTimeLoop."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(coroutine)
