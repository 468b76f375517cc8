"""The log cleaner's bounds: a decompression bomb already in a compacted log is kept as it
is and never inflated past the bound; the steps run on a worker thread and only the swap on
the log's owner."""
from __future__ import annotations

import asyncio
import threading
import tracemalloc

import zstandard
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.util import calc_crc32c, encode_varint

from engine.broker.cleaner_thread import clean_off_loop
from engine.storage.cleaner import LogCleaner
from engine.storage.cleaner_steps import StepRunner
from engine.storage.records import (ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER, HEADER_SIZE, LOG_OVERHEAD, iter_batches,
                                    read_header)

from .conftest import BASE_TS
from .test_cleaner import TP, clean, config, produce, records  # noqa: F401 - config: the compacted fixture

BOMB_BYTES = 256 << 20


def zstd_bomb(base_offset: int) -> bytearray:
    """One zstd batch whose single record holds BOMB_BYTES zeros; built as a stream, so
    the test never holds the inflated bytes either."""
    head = bytearray(b"\x00")                          # attributes
    for value in (0, 0, 1):                            # timestampDelta, offsetDelta, key length
        encode_varint(value, head.append)
    head += b"k"
    encode_varint(BOMB_BYTES, head.append)
    length = bytearray()
    encode_varint(len(head) + BOMB_BYTES + 1, length.append)
    compressor = zstandard.ZstdCompressor().compressobj()
    body = compressor.compress(bytes(length + head))
    zeros = bytes(1 << 20)
    for _ in range(BOMB_BYTES >> 20):
        body += compressor.compress(zeros)
    body += compressor.compress(b"\x00") + compressor.flush()   # no headers
    batch = bytearray(HEADER_SIZE) + body
    HEADER.pack_into(batch, 0, base_offset, len(batch) - LOG_OVERHEAD, 1, 2, 0, 4, 0, BASE_TS, BASE_TS,
                     -1, -1, -1, 1)
    batch[CRC_OFFSET:CRC_OFFSET + 4] = calc_crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]).to_bytes(4, "big")
    return batch


def test_a_bomb_in_a_compacted_log_is_kept_and_never_inflated(tmp_path, open_log, caplog):
    log = open_log()
    produce(log, [(b"k", b"old"), (b"other", b"1")])
    bomb_offset = log.log_end_offset
    log.append_as_follower(zstd_bomb(bomb_offset), now_ms=BASE_TS)   # replicated: no client checks
    produce(log, [(b"k", b"new")] * 3)
    log.roll(BASE_TS)
    tracemalloc.start()
    try:
        assert clean(tmp_path, log)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100 << 20, f"{peak >> 20} MiB allocated for a {BOMB_BYTES >> 20} MiB bomb"
    assert f"keeps the batch at offset {bomb_offset}" in caplog.text
    offsets = [offset for offset, _, _ in records_skipping(log, bomb_offset)]
    assert 0 not in offsets and offsets[-1] == bomb_offset + 3     # the old "k" went, the latest stayed
    assert any(h_offset == bomb_offset for h_offset in batch_offsets(log))   # the bomb's batch kept as it was


def records_skipping(log, skipped: int):
    """(offset, key, value) like records(), without parsing the batch at `skipped` (a
    reader would inflate the bomb)."""
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20).read()
        header = read_header(data, 0)
        if header.base_offset != skipped:
            yield from ((r.offset, r.key, r.value) for r in DefaultRecordBatch(data[:header.size])
                        if r.offset >= offset)
        offset = header.next_offset


def batch_offsets(log):
    for segment in log.segments:
        yield from (h.base_offset for _, h in iter_batches(segment.log.read(0, segment.log.size)))


class RecordingRunner(StepRunner):
    def __init__(self, steps) -> None:
        super().__init__(steps)
        self.step_threads, self.owner_threads = set(), set()

    def advance(self):
        self.step_threads.add(threading.get_ident())
        return super().advance()

    def run_on_owner(self, step) -> None:
        self.owner_threads.add(threading.get_ident())
        super().run_on_owner(step)


def test_cleaning_runs_off_the_loop_and_swaps_on_it(tmp_path, open_log):
    log = open_log()
    produce(log, [(f"k{i % 5}".encode(), f"v{i}".encode()) for i in range(200)], per_batch=2)
    log.roll(BASE_TS)
    before = records(log)

    async def scenario():
        runner = RecordingRunner(LogCleaner(tmp_path).clean(TP, log, BASE_TS))
        stats = await clean_off_loop(runner)
        return runner, stats, threading.get_ident()

    runner, stats, loop_thread = asyncio.run(scenario())
    assert stats is not None and stats.records_retained < stats.records_read
    assert loop_thread not in runner.step_threads
    assert runner.owner_threads == {loop_thread}
    latest = {key: (offset, value) for offset, key, value in before}
    assert records(log) == sorted((o, k, v) for k, (o, v) in latest.items())


def test_a_cancelled_cleaning_leaves_no_cleaned_files(tmp_path, open_log):
    log = open_log()
    produce(log, [(f"k{i % 5}".encode(), f"v{i}".encode()) for i in range(400)])
    log.roll(BASE_TS)
    before = records(log)

    async def scenario():
        task = asyncio.ensure_future(clean_off_loop(StepRunner(LogCleaner(tmp_path).clean(TP, log, BASE_TS))))
        await asyncio.sleep(0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    assert not list(log.dir.glob("*.cleaned"))
    latest = {key: offset for offset, key, _ in before}
    after = records(log)   # untouched, or whole groups swapped: nothing lost that was the latest
    assert {offset for offset, _, _ in after} >= set(latest.values()) and set(after) <= set(before)
