"""Offset checkpoint files of a log dir, in Kafka's text format (OffsetCheckpointFile)."""
from __future__ import annotations

import logging
from pathlib import Path

from .errors import StorageError
from .log_files import write_atomically

VERSION = 0
log = logging.getLogger(__name__)


class OffsetCheckpointFile:
    """A map (topic, partition) -> offset, e.g. `recovery-point-offset-checkpoint`.

    Layout (UTF-8 text, one item per line):

        0                       <- format version
        2                       <- number of entries
        my-topic 0 1234         <- topic, partition, offset
        my.other_topic 3 99

    Topic names cannot contain spaces, so a space separates the fields.  `write`
    replaces the file atomically (temp file, fsync, rename, fsync dir).

    Not thread-safe: the LogManager owns both checkpoint files of its dir.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def write(self, offsets: dict[tuple[str, int], int]) -> None:
        lines = [str(VERSION), str(len(offsets))]
        lines += [f"{topic} {partition} {offset}"
                  for (topic, partition), offset in sorted(offsets.items())]
        write_atomically(self.path, ("\n".join(lines) + "\n").encode())

    def read(self) -> dict[tuple[str, int], int]:
        """The checkpointed offsets; {} if the file does not exist."""
        try:
            text = self.path.read_text("utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise StorageError(f"cannot read {self.path}: {exc}") from exc
        return self._parse(text.splitlines())

    def read_or_ignore(self, consequence: str) -> dict[tuple[str, int], int]:
        """The checkpointed offsets, or {} with a warning if the file is damaged: a checkpoint
        only saves work (recovery re-derives what it says from the segments), so a garbled
        one must not stop the broker. `consequence` tells the operator what ignoring costs."""
        try:
            return self.read()
        except StorageError as exc:
            log.warning("%s; ignoring it: %s", exc, consequence)
            return {}

    def _parse(self, lines: list[str]) -> dict[tuple[str, int], int]:
        try:
            version, count = int(lines[0]), int(lines[1])
        except (IndexError, ValueError):
            raise self._malformed("missing version or count") from None
        if version != VERSION:
            raise self._malformed(f"unknown version {version}")
        entries = [line for line in lines[2:] if line.strip()]
        if len(entries) != count:
            raise self._malformed(f"expected {count} entries, found {len(entries)}")
        offsets = {}
        for line in entries:
            fields = line.split()
            if len(fields) != 3 or not fields[1].isdigit() or not _is_int(fields[2]):
                raise self._malformed(f"bad line {line!r}")
            offsets[(fields[0], int(fields[1]))] = int(fields[2])
        return offsets

    def _malformed(self, why: str) -> StorageError:
        return StorageError(f"malformed checkpoint file {self.path}: {why}")


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()
