"""Driving a cleaning's steps across threads (see cleaner.py): the steps run wherever the
caller likes, one at a time; the ones that change a Log come back as OnOwner steps for the
log's owner to run. No threads or asyncio here: the broker picks the threads."""
from __future__ import annotations


class OnOwner:
    """A step that must run on the thread that owns the log (the broker's event loop)."""

    def __init__(self, action) -> None:
        self.action = action


class StepRunner:
    """Drives a cleaning generator: `advance` runs it up to its next pause (on any thread,
    one at a time) and returns an OnOwner step, if it paused on one, for the caller to pass to
    `run_on_owner` on the owner's thread. An error there is thrown back into the cleaning."""

    def __init__(self, steps) -> None:
        self._steps = steps
        self._error: BaseException | None = None
        self.done = False
        self.result = None

    def advance(self) -> OnOwner | None:
        try:
            if self._error is not None:
                error, self._error = self._error, None
                item = self._steps.throw(error)
            else:
                item = next(self._steps)
        except StopIteration as stop:
            self.done, self.result = True, stop.value
            return None
        return item if isinstance(item, OnOwner) else None

    def run_on_owner(self, step: OnOwner) -> None:
        try:
            step.action()
        except BaseException as exc:  # noqa: BLE001 - the cleaning decides what it means
            self._error = exc

    def close(self) -> None:
        """Abandon the cleaning (not while `advance` runs): it removes its files, unpins its segments."""
        self._steps.close()
        self.done = True

    def run_here(self):
        """Every step on this thread (tests, tools)."""
        while not self.done:
            step = self.advance()
            if step is not None:
                self.run_on_owner(step)
        return self.result
