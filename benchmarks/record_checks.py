"""What parsing every record of a produced batch costs the broker, per record.

The broker's check (engine/storage/batch_records.py: every field of every record, after
inflating a compressed batch) beside its peer in the same run: kafka.record, kafka-python's
pure-Python reader, parsing the same batches (what "use kafka.record to parse" would cost).
Batches of 100-byte values, as benchmarks/produce_consume.py sends them, and one big batch
that takes the streamed path (inflated past 1 MiB). The broker's check is timed twice: alone,
and with the CreateTime timestamp bounds a topic has by default (message.timestamp.after.max.ms).

    .venv/bin/python benchmarks/record_checks.py [--repeat 20]
"""
from __future__ import annotations

import argparse
import os
import sys
import timeit
from pathlib import Path

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from engine.storage.batch_records import check_records  # noqa: E402
from engine.storage.decompression import decompressed_limit  # noqa: E402
from engine.storage.records import read_header  # noqa: E402

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
LIMIT = decompressed_limit(1 << 20)


def batch(codec: int, records: int, size: int = 100) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    value = os.urandom(size // 2) * 2        # compresses about 2x, as mixed data does
    for i in range(records):
        builder.append(i, 1_700_000_000_000 + i, None, value, headers=[])
    return bytes(builder.build())


def per_record_us(action, records: int, repeat: int) -> float:
    number = max(1, 20_000 // records)
    return min(timeit.repeat(action, number=number, repeat=repeat)) / number / records * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'codec':>7} {'records':>8} {'broker check':>14} {'+ timestamps':>14} {'kafka.record':>14} "
          f"{'ratio':>7}   (us per record; ratio: kafka.record / broker check with timestamps)")
    bounds = (0, 1_700_000_000_000 + 3_600_000 + 10**6)
    cases = [(name, codec, n) for name, codec in CODECS.items() for n in (100, 1000)] + [("lz4", 3, 15000)]
    for name, codec, records in cases:
        data = batch(codec, records)
        header = read_header(data)
        ours = per_record_us(lambda: check_records(data, 0, header, LIMIT), records, args.repeat)
        stamped = per_record_us(lambda: check_records(data, 0, header, LIMIT, timestamps=bounds), records,
                                args.repeat)
        peer = per_record_us(lambda: sum(1 for _ in DefaultRecordBatch(data)), records, args.repeat)
        print(f"{name:>7} {records:>8} {ours:>14.3f} {stamped:>14.3f} {peer:>14.3f} {peer / stamped:>6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
