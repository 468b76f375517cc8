"""Record sets as the message browser reads them: transaction markers, and the markers
compaction leaves empty for a producer's state."""
from engine.storage.cleaner_batches import empty_batch
from engine.storage.control_records import build_marker_batch
from engine.storage.records import read_header

from console.kafka_gateway.batches import scan_batches


def marker(*, commit: bool) -> bytearray:
    return build_marker_batch(producer_id=7, producer_epoch=0, coordinator_epoch=0, commit=commit, timestamp_ms=1000)


def test_markers_are_named_and_an_emptied_one_is_no_marker():
    full = marker(commit=False)
    emptied = empty_batch(read_header(marker(commit=True)))
    found = list(scan_batches(bytes(full + emptied), from_offset=0))
    assert [(info.control, info.producer_id, batch) for info, batch in found] == [("ABORT", 7, None), ("", 7, None)]
