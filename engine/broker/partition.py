"""One partition as its broker sees it: the log, the leader epoch, and fetchers waiting for data.

All methods run on the engine's event loop thread, which owns the partition.
Gap (next issue): no followers yet, so the high watermark is the log end offset.
"""
from __future__ import annotations

import asyncio
import uuid

from engine.storage.log import Log


class Partition:
    def __init__(self, topic: str, index: int, topic_id: uuid.UUID, log: Log, leader_epoch: int) -> None:
        self.topic = topic
        self.index = index
        self.topic_id = topic_id
        self.log = log
        self.leader_epoch = leader_epoch
        self._waiters: set[asyncio.Future] = set()

    @property
    def high_watermark(self) -> int:
        return self.log.log_end_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    def append(self, records: bytearray, now_ms: int):
        info = self.log.append(records, leader_epoch=self.leader_epoch, now_ms=now_ms)
        if not info.duplicate:
            self.notify_waiters()
        return info

    def add_waiter(self, waiter: asyncio.Future) -> None:
        self._waiters.add(waiter)

    def remove_waiter(self, waiter: asyncio.Future) -> None:
        self._waiters.discard(waiter)

    def notify_waiters(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()
