"""Bounded waits for a condition: the one way tests wait for the engine."""
from __future__ import annotations

import time


def wait_until(condition, timeout: float = 30.0, interval: float = 0.05, message: str = "condition"):
    """Poll `condition` until it returns something truthy, and return that value; fail after
    `timeout` seconds (a bound for a hung engine, not a performance threshold)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        time.sleep(interval)
