"""Shared helpers for the storage tests: real v2 batches built by kafka-python."""
from __future__ import annotations

import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from engine.storage.log import Log
from engine.storage.log_config import LogConfig

BASE_TS = 1_700_000_000_000


def make_batch(values, *, timestamps=None, producer=None, base_ts=BASE_TS) -> bytearray:
    """A v2 batch of `values` (bytes) with offset deltas 0..n-1.

    `producer` = (producer_id, epoch, base_sequence) makes it an idempotent batch.
    """
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    if producer is not None:
        builder.set_producer_state(*producer, False)
    for i, value in enumerate(values):
        ts = timestamps[i] if timestamps is not None else base_ts + i
        builder.append(i, ts, None, value, headers=[])
    return builder.build()


def values(n: int, prefix: str = "v", size: int = 0) -> list[bytes]:
    return [f"{prefix}{i}".encode().ljust(size, b".") for i in range(n)]


def decode(data) -> list[tuple[int, int, bytes]]:
    """(offset, timestamp, value) of every record in the complete batches of `data`;
    a partial batch at the end is dropped, as a consumer does."""
    data = bytes(data)
    out, pos = [], 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if end > len(data):
            break
        batch = DefaultRecordBatch(data[pos:end])
        assert batch.validate_crc()
        out += [(r.offset, r.timestamp, r.value) for r in batch]
        pos = end
    return out


def read_all(log: Log, start: int | None = None) -> list[tuple[int, int, bytes]]:
    """Every record from `start` to the log end, following segments."""
    offset = log.log_start_offset if start is None else start
    out = []
    while offset < log.log_end_offset:
        records = decode(log.read(offset, 1 << 20).read())
        records = [r for r in records if r[0] >= offset]
        assert records, f"no progress at offset {offset}"
        out += records
        offset = records[-1][0] + 1
    return out


def crash(log: Log) -> None:
    """Drop the log as a SIGKILL would: files closed, nothing flushed or snapshotted."""
    for segment in log.segments:
        segment.close()


@pytest.fixture
def config() -> LogConfig:
    return LogConfig(segment_bytes=4096, index_interval_bytes=256)


@pytest.fixture
def open_log(tmp_path, config):
    """Factory opening `tmp_path/topic-0`; logs still open at teardown are crashed."""
    opened = []

    def _open(cfg: LogConfig | None = None, **kwargs) -> Log:
        kwargs.setdefault("now_ms", BASE_TS)
        log = Log.open(tmp_path / "topic-0", cfg or config, **kwargs)
        opened.append(log)
        return log

    yield _open
    for log in opened:
        crash(log)
