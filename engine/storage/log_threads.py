"""The per-log-dir thread pool that opens logs at start and flushes and closes them at
shutdown (Kafka's `num.recovery.threads.per.data.dir`, default 2 since Kafka 4.0).

Opening a log is mostly file reads, listings and fsyncs, which release the GIL: at 40,000
partitions, with the page cache cold, the disk waits of one log overlap another's work.

Thread safety: each task owns its log (nothing else touches it until the pool is done), and
runs under `HANDLES.never_evicting()`, so no worker closes a descriptor another thread is
using. The task itself must leave no descriptor of its log open (`Log.release_descriptors`,
`Log.close`), so the descriptor pool stays bounded by the threads' logs in flight; the event
loop's next use evicts as usual. With one thread everything runs on the caller's thread.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

from .file_handles import HANDLES

T = TypeVar("T")
R = TypeVar("R")


def run_on_threads(work: Callable[[T], R], items: Iterable[T], threads: int) -> list[R]:
    """`work(item)` for every item, on `threads` threads; results in order. The first
    exception is raised once every task has ended."""
    items = list(items)
    if threads <= 1 or len(items) < 2:
        return [work(item) for item in items]

    def quiet(item: T) -> R:
        with HANDLES.never_evicting():
            return work(item)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="log-recovery") as pool:
        return list(pool.map(quiet, items))
