"""The metadata journal on its own: what replay gives back after failed and torn writes."""
import errno
import os

import pytest

from engine.cluster import journal as journal_module
from engine.cluster.journal import MetadataJournal


def test_a_failed_append_leaves_no_torn_line_behind(tmp_path, monkeypatch):
    """A batch that hits a full disk half-way is cut off again: the batches after it must
    still replay (replay stops at the first torn line)."""
    journal = MetadataJournal(tmp_path)
    journal.append([{"type": "first"}])
    real_write = os.write

    def half_then_full(fd, data):
        real_write(fd, bytes(data[:len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_module.os, "write", half_then_full)
    with pytest.raises(OSError):
        journal.append([{"type": "lost", "padding": "x" * 100}])
    monkeypatch.setattr(journal_module.os, "write", real_write)
    journal.append([{"type": "third"}])
    journal.close()

    assert [r["type"] for r in MetadataJournal(tmp_path).replay()] == ["first", "third"]
