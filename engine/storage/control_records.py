"""Transaction markers: the COMMIT / ABORT control batches (Kafka's EndTransactionMarker).

A marker is a v2 batch with the control bit (attributes bit 5) and the transactional bit
set, the producer's id and epoch, base sequence -1, and one record:

    key   = version int16 (0) | type int16 (0 = ABORT, 1 = COMMIT)   (ControlRecordType)
    value = version int16 (0) | coordinator_epoch int32              (EndTransactionMarker)

kafka.record builds the batch; its builder cannot set the control bit (only brokers
write control batches), so the bit is set afterwards and the CRC-32C recomputed.
"""
from __future__ import annotations

import struct
from typing import NamedTuple

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

from .errors import CorruptRecordError
from .records import ATTRIBUTES_OFFSET, CONTROL_MASK, CRC_OFFSET, BatchHeader

CONTROL_KEY = struct.Struct(">hh")
MARKER_VALUE = struct.Struct(">hi")
ABORT, COMMIT = 0, 1
NO_SEQUENCE = -1
_INT16 = struct.Struct(">h")
_UINT32 = struct.Struct(">I")


class EndTxnMarker(NamedTuple):
    commit: bool
    coordinator_epoch: int


def build_marker_batch(*, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                       commit: bool, timestamp_ms: int) -> bytearray:
    """One control batch holding the marker (offsets are assigned by the log)."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True,
                                        producer_id=producer_id, producer_epoch=producer_epoch,
                                        base_sequence=NO_SEQUENCE, batch_size=2**20)
    builder.append(0, timestamp=timestamp_ms, key=CONTROL_KEY.pack(0, COMMIT if commit else ABORT),
                   value=MARKER_VALUE.pack(0, coordinator_epoch), headers=[])
    batch = builder.build()
    (attributes,) = _INT16.unpack_from(batch, ATTRIBUTES_OFFSET)
    _INT16.pack_into(batch, ATTRIBUTES_OFFSET, attributes | CONTROL_MASK)
    _UINT32.pack_into(batch, CRC_OFFSET, calc_crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]))
    return batch


def read_marker(buf, position: int, header: BatchHeader) -> EndTxnMarker:
    """The marker of the control batch at `position` in `buf`; CorruptRecordError if it holds none."""
    batch = DefaultRecordBatch(bytes(memoryview(buf)[position:position + header.size]))
    for record in batch:
        key, value = record.key, record.value
        if key is None or len(key) < CONTROL_KEY.size:
            break
        _version, kind = CONTROL_KEY.unpack_from(key)
        if kind not in (ABORT, COMMIT):
            # Other control types (e.g. KRaft's) are not transaction markers.
            raise CorruptRecordError(f"control record type {kind} at offset {header.base_offset}")
        if value is None or len(value) < MARKER_VALUE.size:
            raise CorruptRecordError(f"transaction marker without a value at offset {header.base_offset}")
        _version, coordinator_epoch = MARKER_VALUE.unpack_from(value)
        return EndTxnMarker(kind == COMMIT, coordinator_epoch)
    raise CorruptRecordError(f"control batch without a marker at offset {header.base_offset}")
