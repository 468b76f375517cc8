"""The memory a broker holds for its clients' requests: Kafka's `queued.max.request.bytes` and
the SimpleMemoryPool its SocketServer reads requests into.

A connection takes its request's size from the pool before it reads the body, and gives it
back once the request is answered. While the pool has nothing left, connections wait before
reading their next body (Kafka mutes their channels), so many clients sending big requests at
once cannot make the broker hold more than the pool; the requests already read go on and
free it. As in Kafka's non-strict pool, a request larger than what is left is still taken
while anything is left, so one request of up to `socket.request.max.bytes` always gets in.

-1 (the default), or any size of 0 or less, leaves the pool unbounded, as in Kafka. The size is read on each request,
so a change applies at the next one. The brokers' own connections (replication inside the
process) do not wait on the pool: an acknowledgement waiting for a follower's fetch must not
wait for memory that the acknowledgement itself holds.

Everything runs on the engine's event loop, which owns the pool.
"""
from __future__ import annotations

import asyncio
from collections import deque
from typing import Callable


class RequestMemoryPool:
    def __init__(self, capacity: Callable[[], int]) -> None:
        self._capacity = capacity
        self.used = 0
        self._waiters: deque[asyncio.Future] = deque()

    @property
    def capacity(self) -> int:
        """The pool's size in bytes; 0 or less when unbounded."""
        return self._capacity()

    @property
    def available(self) -> int | None:
        """Bytes left (negative when over-committed by a big request); None when unbounded."""
        capacity = self.capacity
        return None if capacity <= 0 else capacity - self.used

    @property
    def waiting(self) -> int:
        """Connections waiting for memory before reading their next request."""
        return len(self._waiters)

    async def acquire(self, size: int) -> None:
        """Take `size` bytes once anything is left (at once when unbounded)."""
        while (available := self.available) is not None and available <= 0:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.used += size

    def release(self, size: int) -> None:
        self.used -= size
        if self.available is None or self.available > 0:
            while self._waiters:   # each checks again what is left, in the order they came
                waiter = self._waiters.popleft()
                if not waiter.done():
                    waiter.set_result(None)
