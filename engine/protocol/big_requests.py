"""Big requests are decoded and answered off the event loop.

kafka.protocol decodes and encodes in pure Python: a Metadata request naming 1M topics (9.5
MiB) took 12 s to decode, handle and encode, and every broker of the process - they share one
event loop - waited that long. So a request frame over OFF_LOOP_BYTES is decoded (with its
null checks) on a worker thread, and the answer to it is encoded there too; the handler in
between runs on the loop, where its per-entry work goes in slices (engine/cluster/slices.py,
`slices.map_sliced`).

One worker thread for the whole process: big requests queue behind each other instead of
taking the GIL from the loop together. The worker holds the GIL for at most the interpreter's
switch interval (5 ms) while the loop thread wants it, so the loop keeps serving every other
connection - at a fraction of its speed while a big request is worked on. Afterwards the
request and its answer are taken apart in slices too (`release_in_slices`). The worker's time
on a request counts against the client's request quota (engine/worker_time.py).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

from engine import worker_time
from engine.cluster import slices

T = TypeVar("T")
# About 2,000 topic names or 5,000 partitions: tens of milliseconds of decoding.
OFF_LOOP_BYTES = 64 * 1024
_pool: ThreadPoolExecutor | None = None


def is_big(frame) -> bool:
    return len(frame) > OFF_LOOP_BYTES


async def off_loop(work: Callable[..., T], *args) -> T:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="big-request")
    return await worker_time.run(_pool, work, *args)


# Dropping the last reference to a request of a million entries frees them all in one go, in
# C, with the GIL held: 0.1-0.3 s. Their big lists are emptied a slice at a time instead.
_SMALL_LIST = 64


def _big_lists(value) -> list[list]:
    if isinstance(value, list):
        return [value] if len(value) > _SMALL_LIST else []
    struct = getattr(type(value), "_struct", None)        # a kafka.protocol DataContainer
    if struct is None:
        return []
    found = []
    for name in struct.fields:
        child = getattr(value, name, None)
        if isinstance(child, list) and len(child) > _SMALL_LIST:
            found.append(child)
    return found


async def release_in_slices(*roots) -> None:
    """Empty the big lists of `roots` (kafka.protocol structs or lists) and of their entries,
    entry by entry in slices of the event loop, so that what is left to free when the
    caller drops them is small."""
    pending = [found for root in roots for found in _big_lists(root)]
    with slices.Pacer() as pacer:
        while pending:
            entries = pending[-1]
            if not entries:
                pending.pop()
                continue
            pending.extend(_big_lists(entries.pop()))
            await pacer.tick()
