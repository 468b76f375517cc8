"""DirLock: one holder per data dir, a readable refusal that changes nothing, and a lock the
kernel drops when its holder dies."""
import os
import signal
import subprocess
import sys

import pytest

from engine.storage.dir_lock import DataDirLockedError, DirLock
from tests.support.engine_process import ROOT

HOLD = "import sys, time; from engine.storage.dir_lock import DirLock; lock = DirLock(sys.argv[1]); lock.acquire(); " \
       "print('held', flush=True); time.sleep(600)"


def test_a_second_lock_on_the_same_dir_is_refused_and_leaves_the_file_alone(tmp_path):
    first = DirLock(tmp_path / "data")
    first.acquire()
    written = (tmp_path / "data" / ".lock").read_bytes()
    assert written == f"{os.getpid()}\n".encode()

    with pytest.raises(DataDirLockedError) as refused:
        DirLock(tmp_path / "data").acquire()     # in the same process too: flock is per open file
    assert str(refused.value) == (
        f"Failed to acquire lock on file .lock in {tmp_path / 'data'}. An engine instance in another "
        f"process or thread is using this directory (pid {os.getpid()}).")
    assert (tmp_path / "data" / ".lock").read_bytes() == written

    first.release()
    second = DirLock(tmp_path / "data")
    second.acquire()
    assert second.held
    second.release()


def test_the_lock_of_a_killed_process_is_free_again(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(DataDirLockedError, match=f"pid {holder.pid}"):
            DirLock(tmp_path).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    lock = DirLock(tmp_path)
    lock.acquire()                       # no stale lock after kill -9
    assert (tmp_path / ".lock").read_text() == f"{os.getpid()}\n"
    lock.release()
