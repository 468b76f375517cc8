"""Muting a connection after a throttled answer (KIP-219): the broker answers at once with
`throttle_time_ms` set, then reads nothing more from that connection until the throttle time
has passed, so a client that ignores throttle_time_ms is throttled all the same.

The listener opens a `Channel` for each connection (`open_channel()`, in the connection's
task) and, after writing each answer, awaits `unmuted()`. A handler, which runs in that task,
calls `mute_for(ms)`; outside a listener's connection (in-process handler tests) it does
nothing. A context variable carries the channel so that dispatch's signature, shared by
every handler, need not change.

Deadlines are on the engine's clock (engine/clock.py): with a manual clock a muted channel
stays muted until the test moves the clock past its deadline. The wait polls the clock at
most every _POLL_S, so moving a manual clock ends a mute promptly.
"""
from __future__ import annotations

import asyncio
import contextvars

from engine import clock

_POLL_S = 0.05
_channel: contextvars.ContextVar["Channel | None"] = contextvars.ContextVar("channel", default=None)


class Channel:
    __slots__ = ("muted_until_ms",)

    def __init__(self) -> None:
        self.muted_until_ms = 0

    def muted(self) -> bool:
        return clock.now_ms() < self.muted_until_ms


def open_channel() -> Channel:
    """The current connection's channel (call once, in the connection's own task)."""
    channel = Channel()
    _channel.set(channel)
    return channel


def mute_for(throttle_ms: int) -> None:
    """Read no more requests of the current connection for `throttle_ms` after its answer."""
    channel = _channel.get()
    if channel is not None and throttle_ms > 0:
        channel.muted_until_ms = max(channel.muted_until_ms, clock.now_ms() + throttle_ms)


async def unmuted(channel: Channel) -> None:
    """Return once the channel's mute has ended (at once if it is not muted)."""
    while channel.muted():
        await asyncio.sleep(min(_POLL_S, (channel.muted_until_ms - clock.now_ms()) / 1000))
