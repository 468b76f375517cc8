"""The metadata journal: append-only files of JSON metadata records, one per line.

Layout in `<data dir>/__cluster_metadata/`: `snapshot-<gen>.json` holds the image as records
at the start of generation <gen>, and `journal-<gen>.jsonl` the records written since. A
clean shutdown starts generation <gen+1> with a fresh snapshot; older files are removed
only after the new snapshot is durable, so a crash at any moment leaves one consistent
(snapshot, journal) pair to replay.

Durability: a batch of records is written and fsync'd before the controller applies it, so
an acknowledged admin change survives kill -9; a batch that fails to write (a full disk)
is cut off again and raises, and the controller applies nothing. A torn final
line (a crash mid-write) is dropped at replay: the image is always a prefix of what the
controller wrote.

Thread-safety: none; the controller is the only writer.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterator

_SNAPSHOT = re.compile(r"^snapshot-(\d+)\.json$")


class MetadataJournal:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.generation = max((int(m.group(1)) for m in map(_SNAPSHOT.match, os.listdir(directory)) if m),
                              default=0)
        self._fd = -1

    def _snapshot_path(self, generation: int) -> Path:
        return self.directory / f"snapshot-{generation}.json"

    def _journal_path(self, generation: int) -> Path:
        return self.directory / f"journal-{generation}.jsonl"

    def replay(self) -> Iterator[dict]:
        """Yield the current snapshot's records, then the journal's, dropping a torn tail."""
        snapshot = self._snapshot_path(self.generation)
        if snapshot.exists():
            yield from json.loads(snapshot.read_text())
        journal = self._journal_path(self.generation)
        if not journal.exists():
            return
        good_bytes = 0
        with journal.open("rb") as handle:
            for line in handle:
                try:
                    record = json.loads(line) if line.endswith(b"\n") else None
                except ValueError:
                    record = None
                if record is None:
                    break
                good_bytes += len(line)
                yield record
        if good_bytes != journal.stat().st_size:
            os.truncate(journal, good_bytes)

    def append(self, records: list[dict]) -> None:
        if self._fd < 0:
            path = self._journal_path(self.generation)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            _fsync_dir(self.directory)
        payload = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except OSError:
            # Nothing applies, and no torn line may stay: replay stops at the first one, so
            # every batch written after it would be lost at the next start.
            os.ftruncate(self._fd, end)
            raise

    def write_snapshot(self, records: list[dict]) -> None:
        """Start a new generation whose snapshot holds `records` (the whole image)."""
        self.close()
        new_generation = self.generation + 1
        tmp = self.directory / "snapshot.tmp"
        with tmp.open("w") as handle:
            json.dump(records, handle, separators=(",", ":"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self._snapshot_path(new_generation))
        _fsync_dir(self.directory)
        old = self.generation
        self.generation = new_generation
        for path in (self._snapshot_path(old), self._journal_path(old)):
            path.unlink(missing_ok=True)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
