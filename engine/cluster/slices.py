"""Long work in slices of the event loop, so that other connections are served while it
runs (the controller preparing a change of thousands of partitions, the brokers opening
and deleting thousands of logs, a request handler's work on a request naming a million topics).

Each slice runs at most SLICE_S (plus the item it started last), and at least one item: a
slice that began late (the process was not scheduled for a while) still makes progress. Slices of different tasks
take turns: one slice per loop iteration for the whole loop (a lock per loop), so three
brokers busy at once still leave the loop free every SLICE_S, not every 3 x SLICE_S.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from typing import AsyncIterator, Callable, Generator, Iterable, TypeVar

from engine.heap import FullCollectionsPaused

SLICE_S = 0.02      # the aim is that the loop answers other connections at least every 50 ms
T = TypeVar("T")
R = TypeVar("R")
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
            while True:         # at least one item a slice, however late the slice began
                action(item)
                item = next(iterator, done)
                if item is done or time.monotonic() >= deadline:
                    break


class Pacer:
    """For work whose entries come one by one (a request handler's): `await pacer.tick()`
    after each entry yields to the loop once SLICE_S of work has run since the last yield,
    after any other task's slice in progress (their turns), and costs a clock read otherwise.

    Used as `with Pacer() as pacer:`, work long enough to yield also pauses full garbage
    collections until the block ends (engine/heap.py: its objects would make them long)."""

    def __init__(self) -> None:
        self._deadline = time.monotonic() + SLICE_S
        self._guarded = False
        self._paused: FullCollectionsPaused | None = None

    def __enter__(self) -> "Pacer":
        self._guarded = True
        return self

    def __exit__(self, *exc_info) -> None:
        if self._paused is not None:
            self._paused.__exit__(None, None, None)
            self._paused = None

    async def tick(self) -> None:
        if time.monotonic() < self._deadline:
            return
        if self._guarded and self._paused is None:
            self._paused = FullCollectionsPaused().__enter__()
        async with turn():
            pass
        self._deadline = time.monotonic() + SLICE_S


async def map_sliced(items: Iterable[T], action: Callable[[T], R], pacer: Pacer | None = None) -> list[R]:
    """[action(item) for item in items], yielding to the loop every SLICE_S (see Pacer)."""
    if pacer is None:
        with Pacer() as own:
            return await map_sliced(items, action, own)
    results: list[R] = []
    for item in items:
        results.append(action(item))
        await pacer.tick()
    return results


# Work written once as steps: a generator that yields between its entries and returns its result.
Steps = Generator[None, None, R]


def run_steps(steps: Steps[R]) -> R:
    """The steps' result, in one go (small work, or off the request path)."""
    while True:
        try:
            next(steps)
        except StopIteration as finished:
            return finished.value


async def run_steps_sliced(steps: Steps[R], pacer: Pacer) -> R:
    """The steps' result, yielding to the loop every SLICE_S between steps (see Pacer)."""
    while True:
        try:
            next(steps)
        except StopIteration as finished:
            return finished.value
        await pacer.tick()
