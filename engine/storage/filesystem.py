"""The filesystem calls through which storage writes: a seam for fault injection.

Every call that can fail on a broken or full disk - open, write, fsync, ftruncate,
replace - goes through `FS`, the process's FileSystem. `RealFileSystem` calls `os`;
`FaultyFileSystem` wraps it and fails the calls a test asks for (ENOSPC, EIO, or a torn
write: some bytes written, then the error), so storage tests inject faults here instead
of monkeypatching modules (franz-go's kfake does the same). Reads (pread, sendfile) stay on
`os`: they do not change what is on disk.

`use(fs)` swaps the process's FileSystem for the duration of a `with` block. Calls are as
thread-safe as the os calls they wrap.
"""
from __future__ import annotations

import errno as errno_codes
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator


class RealFileSystem:
    def open(self, path, flags: int, mode: int = 0o644) -> int:
        return os.open(path, flags, mode)

    def write(self, fd: int, data) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def ftruncate(self, fd: int, size: int) -> None:
        os.ftruncate(fd, size)

    def replace(self, source, target) -> None:
        os.replace(source, target)


@dataclass
class Fault:
    operation: str               # "open", "write", "fsync", "ftruncate" or "replace"
    error: int                   # an errno, e.g. errno.ENOSPC
    path_contains: str = ""      # only files whose path holds this ("" = any)
    torn_bytes: int | None = None  # write: let this many bytes through first
    times: int | None = None     # fail this many calls, then heal (None: until cleared)


class FaultyFileSystem(RealFileSystem):
    """A RealFileSystem that fails the calls matching its faults; `injected` counts them."""

    def __init__(self) -> None:
        self.faults: list[Fault] = []
        self.injected = 0
        self._paths: dict[int, str] = {}   # fd -> path, for faults on writes and fsyncs
        self._lock = threading.Lock()

    def fail(self, operation: str, error: int = errno_codes.ENOSPC, *, path_contains: str = "",
             torn_bytes: int | None = None, times: int | None = None) -> Fault:
        fault = Fault(operation, error, path_contains, torn_bytes, times)
        self.faults.append(fault)
        return fault

    def heal(self) -> None:
        self.faults.clear()

    def _fault(self, operation: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.operation == operation and fault.path_contains in path:
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times <= 0:
                            self.faults.remove(fault)
                    self.injected += 1
                    return fault
        return None

    def _raise(self, fault: Fault, path: str):
        raise OSError(fault.error, os.strerror(fault.error), path)

    def open(self, path, flags: int, mode: int = 0o644) -> int:
        fault = self._fault("open", os.fspath(path))
        if fault:
            self._raise(fault, os.fspath(path))
        fd = super().open(path, flags, mode)
        self._paths[fd] = os.fspath(path)
        return fd

    def write(self, fd: int, data) -> int:
        path = self._paths.get(fd, "")
        fault = self._fault("write", path)
        if fault:
            if fault.torn_bytes:
                super().write(fd, bytes(data[:fault.torn_bytes]))
            self._raise(fault, path)
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        fault = self._fault("fsync", self._paths.get(fd, ""))
        if fault:
            self._raise(fault, self._paths.get(fd, ""))
        super().fsync(fd)

    def ftruncate(self, fd: int, size: int) -> None:
        fault = self._fault("ftruncate", self._paths.get(fd, ""))
        if fault:
            self._raise(fault, self._paths.get(fd, ""))
        super().ftruncate(fd, size)

    def replace(self, source, target) -> None:
        fault = self._fault("replace", os.fspath(target))
        if fault:
            self._raise(fault, os.fspath(target))
        super().replace(source, target)


FS: RealFileSystem = RealFileSystem()


def current() -> RealFileSystem:
    return FS


@contextmanager
def use(fs: RealFileSystem) -> Iterator[RealFileSystem]:
    global FS
    previous, FS = FS, fs
    try:
        yield fs
    finally:
        FS = previous
