"""`__transaction_state` records in Kafka's format (TransactionLogKey v0, TransactionLogValue v0/v1)."""
from __future__ import annotations

import struct

import pytest

from engine.coordinator.transactions import records as R
from engine.coordinator.transactions.records import TxnRecord, TxnState


def test_key_is_version_0_and_the_id():
    assert R.key("tx") == b"\x00\x00\x00\x02tx"
    assert R.decode_key(R.key("tx")) == "tx"
    assert R.decode_key(b"\x00\x05\x00\x02tx") is None          # a key version this log does not hold


def test_value_v0_bytes_and_round_trip():
    record = TxnRecord(producer_id=7, producer_epoch=3, timeout_ms=60000, state=TxnState.ONGOING,
                       partitions={("b", 1), ("a", 0), ("b", 0)}, last_update_ms=200, start_ms=100)
    data = R.value(record)
    expected = (struct.pack(">hqhib", 0, 7, 3, 60000, 1) + struct.pack(">i", 2)
                + struct.pack(">h", 1) + b"a" + struct.pack(">ii", 1, 0)
                + struct.pack(">h", 1) + b"b" + struct.pack(">iii", 2, 0, 1) + struct.pack(">qq", 200, 100))
    assert data == expected
    assert R.decode_value(data) == record


def test_value_v1_flexible_with_tagged_fields():
    def uvarint(n: int) -> bytes:
        return bytes([n])
    partitions = uvarint(2) + uvarint(2) + b"t" + uvarint(2) + struct.pack(">i", 4) + uvarint(0)
    tags = uvarint(2) + uvarint(0) + uvarint(8) + struct.pack(">q", 5) + uvarint(2) + uvarint(2) + struct.pack(">h", 2)
    data = struct.pack(">hqhib", 1, 9, 0, 1000, 4) + partitions + struct.pack(">qq", 20, 10) + tags
    decoded = R.decode_value(data)
    assert (decoded.producer_id, decoded.state, decoded.partitions, decoded.previous_producer_id) == \
        (9, TxnState.COMPLETE_COMMIT, {("t", 4)}, 5)


def test_states_are_kafkas():
    assert [(s.id, s.label) for s in TxnState] == [
        (0, "Empty"), (1, "Ongoing"), (2, "PrepareCommit"), (3, "PrepareAbort"), (4, "CompleteCommit"),
        (5, "CompleteAbort"), (6, "Dead"), (7, "PrepareEpochFence")]
    assert TxnState.from_label("ongoing") is TxnState.ONGOING and TxnState.from_label("x") is None
    with pytest.raises(ValueError):
        R.decode_value(struct.pack(">hqhib", 0, 1, 0, 1, 9) + struct.pack(">iqq", -1, 0, 0))
