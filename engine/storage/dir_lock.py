"""`<data dir>/.lock`: one engine process per data dir (Kafka's FileLock on each log dir).

Kafka takes an exclusive lock on `.lock` in every log dir for the life of the broker and
refuses to start when another process holds it. The engine's data dir holds every broker's
log dir and the cluster metadata, so one lock there covers all of them.

Layout: `.lock` holds the holder's pid as decimal text and a newline. The pid is for the
operator only; the lock itself is an `fcntl.flock(LOCK_EX | LOCK_NB)` on the open file, which
the kernel drops when the holder exits however it exits (kill -9 included), so a restart
after a crash never finds a stale lock. The file is never deleted: unlinking a lock file
races with a process that opened it just before.

flock locks belong to the open file description, so a second DirLock on the same dir fails
even in the same process (as Kafka: "another process or thread"). Not thread-safe: one
owner (the Engine) acquires and releases.
"""
from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

LOCK_FILE = ".lock"


class DataDirLockedError(OSError):
    """Another engine holds the data dir's lock."""

    def __init__(self, directory: Path, holder: str) -> None:
        super().__init__(errno.EAGAIN, f"Failed to acquire lock on file {LOCK_FILE} in {directory}. An engine "
                                       f"instance in another process or thread is using this directory"
                                       f"{f' (pid {holder})' if holder else ''}.")

    def __str__(self) -> str:
        return self.strerror


class DirLock:
    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_FILE
        self._fd = -1

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def acquire(self) -> None:
        """Take the lock or raise DataDirLockedError, leaving the holder's file as it was."""
        if self.held:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            raise DataDirLockedError(self.directory, holder if holder.isdigit() else "") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Let go (closing the descriptor drops the flock); the file stays."""
        if self.held:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __del__(self) -> None:
        # An Engine dropped without stop() (a test, a failed start) must not keep its dir locked.
        try:
            self.release()
        except Exception:  # noqa: BLE001 - interpreter shutdown: the kernel drops the lock anyway
            pass
