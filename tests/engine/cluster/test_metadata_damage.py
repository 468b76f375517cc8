"""A damaged metadata journal on a real engine: start-up refuses with a readable message
instead of forgetting topics, the repair command cuts the journal where it says, and
partition dirs the metadata no longer names are set aside as `-stray`, never deleted."""
import subprocess
import sys

from engine.cluster import journal_format as F
from tests.engine.cluster.helpers import create_topic
from tests.support.engine_process import ROOT
from tests.support.partition_io import read_values, send_values


def test_corrupt_journal_refuses_start_then_repair_keeps_the_orphaned_data(engine_factory, tmp_path):
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=1, data_dir=data_dir)
    for name in ("before", "damaged", "after"):
        create_topic(engine.bootstrap, name, 1, 1)
        send_values(engine.bootstrap, name, [f"{name}-value".encode()])
    engine.kill()

    journal = data_dir / "__cluster_metadata" / "journal-0.log"
    data = bytearray(journal.read_bytes())
    damaged_at = next(offset for offset, record in F.scan_framed(bytes(data)).records
                      if record.get("name") == "damaged")
    data[damaged_at + F.FRAME.size + 3] ^= 0x01
    journal.write_bytes(bytes(data))

    try:
        engine_factory(brokers=1, data_dir=data_dir)
        raise AssertionError("the engine started on a corrupt journal")
    except RuntimeError as refused:
        message = str(refused)
    assert f"{journal} is corrupt at byte {damaged_at}: CRC mismatch" in message
    assert "Traceback" not in message
    assert (data_dir / "broker-0" / "after-0").is_dir()   # nothing deleted on a guess

    repair = [sys.executable, "-m", "engine", "metadata", "repair", "--data-dir", str(data_dir),
              "--file", journal.name, "--offset", str(damaged_at)]
    dry_run = subprocess.run(repair, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert dry_run.returncode == 1 and "Re-run with --yes" in dry_run.stdout
    assert journal.read_bytes() == data
    done = subprocess.run(repair + ["--yes"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert journal.stat().st_size == damaged_at

    engine = engine_factory(brokers=1, data_dir=data_dir)
    assert read_values(engine.bootstrap, "before", 1) == [b"before-value"]
    strays = sorted(p.name for p in (data_dir / "broker-0").glob("*-stray"))
    assert [name.split(".")[0] for name in strays] == ["after-0", "damaged-0"]
    assert any(p.name.startswith("0") and p.stat().st_size > 0
               for p in next((data_dir / "broker-0").glob("after-0.*-stray")).iterdir())
    assert "is not a replica of this broker in the metadata; its log dir was renamed" in engine.log_text()
    assert engine.terminate() == 0


def _journal_files(data_dir):
    return sorted((data_dir / "__cluster_metadata").glob("journal*"))


def test_a_torn_last_record_is_dropped_and_everything_before_it_survives(engine_factory, tmp_path):
    """A crash in the middle of the journal's last write (whatever its format): the engine starts,
    the earlier records all hold, and what it writes next survives the next restart."""
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=1, data_dir=data_dir)
    for name in ("first", "second"):
        create_topic(engine.bootstrap, name, 1, 1)
        send_values(engine.bootstrap, name, [f"{name}-value".encode()])
    engine.kill()
    journal = _journal_files(data_dir)[-1]
    size_before_last = journal.stat().st_size
    engine = engine_factory(brokers=1, data_dir=data_dir)
    create_topic(engine.bootstrap, "torn", 1, 1)   # the last write, cut short below
    engine.kill()
    grown = journal.stat().st_size - size_before_last
    assert grown > 8
    with open(journal, "r+b") as f:
        f.truncate(journal.stat().st_size - grown // 2)

    engine = engine_factory(brokers=1, data_dir=data_dir)
    for name in ("first", "second"):
        assert read_values(engine.bootstrap, name, 1) == [f"{name}-value".encode()]
    create_topic(engine.bootstrap, "after", 1, 1)
    send_values(engine.bootstrap, "after", [b"after-value"])
    assert engine.terminate() == 0
    engine = engine_factory(brokers=1, data_dir=data_dir)
    for name in ("first", "second", "after"):
        assert read_values(engine.bootstrap, name, 1) == [f"{name}-value".encode()]
