"""The process's file descriptors, split so that one client can never starve the rest.

RLIMIT_NOFILE (soft) is divided once at start:

- a reserve (an eighth, at least 32) that no client can use: listeners accepting, the
  metadata journal, checkpoints, new segments and the log keep working when clients have
  taken all they may;
- segment files: storage's LRU cap (`engine.storage.file_handles.HANDLES`, a quarter);
- fetch slices: duplicated segment descriptors held by zero-copy Fetch responses until
  they are written (a quarter); past this a partition answers without records this time;
- client sockets: the rest, shared by every listener of the process, on top of each
  broker's `max.connections`.

Owned by the event loop; not thread-safe.
"""
from __future__ import annotations

import resource

# One Fetch response holds at most this many duplicated descriptors; the partitions after
# it answer without records (as if max_bytes were reached), and the client asks again.
FETCH_SLICES_PER_RESPONSE = 128


class DescriptorBudget:
    def __init__(self, limit: int | None = None) -> None:
        self.slices_open = 0
        self.sockets_open = 0
        self.configure(limit)

    def configure(self, limit: int | None = None) -> None:
        if limit is None:
            limit, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.limit = limit
        self.reserve = max(32, limit // 8)
        self.segment_files = max(64, min(16384, limit // 4))
        self.fetch_slices = max(16, limit // 4)
        self.sockets = max(16, limit - self.reserve - self.segment_files - self.fetch_slices)

    def take_slice(self) -> bool:
        if self.slices_open >= self.fetch_slices:
            return False
        self.slices_open += 1
        return True

    def release_slice(self) -> None:
        self.slices_open -= 1

    def take_socket(self) -> bool:
        if self.sockets_open >= self.sockets:
            return False
        self.sockets_open += 1
        return True

    def release_socket(self) -> None:
        self.sockets_open -= 1


DESCRIPTORS = DescriptorBudget()
