import os
import threading

from engine.storage import file_handles
from engine.storage.log import Log
from engine.storage.log_config import LogConfig
from tests.engine.storage.conftest import make_batch


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_many_logs_stay_within_the_descriptor_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(file_handles.HANDLES, "limit", 16)
    before = open_fds()
    logs = [Log.open(tmp_path / f"t-{i}", LogConfig(), now_ms=0) for i in range(60)]
    for round_ in range(3):
        for i, log in enumerate(logs):
            log.append(make_batch([f"{i}-{round_}".encode()]), leader_epoch=0, now_ms=0)
    assert open_fds() - before <= 16 + 2            # 180 segment files, never more than the cap open
    for i, log in enumerate(logs):                   # every log still reads back what it was given
        data = log.read(0, 1 << 20).read()
        assert all(f"{i}-{r}".encode() in data for r in range(3))
        assert log.log_end_offset == 3
    for log in logs:
        log.close()


def test_pinned_files_stay_open_and_other_threads_never_close(tmp_path, monkeypatch):
    """The cleaner's thread pins what it uses: evictions skip it, and a close while pinned waits
    for the unpin; a thread that runs never_evicting closes no one's descriptor."""
    monkeypatch.setattr(file_handles.HANDLES, "limit", 2)
    first = file_handles.PooledFile(tmp_path / "a")
    with first.pinned():
        fd = first.fd
        others = [file_handles.PooledFile(tmp_path / f"f{i}") for i in range(4)]
        assert first._raw_fd == fd                        # evictions passed it by
        first.close()
        assert os.fstat(fd)                               # still open while pinned
    assert first._raw_fd == -1                            # closed once let go

    opened = []

    def open_files_quietly():
        with file_handles.HANDLES.never_evicting():
            opened.extend(file_handles.PooledFile(tmp_path / f"t{i}") for i in range(4))
    worker = threading.Thread(target=open_files_quietly)
    worker.start()
    worker.join()
    assert all(f._raw_fd >= 0 for f in opened)            # the worker evicted nothing
    for f in others + opened:
        f.close()
