"""Leader appends whose record checks run off the event loop.

Checking a compressed batch means inflating it and parsing every record (aiokafka's C reader,
~0.3 us a record with the inflating; engine/storage/batch_records.py), and a batch may inflate
to 32 x max.message.bytes: held on the loop, that would stall every connection. A Produce whose
batches are all uncompressed is appended inline (the C reader parses its records at ~0.06 us
each). One with a compressed batch is checked on a worker thread first - every check of the
append, in the append's order, so the error answered is the same - and then appended on the
loop without inflating it again.
The worker holds the GIL only between the codecs' C calls, so the loop thread gets it back
every switch interval (5 ms) and keeps serving other connections meanwhile. The check's
time on the worker counts against the client's request quota (engine/worker_time.py).

Per partition, appends still happen in the order their requests arrived: while a check is in
flight, later appends to the same partition (compressed or not) queue behind it (FIFO).

Owned by the event loop, except the checks, which read the request's own buffer on a worker.
"""
from __future__ import annotations

import asyncio
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import kafka.errors as Errors

from engine import worker_time
from engine.broker.partition import Partition
from engine.clock import now_ms
from engine.errors import ApiError
from engine.storage.log_config import LogConfig
from engine.storage.log_validator import analyze_records
from engine.storage.producer_state import TxnVerification
from engine.storage.record_keys import check_keys
from engine.storage.records import iter_batches

WORKERS = 2        # the checks are CPU-bound; more threads than cores would only queue for the GIL
_pool: ThreadPoolExecutor | None = None


class _Queue:
    """One partition's appends in flight through a check."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()    # FIFO: waiters acquire in arrival order
        self.waiting = 0


_queues: "weakref.WeakKeyDictionary[Partition, _Queue]" = weakref.WeakKeyDictionary()


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="record-check")
    return _pool


def has_compressed_batch(records) -> bool:
    """True if a batch of `records` is compressed; a malformed buffer answers False, and the
    append (inline) refuses it with the right error."""
    try:
        return any(header.compression_type for _, header in iter_batches(records))
    except Exception:  # noqa: BLE001 - the append's own checks report it
        return False


def check_for_append(records: bytearray, config: LogConfig, log_name: str) -> None:
    """Every check `Log.append` makes before it writes (on a worker thread): raises the same
    StorageError the append would."""
    batches = analyze_records(records, config, from_client=True, now_ms=now_ms())
    if config.compact and batches:
        check_keys(records, batches, log_name)


async def append(partition: Partition, records: bytearray, *, current: Callable[[], bool] = lambda: True,
                 verification: TxnVerification | None = None):
    """partition.append(records), with the checks of compressed batches off the event loop.
    `current()` says whether the partition is still this broker's (not deleted meanwhile);
    `verification`: see Log.append."""
    queue = _queues.get(partition)
    if (queue is None or not queue.waiting) and not has_compressed_batch(records):
        return partition.append(records, now_ms(), verification=verification)
    if queue is None:
        queue = _queues[partition] = _Queue()
    queue.waiting += 1
    try:
        async with queue.lock:
            if has_compressed_batch(records):
                log_ = partition.log
                await worker_time.run(_executor(), check_for_append, records, log_.config, log_.dir.name)
                if not (partition.is_leader and partition.log is log_ and current()):   # moved or deleted meanwhile
                    raise ApiError(Errors.NotLeaderForPartitionError)
                return partition.append(records, now_ms(), records_checked=True, verification=verification)
            return partition.append(records, now_ms(), verification=verification)
    finally:
        queue.waiting -= 1
