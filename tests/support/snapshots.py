"""For tests of the console's background snapshots (console.kafka_gateway.cache): a clock the
test moves, and a collection held back while a page is asked."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class FakeClock:
    """A monotonic clock for the caches, moved by the test (`clock.now += 10`)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@contextmanager
def collection_held(monkeypatch, module) -> Iterator[None]:
    """Inside the block, `module.collect` waits (60 s at most) before it collects: a page asked
    there finds the first collection still running past its wait."""
    release = threading.Event()
    real_collect = module.collect

    def held_collect(*args):
        release.wait(60)
        return real_collect(*args)

    monkeypatch.setattr(module, "collect", held_collect)
    try:
        yield
    finally:
        release.set()
