"""The worker threads' time on the request the event loop is handling.

Some of a request's work runs on worker threads, not on the loop: the checks of compressed
batches (engine/broker/record_checks.py), the decoding and encoding of big requests and
answers (engine/protocol/big_requests.py). A request quota (KIP-124,
engine/protocol/request_quota.py) counts that time too, as Kafka counts its request handler
threads' time on a request, whichever thread does the work.

Dispatch opens a `WorkerTime` for a request that has a request quota (`counting`, a context
variable of the request's task); `run` times each piece of work it sends to a thread while
one is open, and adds the time to it on the loop when the work finishes (or fails). Without
one - no quota - nothing is timed. Tasks the handler starts inherit it; work of a request
cancelled before its thread finished is not counted.

The time is the worker thread's CPU time (`time.thread_time`), not wall time: a worker
waits for the GIL while the loop, or another worker, runs other clients' requests, and
wall time would charge that wait to this client.

A `WorkerTime` is owned by the event loop: only `run`, on the loop, adds to it.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from concurrent.futures import Executor
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")


class WorkerTime:
    """Seconds of worker-thread CPU time spent on one request, not yet taken."""

    __slots__ = ("spent",)

    def __init__(self) -> None:
        self.spent = 0.0

    def take(self) -> float:
        """The time counted since the last take."""
        spent, self.spent = self.spent, 0.0
        return spent


_open: contextvars.ContextVar[WorkerTime | None] = contextvars.ContextVar("worker_time", default=None)


@contextlib.contextmanager
def counting(into: WorkerTime) -> Iterator[WorkerTime]:
    """Within: the work `run` sends to threads counts into `into`."""
    token = _open.set(into)
    try:
        yield into
    finally:
        _open.reset(token)


async def run(executor: Executor, work: Callable[..., T], *args) -> T:
    """work(*args) on one of `executor`'s threads, its time counted for the current request."""
    into = _open.get()
    loop = asyncio.get_running_loop()
    if into is None:          # no quota on the request: not timed at all
        return await loop.run_in_executor(executor, work, *args)
    took: list[float] = []
    try:
        return await loop.run_in_executor(executor, _timed, took, work, args)
    finally:
        into.spent += sum(took)


def _timed(took: list[float], work: Callable[..., T], args: tuple) -> T:
    """On the worker thread: work(*args), its thread's CPU time appended to `took`."""
    started = time.thread_time()
    try:
        return work(*args)
    finally:
        took.append(time.thread_time() - started)
