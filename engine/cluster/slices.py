"""Long work in slices of the event loop, so that other connections are served while it
runs (the controller preparing a change of thousands of partitions, the brokers opening
and deleting thousands of logs).

Each slice runs at most SLICE_S (plus the item it started last). Slices of different tasks
take turns: one slice per loop iteration for the whole loop (a lock per loop), so three
brokers busy at once still leave the loop free every SLICE_S, not every 3 x SLICE_S.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from typing import AsyncIterator, Callable, Iterable, TypeVar

SLICE_S = 0.02      # the aim is that the loop answers other connections at least every 50 ms
T = TypeVar("T")
_TURNS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]" = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def turn() -> AsyncIterator[float]:
    """One slice: waits for the loop's slice turn, yields the slice's deadline (monotonic),
    then gives the loop a turn before the next slice of any task."""
    loop = asyncio.get_running_loop()
    lock = _TURNS.get(loop)
    if lock is None:
        lock = _TURNS[loop] = asyncio.Lock()
    async with lock:
        yield time.monotonic() + SLICE_S
    await asyncio.sleep(0)


async def for_each(items: Iterable[T], action: Callable[[T], None]) -> None:
    """`action(item)` for every item, in slices."""
    iterator = iter(items)
    done = object()
    item = next(iterator, done)
    while item is not done:
        async with turn() as deadline:
            while item is not done and time.monotonic() < deadline:
                action(item)
                item = next(iterator, done)
