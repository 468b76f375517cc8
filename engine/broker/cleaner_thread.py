"""Runs a log cleaning off the event loop: its steps on a worker thread, one at a time, and
the steps that change a Log (the segment swaps) back on the loop, which owns the logs.

Cancelling (the broker stops) waits for the running step to end, then abandons the
cleaning, which removes its half-written segment and lets go of the files it pinned.
"""
from __future__ import annotations

import asyncio

from engine.storage.cleaner_steps import OnOwner, StepRunner
from engine.storage.file_handles import HANDLES


async def clean_off_loop(runner: StepRunner):
    """Run the cleaning to its end; returns its CleanerStats (or None)."""
    loop = asyncio.get_running_loop()
    while not runner.done:
        step = loop.run_in_executor(None, _advance, runner)
        try:
            owner_step = await asyncio.shield(step)
        except asyncio.CancelledError:
            await asyncio.wait([step])   # never abandon the generator while a thread runs it
            runner.close()
            raise
        if owner_step is not None:
            runner.run_on_owner(owner_step)
    return runner.result


def _advance(runner: StepRunner) -> OnOwner | None:
    with HANDLES.never_evicting():   # the loop may be using any other descriptor right now
        return runner.advance()
