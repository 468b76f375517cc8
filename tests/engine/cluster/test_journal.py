"""The metadata journal on its own: framing, torn tails against corruption in the middle,
records that make no sense, the repair command's cut, and data dirs of the older format."""
import errno
import json
import os

import pytest

from engine.cluster import journal_format as F
from engine.cluster.controller import Controller
from engine.cluster.journal import MetadataCorruptError, MetadataJournal, repair
from engine.config import BrokerConfig


def types(directory) -> list[str]:
    return [record["type"] for _, _, record in MetadataJournal(directory).replay()]


def write_three(directory) -> bytes:
    journal = MetadataJournal(directory)
    journal.append([{"type": "first"}, {"type": "second", "padding": "x" * 50}])
    journal.append([{"type": "third"}])
    journal.close()
    return (directory / "journal-0.log").read_bytes()


def test_a_failed_append_leaves_no_torn_record_behind(tmp_path, faulty_fs):
    """A batch that hits a full disk half-way is cut off again: the batches after it replay."""
    journal = MetadataJournal(tmp_path)
    journal.append([{"type": "first"}])
    faulty_fs.fail("write", errno.ENOSPC, path_contains="journal-", torn_bytes=40, times=1)
    with pytest.raises(OSError):
        journal.append([{"type": "lost", "padding": "x" * 100}])
    assert faulty_fs.injected == 1
    journal.append([{"type": "third"}])
    journal.close()

    assert types(tmp_path) == ["first", "third"]


@pytest.mark.parametrize("damage", ["cut", "zeros", "flipped"])
def test_a_torn_tail_is_truncated_with_a_warning(tmp_path, caplog, damage):
    data = write_three(tmp_path)
    path = tmp_path / "journal-0.log"
    last = len(data) - len(F.frame({"type": "third"}))
    torn = {"cut": data[:-3], "zeros": data[:last] + b"\0" * 20,
            "flipped": data[:-1] + bytes([data[-1] ^ 1])}[damage]
    path.write_bytes(torn)
    assert types(tmp_path) == ["first", "second"]
    assert path.stat().st_size == last
    assert f"torn tail at byte {last}" in caplog.text
    assert types(tmp_path) == ["first", "second"]  # and the next start is quiet and the same


def test_corruption_in_the_middle_refuses_with_file_offset_and_repair_command(tmp_path):
    data = bytearray(write_three(tmp_path))
    second = len(F.frame({"type": "first"}))
    data[second + F.FRAME.size + 5] ^= 0x20   # inside the second record's JSON: still JSON, wrong CRC
    path = tmp_path / "journal-0.log"
    path.write_bytes(bytes(data))
    with pytest.raises(MetadataCorruptError) as refused:
        types(tmp_path)
    message = str(refused.value)
    assert f"{path} is corrupt at byte {second}: CRC mismatch" in message
    assert (f"python -m engine metadata repair --data-dir {tmp_path.parent} --file journal-0.log "
            f"--offset {second} --yes") in message
    assert path.read_bytes() == data   # nothing truncated on a guess

    assert repair(tmp_path, "journal-0.log", second) == len(data) - second
    assert types(tmp_path) == ["first"]


def test_a_length_that_runs_past_the_end_with_good_records_after_it_is_corruption(tmp_path):
    data = bytearray(write_three(tmp_path))
    data[0:4] = (1 << 20).to_bytes(4, "big")   # the first record claims a megabyte
    (tmp_path / "journal-0.log").write_bytes(bytes(data))
    with pytest.raises(MetadataCorruptError, match="corrupt at byte 0: record of 1048576 bytes runs past"):
        types(tmp_path)


def controller(directory) -> Controller:
    return Controller(directory, BrokerConfig())


def test_records_that_make_no_sense_are_refused_readably(tmp_path):
    made = controller(tmp_path)
    made.register_broker(0, "127.0.0.1", 9092)
    topic = made.create_topic("t", 1, 1)
    made._journal.close()
    good = (tmp_path / "journal-0.log").read_bytes()
    partition = {"type": "partition", "topic_id": str(topic.topic_id), "partition": 0, "replicas": [0],
                 "leader": 0, "leader_epoch": 0, "isr": [0]}
    for bad, reason in [({**partition, "topic_id": "6b1d0f32-0000-4000-8000-000000000000"}, "unknown topic id"),
                        ({**partition, "partition": -3}, "partition must be an integer >= 0"),
                        ({**partition, "replicas": []}, "at least one replica"),
                        ({"type": "mystery"}, "unknown record type 'mystery'"),
                        ({"type": "topic", "name": "a/b", "topic_id": "x", "configs": {}}, "illegal topic name")]:
        (tmp_path / "journal-0.log").write_bytes(good + F.frame(bad) + F.frame({"type": "producer_ids",
                                                                               "next_producer_id": 5}))
        with pytest.raises(MetadataCorruptError) as refused:
            controller(tmp_path)
        assert f"corrupt at byte {len(good)}: the record" in str(refused.value) and reason in str(refused.value)


def test_the_older_json_lines_format_loads_and_migrates(tmp_path):
    """A data dir written before the framing: snapshot-N.json and journal-N.jsonl."""
    topic_id = "6b1d0f32-1111-4000-8000-000000000000"
    snapshot = [{"type": "cluster", "cluster_id": "old-cluster"},
                {"type": "broker", "node_id": 0, "host": "127.0.0.1", "port": 9092, "rack": None}]
    lines = [{"type": "topic", "name": "kept", "topic_id": topic_id, "configs": {"retention.ms": "1000"}},
             {"type": "partition", "topic_id": topic_id, "partition": 0, "replicas": [0], "leader": 0,
              "leader_epoch": 3, "isr": [0]}]
    (tmp_path / "snapshot-4.json").write_text(json.dumps(snapshot))
    (tmp_path / "journal-4.jsonl").write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in lines)
                                               + b'{"type": "top')  # and a torn tail
    loaded = controller(tmp_path)
    assert loaded.image.cluster_id == "old-cluster"
    assert loaded.image.topics["kept"].partitions[0].leader_epoch == 3
    assert loaded.image.topics["kept"].configs == {"retention.ms": "1000"}
    assert sorted(os.listdir(tmp_path)) == ["snapshot-5.records"]   # migrated at once
    loaded.create_topic("new", 1, 1)
    loaded._journal.close()
    again = controller(tmp_path)
    assert set(again.image.topics) == {"kept", "new"} and again.image.cluster_id == "old-cluster"


def test_the_older_format_refuses_a_bad_line_in_the_middle(tmp_path):
    (tmp_path / "snapshot-1.json").write_text(json.dumps([{"type": "cluster", "cluster_id": "c"}]))
    (tmp_path / "journal-1.jsonl").write_bytes(b'{"type": "producer_ids", "next_producer_id": 1}\n'
                                               b'{"type": garbage\n'
                                               b'{"type": "producer_ids", "next_producer_id": 2}\n')
    with pytest.raises(MetadataCorruptError, match="journal-1.jsonl is corrupt at byte 48"):
        controller(tmp_path)
    assert (tmp_path / "journal-1.jsonl").exists() and not (tmp_path / "snapshot-2.records").exists()
