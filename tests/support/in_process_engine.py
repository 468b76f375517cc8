"""An Engine on a background event loop in the test's own process, so a test can watch or
wrap its internals (syscalls, fetchers, the loop's turns) while real clients talk to it.

    with InProcessEngine(tmp_path, brokers=3, configs={...}) as running:
        running.engine.ports ...
        running.call(running.engine.stop_broker(1))   # a coroutine, run on the engine's loop
"""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from engine.runtime import Engine
from tests.support.engine_process import free_port_range

START_ATTEMPTS = 5


class InProcessEngine:
    def __init__(self, tmp_path: Path, *, brokers: int = 1, start_timeout: float = 60, **engine_kwargs: Any) -> None:
        self.tmp_path = tmp_path
        self.brokers = brokers
        self.start_timeout = start_timeout
        self.engine_kwargs = engine_kwargs
        self.loop = asyncio.new_event_loop()
        self.engine: Engine | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._ready = threading.Event()
        self._failure: list[BaseException] = []

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self._start_with_port_retry()
        except BaseException as exc:  # noqa: BLE001 - reported by start() in the test's thread
            self._failure.append(exc)
        self._ready.set()
        self.loop.run_forever()

    def _start_with_port_retry(self) -> None:
        """A port taken between picking and binding: stop what started, pick again, in a fresh dir."""
        for attempt in range(START_ATTEMPTS):
            engine = Engine(self.tmp_path / f"data{attempt}", brokers=self.brokers,
                            port=free_port_range(self.brokers + 1), **self.engine_kwargs)
            try:
                self.loop.run_until_complete(engine.start())
            except OSError:
                self.loop.run_until_complete(engine.stop())
                if attempt == START_ATTEMPTS - 1:
                    raise
                continue
            self.engine = engine
            return

    def start(self) -> "InProcessEngine":
        self._thread.start()
        assert self._ready.wait(self.start_timeout), "the in-process engine did not start"
        if self._failure:
            self.loop.call_soon_threadsafe(self.loop.stop)
            raise self._failure[0]
        return self

    def call(self, coroutine, timeout: float = 60):
        """Run a coroutine on the engine's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self, timeout: float = 60) -> None:
        if self.engine is not None:
            self.call(self.engine.stop(), timeout)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(15)

    def __enter__(self) -> "InProcessEngine":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
