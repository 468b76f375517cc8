"""A process-wide cap on open segment files: an LRU of file descriptors.

Every segment has a `.log`, an `.index` and a `.timeindex`; thousands of partitions would
need more descriptors than the process may open (RLIMIT_NOFILE). Files therefore open on
first use and the least recently used ones are closed once the cap is reached; their owner
reopens on the next use. Closing an fd loses nothing: written bytes are in the page cache
and fsync flushes the file whichever fd wrote it.

Threads: the engine's event loop is the main user. The log cleaner's thread also reads and
writes segment files; it *pins* each file it uses (`pinned`) and runs `never_evicting`, so
only the loop closes descriptors, and never a pinned one. So no thread's descriptor is
closed - or its number reused for another file - while that thread uses it. The pool's
bookkeeping is under a lock.
"""
from __future__ import annotations

import os
import resource
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from . import filesystem


def default_limit() -> int:
    """A quarter of the soft RLIMIT_NOFILE (sockets need the rest), between 64 and 16384."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(64, min(16384, soft // 4))


class FileHandles:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: OrderedDict[int, "PooledFile"] = OrderedDict()
        self.lock = threading.RLock()
        self._quiet = threading.local()   # .on: this thread never closes others' descriptors

    def __len__(self) -> int:
        return len(self._open)

    def used(self, owner: "PooledFile") -> None:
        with self.lock:
            key = id(owner)
            if key in self._open:
                self._open.move_to_end(key)
                return
            self._open[key] = owner
            if not getattr(self._quiet, "on", False):
                self._evict()

    @contextmanager
    def never_evicting(self) -> Iterator[None]:
        """For a thread beside the loop (the cleaner's): its files count towards the limit,
        but it closes no one else's descriptor - the loop may be using it right now."""
        self._quiet.on = True
        try:
            yield
        finally:
            self._quiet.on = False

    def _evict(self) -> None:
        """Close the least recently used unpinned descriptors until under the limit.

        Walks from the oldest end only as far as it must: copying the whole LRU on every new
        file made creating 10,000 topics quadratic (18 of 80 s at 40,000 partitions)."""
        excess = len(self._open) - self.limit
        if excess <= 0:
            return
        victims = []
        for key, owner in self._open.items():
            if not owner.pins:
                victims.append(key)
                if len(victims) == excess:
                    break
        for key in victims:
            self._open.pop(key).release_fd()

    def forget(self, owner: "PooledFile") -> None:
        with self.lock:
            self._open.pop(id(owner), None)


HANDLES = FileHandles(default_limit())


class PooledFile:
    """A file opened O_RDWR|O_CREAT|O_APPEND on demand, its descriptor capped by HANDLES."""

    def __init__(self, path: Path | str) -> None:
        # A str, not a Path: one PooledFile per segment file adds up to tens of thousands,
        # and a str is no work for the garbage collector (a PosixPath and its parts list are).
        self.path = os.fspath(path)
        self.pins = 0                 # > 0 while another thread uses the descriptor
        self._close_when_unpinned = False
        self._raw_fd = filesystem.FS.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        HANDLES.used(self)

    @property
    def fd(self) -> int:
        with HANDLES.lock:
            if self._raw_fd < 0:
                # No O_CREAT: a file renamed or deleted behind our back must fail loudly, not
                # come back empty.
                self._raw_fd = filesystem.FS.open(self.path, os.O_RDWR | os.O_APPEND)
            HANDLES.used(self)
            return self._raw_fd

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Keep the descriptor open (and its number ours) for the duration."""
        with HANDLES.lock:
            self.pins += 1
        try:
            yield
        finally:
            with HANDLES.lock:
                self.pins -= 1
                if not self.pins and self._close_when_unpinned:
                    self._close_when_unpinned = False
                    self.release_fd()

    def release_fd(self) -> None:
        """Close the descriptor only (the LRU needs room); the next use reopens the file."""
        with HANDLES.lock:
            if self._raw_fd >= 0:
                os.close(self._raw_fd)
                self._raw_fd = -1

    def close(self) -> None:
        """Close now, or, while another thread has it pinned, once it lets go."""
        with HANDLES.lock:
            HANDLES.forget(self)
            if self.pins:
                self._close_when_unpinned = True
            else:
                self.release_fd()


class PooledFileOwner:
    """What the owners of one PooledFile (a segment's .log and its indexes) share: the
    descriptor, fsync, close and delete. Subclasses set `_file`."""

    _file: PooledFile

    @property
    def path(self) -> Path:
        # Built on demand: a Path per file at start-up was a quarter of loading 40,000 logs.
        return Path(self._file.path)

    @property
    def _fd(self) -> int:
        return self._file.fd

    def flush(self) -> None:
        filesystem.FS.fsync(self._fd)

    def close(self) -> None:
        self._file.close()

    def pinned(self):
        return self._file.pinned()

    def delete(self) -> None:
        self.close()
        try:
            os.unlink(self._file.path)
        except FileNotFoundError:
            pass
