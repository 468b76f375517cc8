"""LeaderEpochFileCache: which leader epoch started at which offset (`leader-epoch-checkpoint`).

Layout (UTF-8 text, Kafka's format):

    0                 <- format version
    2                 <- number of entries
    0 0               <- epoch, start offset of the first batch written in that epoch
    3 1200

Replicas use it to find where their log diverged from a new leader's (KIP-101, KIP-279):
the leader answers OffsetForLeaderEpoch with the end offset of the follower's last epoch,
and the follower truncates to it. Every change rewrites the file atomically.

Not thread-safe: the partition's Log owns it.
"""
from __future__ import annotations

import logging
from bisect import bisect_right
from pathlib import Path

from .log_files import as_path, write_atomically

log = logging.getLogger(__name__)

FILE_NAME = "leader-epoch-checkpoint"
UNDEFINED = (-1, -1)


class LeaderEpochFileCache:
    def __init__(self, directory: Path | str) -> None:
        self.path = as_path(directory) / FILE_NAME
        self.damaged = False          # the file could not be read: the Log rebuilds it from its batches
        self._entries: list[tuple[int, int]] = self._load()

    def _load(self) -> list[tuple[int, int]]:
        try:
            with open(self.path, "rb") as f:     # one open, no stat: start-up reads 40,000 of these
                text = f.read()
        except FileNotFoundError:
            return []
        try:
            lines = text.decode("utf-8").split("\n")
            count = int(lines[1])
            entries = [tuple(map(int, line.split())) for line in lines[2:2 + count]]
            pairs = [(epoch, offset) for epoch, offset in entries]
        except (ValueError, IndexError, UnicodeDecodeError) as exc:
            log.warning("Malformed %s (%s): ignored, rebuilt from the log's batches", self.path, exc)
            self.damaged = True
            return []
        return pairs

    def _write(self) -> None:
        lines = ["0", str(len(self._entries))] + [f"{e} {o}" for e, o in self._entries]
        write_atomically(self.path, ("\n".join(lines) + "\n").encode())

    @property
    def entries(self) -> list[tuple[int, int]]:
        return list(self._entries)

    @property
    def latest_epoch(self) -> int:
        return self._entries[-1][0] if self._entries else -1

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that `epoch` began at `start_offset`; older or repeated epochs change nothing."""
        if epoch < 0 or epoch <= self.latest_epoch:
            return
        self._entries.append((epoch, start_offset))
        self._write()

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(largest epoch <= `epoch`, the offset where the next epoch began, or the log end).

        As Kafka's `endOffsetFor`: the latest epoch ends at the log end offset; an epoch
        older than every entry is undefined (-1, -1).
        """
        if not self._entries or epoch < self._entries[0][0]:
            return UNDEFINED
        if epoch >= self.latest_epoch:
            return self.latest_epoch, log_end_offset
        position = bisect_right(self._entries, epoch, key=lambda entry: entry[0])
        return self._entries[position - 1][0], self._entries[position][1]

    def truncate_from_end(self, end_offset: int) -> None:
        """Forget epochs that start at or after `end_offset` (the log was truncated there)."""
        kept = [(e, o) for e, o in self._entries if o < end_offset]
        if kept != self._entries:
            self._entries = kept
            self._write()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at `start_offset`: drop epochs wholly below it."""
        below = [i for i, (_, o) in enumerate(self._entries) if o <= start_offset]
        if not below:
            return
        last = below[-1]
        kept = [(self._entries[last][0], start_offset)] + self._entries[last + 1:]
        if kept != self._entries:
            self._entries = kept
            self._write()

    def clear(self) -> None:
        if self._entries:
            self._entries = []
            self._write()
