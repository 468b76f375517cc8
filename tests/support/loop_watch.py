"""Proof, independent of speed, that a long piece of work on the engine's event loop lets
other connections be served while it runs.

Counting another client's answers within the work's time window depends on how fast the
machine is. Instead, the work is made to wait for them: while a watched task runs, some of its
slice turns (engine/cluster/slices.py) wait until the engine has answered a ping of another
connection after the turn began (a bounded wait). Every event is recorded in the order the
event loop saw it: where the watched work starts and ends, and each ping answered. On code
that yields between slices, pings are answered in the middle of the work; on code that does
the work in one turn of the loop, no ping can be answered between its start and its end, and
the watched task never reaches a turn that could wait for one.

    watch = LoopWatch(monkeypatch)
    with watch.pings(running.engine.ports[1]), registry.intercept(3, watch.watched(real_handler)):
        ... send the big request ...
    watch.assert_served_meanwhile()
"""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from typing import Iterator

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from engine.cluster import slices
from engine.protocol import registry
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

PINGER = "loop-watch-pinger"
# The watched task's turns that wait for a ping: spread over work of any length.
WAITING_TURNS = frozenset({1, 3, 10, 30, 100, 300, 1000})
WAIT_BOUND_S = 30.0       # a bound for a loop that never serves the ping, not a speed threshold


class LoopWatch:
    def __init__(self, monkeypatch, *, slice_s: float = 0.001) -> None:
        # Tiny slices, so that work of any size on any machine has many of them.
        monkeypatch.setattr(slices, "SLICE_S", slice_s)
        real_turn = slices.turn
        monkeypatch.setattr(slices, "turn", lambda: self._turn(real_turn))
        self.events: list[str] = []      # "start", "end", "ping", in the loop's order
        self.waits = 0                   # turns of the watched work that waited for a ping
        self.missed = 0                  # waits that reached WAIT_BOUND_S
        self._turns: dict[asyncio.Task, int] = {}
        self._answered: asyncio.Event | None = None

    # --- the work ------------------------------------------------------------------------
    def watch_current_task(self) -> None:
        """From here on, the running task's slice turns may wait for a ping."""
        self._turns.setdefault(asyncio.current_task(), 0)
        self.events.append("start")

    def watched(self, real, *, client_id: str | None = None):
        """A handler for registry.intercept: requests (of `client_id`, if given) are watched
        from the handler's start to its end."""
        async def handler(ctx, request):
            if client_id is not None and ctx.header.client_id != client_id:
                return await real(ctx, request)
            self.watch_current_task()
            try:
                return await real(ctx, request)
            finally:
                self._turns.pop(asyncio.current_task(), None)
                self.events.append("end")
        return handler

    @contextlib.asynccontextmanager
    async def _turn(self, real_turn):
        task = asyncio.current_task()
        if task in self._turns:
            self._turns[task] += 1
            if self._turns[task] in WAITING_TURNS:
                await self._wait_for_a_ping()
        async with real_turn() as deadline:
            yield deadline

    async def _wait_for_a_ping(self) -> None:
        self.waits += 1
        self._answered = asyncio.Event()
        try:
            await asyncio.wait_for(self._answered.wait(), WAIT_BOUND_S)
        except asyncio.TimeoutError:
            self.missed += 1

    # --- the other connection ------------------------------------------------------------
    @contextlib.contextmanager
    def pings(self, port: int) -> Iterator[None]:
        """Another client sends ApiVersions to `port` again and again while the block runs;
        each answer is recorded as a "ping" when the engine handles it."""
        async def versions(ctx, request):
            if ctx.header.client_id == PINGER:
                self.events.append("ping")
                if self._answered is not None:
                    self._answered.set()
            return await spec.handler(ctx, request)

        with registry.intercept(18, versions) as spec:
            pinger = _Pinger(port)
            pinger.start()
            try:
                wait_until(lambda: pinger.answers or pinger.failure, message="the pinger's first answer")
                yield
            finally:
                pinger.stopping.set()
                pinger.join(60)
            assert pinger.failure is None, f"the other connection failed: {pinger.failure!r}"

    # --- the verdict ---------------------------------------------------------------------
    def pings_during(self, start: int = 0, end: int = -1) -> int:
        """Pings answered between the `start`-th "start" and the `end`-th "end" event."""
        starts = [i for i, e in enumerate(self.events) if e == "start"]
        ends = [i for i, e in enumerate(self.events) if e == "end"]
        assert starts and ends, f"the watched work did not run: {self.events[:5]}"
        return self.events[starts[start]:ends[end]].count("ping")

    def assert_served_meanwhile(self, what: str, *, min_waits: int = 1) -> None:
        """`min_waits` 2 or more for work of one entry (one topic's partitions): a handler that
        does it in one turn, then yields once before its end, reaches the first waiting turn."""
        meanwhile = self.pings_during()
        assert self.waits >= min_waits and meanwhile >= self.waits and not self.missed, (
            f"{what}: {meanwhile} answers to another connection while it ran; it reached "
            f"{self.waits} slice turns ({self.missed} waited {WAIT_BOUND_S:.0f} s for an answer in vain)")


class _Pinger(threading.Thread):
    """ApiVersions again and again on one connection, each after the previous answer."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port, self.answers, self.failure = port, 0, None
        self.stopping = threading.Event()

    def run(self) -> None:
        try:
            client = RawClient(self.port, timeout=120, client_id=PINGER)
        except OSError as exc:
            self.failure = exc
            return
        try:
            while not self.stopping.is_set():
                response = client.request(ApiVersionsRequest(client_software_name="p", client_software_version="1"),
                                          3, ApiVersionsResponse)
                if response.error_code != 0:
                    raise AssertionError(f"ApiVersions answered {response.error_code}")
                self.answers += 1
                time.sleep(0.002)
        except Exception as exc:  # noqa: BLE001 - reported by pings() in the test's thread
            self.failure = exc
        finally:
            client.close()
