"""How long the engine's event loop stalls while it applies big metadata changes.

A 3-broker engine in this process (so the benchmark can time its event loop); CreateTopics of
one topic with --partitions partitions x 3 replicas, CreatePartitions doubling it, then
DeleteTopics; for each, the wall time to the answer, the longest single callback the loop ran
(one turn of one task, in CPU time of the loop's thread: what the slicing bounds), and the longest gap between two wake-ups of
a probe task sleeping 1 ms (what another connection would have waited; it includes the
garbage collector's full collections and, on a loaded machine, time the process was not
scheduled at all).
Peer: none in the same run (the mock cluster keeps metadata in C and has no event loop);
the figure to compare with is the 50 ms slice the engine aims at.

    .venv/bin/python benchmarks/big_metadata.py [--partitions 3000]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kafka.protocol.admin import (CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest,  # noqa: E402
                                  CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse)

from tests.support.in_process_engine import InProcessEngine  # noqa: E402
from tests.support.raw_client import RawClient  # noqa: E402


class CallbackTimer:
    """Times every callback of the event loop (asyncio's Handle._run) in CPU time of the loop's
    thread (so a loaded machine that deschedules the process does not inflate it), keeping
    the longest and what it ran."""

    def __init__(self) -> None:
        self.longest, self.what = 0.0, ""
        real = asyncio.events.Handle._run
        timer = self

        def timed_run(handle):
            started = time.thread_time()
            real(handle)
            spent = time.thread_time() - started
            if spent > timer.longest:
                timer.longest, timer.what = spent, _describe(handle)
        asyncio.events.Handle._run = timed_run


def _describe(handle) -> str:
    task = getattr(handle._callback, "__self__", None)
    coro = task.get_coro() if isinstance(task, asyncio.Task) else None
    return getattr(coro, "__qualname__", "") or getattr(handle._callback, "__qualname__", "?")


class LoopProbe:
    """A task on the engine's loop that wakes every millisecond and keeps the longest gap."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            self.longest = max(self.longest, now - last)
            last = now

    async def reset(self) -> None:
        self.longest = 0.0

    async def stop(self) -> None:
        self._task.cancel()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=3000)
    args = parser.parse_args()
    n = args.partitions
    with tempfile.TemporaryDirectory() as tmp, \
            InProcessEngine(Path(tmp), brokers=3, admin=False, configs={"max.partitions": str(3 * n)}) as running:
        probe, callbacks = LoopProbe(), CallbackTimer()
        running.call(probe.start())
        client = RawClient(running.engine.ports[0], timeout=300)
        T = CreateTopicsRequest.CreatableTopic
        P = CreatePartitionsRequest.CreatePartitionsTopic
        steps = [
            (f"CreateTopics {n} x 3", lambda: client.request(CreateTopicsRequest(
                topics=[T(name="big", num_partitions=n, replication_factor=3, assignments=[], configs=[])],
                timeout_ms=300000, validate_only=False), 5, CreateTopicsResponse).topics[0].error_code),
            (f"CreatePartitions to {2 * n}", lambda: client.request(CreatePartitionsRequest(
                topics=[P(name="big", count=2 * n, assignments=None)], timeout_ms=300000, validate_only=False),
                1, CreatePartitionsResponse).results[0].error_code),
            (f"DeleteTopics ({2 * n} x 3)", lambda: client.request(DeleteTopicsRequest(
                topic_names=["big"], timeout_ms=300000), 4, DeleteTopicsResponse).responses[0].error_code),
        ]
        for name, step in steps:
            time.sleep(3)                    # let the brokers open the logs of the step before
            running.call(probe.reset())
            callbacks.longest = 0.0
            started = time.perf_counter()
            assert step() == 0, name
            elapsed = time.perf_counter() - started
            time.sleep(3)                    # the brokers' sliced work after the answer
            print(f"{name:28} answered in {elapsed * 1000:6.0f} ms; longest callback "
                  f"{callbacks.longest * 1000:4.0f} ms CPU ({callbacks.what}); longest probe gap "
                  f"{probe.longest * 1000:4.0f} ms")
        client.close()
        running.call(probe.stop())
    return 0


if __name__ == "__main__":
    sys.exit(main())
