"""`python -m engine serve` holds DATA_DIR/.lock for its life: a second engine on the same data
dir (or `metadata repair`) exits 1 with Kafka's message and touches nothing while the first
keeps serving; kill -9 frees the lock, so the restart after a crash starts."""
import subprocess
import sys
from pathlib import Path

from tests.engine.test_serve_cli import make_topic, read_everything
from tests.support.engine_process import ROOT, free_port_range
from tests.support.partition_io import send_values


def files_under(directory: Path) -> dict[str, tuple[int, bytes]]:
    """Every file's size and, for the small ones (lock, token, checkpoints), its bytes."""
    return {str(p.relative_to(directory)): (p.stat().st_size, p.read_bytes() if p.stat().st_size < 4096 else b"")
            for p in sorted(directory.rglob("*")) if p.is_file()}


def engine_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_a_second_engine_on_the_same_data_dir_is_refused_and_the_first_keeps_serving(engine_factory, tmp_path):
    data_dir = tmp_path / "data"
    first = engine_factory(brokers=2, data_dir=data_dir)
    make_topic(first.bootstrap, "held", partitions=2)
    send_values(first.bootstrap, "held", [b"before"] * 10, acks="all")
    before = files_under(data_dir)
    assert (data_dir / ".lock").read_text() == f"{first.process.pid}\n"

    second = engine_command("serve", "--data-dir", str(data_dir), "--brokers", "2", "--port",
                            str(free_port_range(3)))
    assert second.returncode == 1, second.stderr
    assert (f"Failed to acquire lock on file .lock in {data_dir}. An engine instance in another process or "
            f"thread is using this directory (pid {first.process.pid})." in second.stderr)
    journal = next((data_dir / "__cluster_metadata").glob("journal-*.log")).name
    repair = engine_command("metadata", "repair", "--data-dir", str(data_dir), "--file", journal, "--offset", "0",
                            "--yes")
    assert repair.returncode == 1 and "Stop the engine first" in repair.stderr, repair.stdout + repair.stderr
    assert files_under(data_dir) == before          # neither wrote, created nor removed a file

    send_values(first.bootstrap, "held", [b"after"] * 10, acks="all")
    assert [v for _, v in read_everything(first.bootstrap, "held", partitions=2)[0]] == [b"before"] * 10 + [b"after"] * 10

    first.kill()                                   # the kernel drops the lock of a killed process
    first.start()
    assert sum(len(r) for r in read_everything(first.bootstrap, "held", partitions=2).values()) == 20
