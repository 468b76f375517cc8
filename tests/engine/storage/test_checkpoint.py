import pytest

from engine.storage.checkpoint import OffsetCheckpointFile
from engine.storage.errors import StorageError


def test_round_trip_in_kafka_text_format(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    offsets = {("orders", 0): 1234, ("my-topic.v2", 11): 0, ("a_b", 3): 2**40}
    OffsetCheckpointFile(path).write(offsets)
    lines = path.read_text().splitlines()
    assert lines[:2] == ["0", "3"]
    assert sorted(lines[2:]) == sorted(["orders 0 1234", "my-topic.v2 11 0", f"a_b 3 {2**40}"])
    assert OffsetCheckpointFile(path).read() == offsets
    assert not list(tmp_path.glob("*.tmp"))


def test_rewrite_replaces_the_old_content(tmp_path):
    checkpoint = OffsetCheckpointFile(tmp_path / "cp")
    checkpoint.write({("t", 0): 1, ("t", 1): 2})
    checkpoint.write({("t", 0): 5})
    assert checkpoint.read() == {("t", 0): 5}
    checkpoint.write({})
    assert checkpoint.read() == {}


def test_missing_file_reads_as_empty(tmp_path):
    assert OffsetCheckpointFile(tmp_path / "absent").read() == {}


@pytest.mark.parametrize("text", [
    "",
    "1\n0\n",                      # unknown version
    "0\n2\nt 0 5\n",               # count does not match
    "0\n1\nt 0\n",                 # missing field
    "0\n1\nt x 5\n",               # partition not a number
    "0\n1\nt 0 five\n",            # offset not a number
    "zero\n0\n",
])
def test_malformed_file_raises(tmp_path, text):
    path = tmp_path / "cp"
    path.write_text(text)
    with pytest.raises(StorageError):
        OffsetCheckpointFile(path).read()
