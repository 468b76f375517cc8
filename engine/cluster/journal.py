"""The metadata journal: append-only files of metadata records, each framed with its length
and CRC (journal_format.py).

Layout in `<data dir>/__cluster_metadata/`: `snapshot-<gen>.records` holds the image as
records at the start of generation <gen>, and `journal-<gen>.log` the records written since.
A clean shutdown starts generation <gen+1> with a fresh snapshot; older files are removed
only after the new snapshot is durable, so a crash at any moment leaves one consistent
(snapshot, journal) pair to replay. Data dirs of the older format (`snapshot-<gen>.json`,
`journal-<gen>.jsonl`) replay as they are; the controller then writes a new generation in
this format at once (`needs_migration`).

Durability: a batch of records is written and fsync'd before the controller applies it, so
an acknowledged admin change survives kill -9; a batch that fails to write (a full disk)
is cut off again and raises, and the controller applies nothing.

Damage: a torn tail (a crash mid-append) is truncated with a warning: the image is then a
prefix of what the controller wrote. Anything else - a bad CRC or length with good records
after it, a record that is not JSON, a damaged snapshot - raises `MetadataCorruptError`
naming the file, the byte offset and the repair command. Never a guess: replaying past a
hole would make topics vanish and their logs look orphaned.

Thread-safety: none; the controller is the only writer.
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Iterator

from engine.cluster import journal_format as F
from engine.storage import filesystem

log = logging.getLogger(__name__)

_SNAPSHOT = re.compile(r"^snapshot-(\d+)\.(records|json)$")


class MetadataCorruptError(Exception):
    """The metadata cannot be read without guessing; the message tells the operator what to do."""

    def __init__(self, path: Path, offset: int, problem: str, *, repairable: bool) -> None:
        self.path, self.offset, self.problem = path, offset, problem
        if repairable:
            data_dir = path.parent.parent
            advice = (f"Records after this point would be lost or misread, so the engine does not start. "
                      f"To drop this record and everything after it in this file (the metadata changes they "
                      f"made are lost), stop the engine and run:\n"
                      f"  python -m engine metadata repair --data-dir {data_dir} --file {path.name} "
                      f"--offset {offset} --yes")
        else:
            advice = "A snapshot cannot be repaired by truncation: restore the data dir from a backup."
        super().__init__(f"Cluster metadata file {path} is corrupt at byte {offset}: {problem}.\n{advice}")


class MetadataJournal:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.generation = max((int(m.group(1)) for m in map(_SNAPSHOT.match, os.listdir(directory)) if m),
                              default=0)
        self._fd = -1

    def _snapshot_path(self, generation: int) -> Path:
        return self.directory / f"snapshot-{generation}.records"

    def _journal_path(self, generation: int) -> Path:
        return self.directory / f"journal-{generation}.log"

    def _legacy_paths(self, generation: int) -> tuple[Path, Path]:
        return self.directory / f"snapshot-{generation}.json", self.directory / f"journal-{generation}.jsonl"

    @property
    def needs_migration(self) -> bool:
        return any(p.exists() for p in self._legacy_paths(self.generation))

    def replay(self) -> Iterator[tuple[Path, int, dict]]:
        """Yield (file, byte offset, record): the snapshot's records, then the journal's.

        Raises MetadataCorruptError on damage other than a torn journal tail."""
        legacy_snapshot, legacy_journal = self._legacy_paths(self.generation)
        for path, scan, journal in ((legacy_snapshot, F.scan_json_array, False),
                                    (self._snapshot_path(self.generation), F.scan_framed, False),
                                    (legacy_journal, F.scan_json_lines, True),
                                    (self._journal_path(self.generation), F.scan_framed, True)):
            if path.exists():
                yield from self._replay_file(path, scan, journal=journal)

    def _replay_file(self, path: Path, scan, *, journal: bool) -> Iterator[tuple[Path, int, dict]]:
        scanned = scan(path.read_bytes())
        if scanned.problem is not None and not (journal and scanned.torn_tail):
            raise MetadataCorruptError(path, scanned.good_bytes, scanned.problem, repairable=journal)
        for offset, record in scanned.records:
            yield path, offset, record
        if scanned.problem is not None:
            log.warning("Metadata journal %s: torn tail at byte %d (%s, nothing valid after it): truncated, "
                        "as a crash mid-write leaves it", path, scanned.good_bytes, scanned.problem)
            os.truncate(path, scanned.good_bytes)

    def append(self, records: list[dict]) -> None:
        self.append_frames([F.frame(r) for r in records])

    def append_frames(self, frames: list[bytes]) -> None:
        """Append records framed beforehand (`journal_format.frame`), with one write and one
        fsync: a big change frames its records in slices, then appends them at once."""
        if self._fd < 0:
            path = self._journal_path(self.generation)
            self._fd = filesystem.FS.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            _fsync_dir(self.directory)
        payload = b"".join(frames)
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            view = memoryview(payload)
            while view:
                view = view[filesystem.FS.write(self._fd, view):]
            filesystem.FS.fsync(self._fd)
        except OSError:
            # Nothing applies, and no torn record may stay: the next append would follow it,
            # and a bad record with good ones after it refuses the next start.
            filesystem.FS.ftruncate(self._fd, end)
            raise

    def write_snapshot(self, records: list[dict]) -> None:
        """Start a new generation whose snapshot holds `records` (the whole image)."""
        self.close()
        new_generation = self.generation + 1
        tmp = self.directory / "snapshot.tmp"
        with tmp.open("wb") as handle:
            handle.write(b"".join(F.frame(r) for r in records))
            handle.flush()
            os.fsync(handle.fileno())
        filesystem.FS.replace(tmp, self._snapshot_path(new_generation))
        _fsync_dir(self.directory)
        old = self.generation
        self.generation = new_generation
        for path in (self._snapshot_path(old), self._journal_path(old), *self._legacy_paths(old)):
            path.unlink(missing_ok=True)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def repair(metadata_dir: Path, file_name: str, offset: int) -> int:
    """Truncate journal `file_name` at `offset`; return the bytes dropped. Only journal files
    of the current generation can be cut: a snapshot cut short would drop the whole image."""
    journal = MetadataJournal(metadata_dir)
    allowed = {journal._journal_path(journal.generation).name, journal._legacy_paths(journal.generation)[1].name}
    if file_name not in allowed:
        raise ValueError(f"{file_name} is not the current journal of {metadata_dir} "
                         f"(that is one of {sorted(allowed)})")
    path = metadata_dir / file_name
    size = path.stat().st_size
    if not 0 <= offset <= size:
        raise ValueError(f"offset {offset} is outside {path} ({size} bytes)")
    with path.open("rb+") as handle:
        handle.truncate(offset)
        os.fsync(handle.fileno())
    return size - offset


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
