"""File naming and durable-write helpers shared by the storage classes (Kafka's LogFileUtils).

Offsets in file names are zero-padded to 20 digits so that `ls` lists segments in
offset order.  Files that must survive a crash intact (checkpoints, producer
snapshots) are written to a temp file, fsynced, renamed over the old one, and the
directory is fsynced so the rename itself is durable.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path

from . import filesystem

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
TEMP_SUFFIX = ".tmp"
DELETE_DIR_SUFFIX = "-delete"
STRAY_DIR_SUFFIX = "-stray"     # KIP-866: a partition dir the metadata does not name
# Leftovers of interrupted operations; none of them holds acknowledged data.
STRAY_SUFFIXES = (TEMP_SUFFIX, ".deleted", ".cleaned", ".swap")
MAX_FILE_NAME = 255


def as_path(path: Path | str) -> Path:
    """`path` as a Path, without building a new one from a Path (which parses it again: at
    start-up that was a few Paths per partition, tens of thousands)."""
    return path if isinstance(path, Path) else Path(path)


def offset_file(directory: Path, offset: int, suffix: str) -> Path:
    return Path(directory) / f"{offset:020d}{suffix}"


def offset_from_file(path: Path | str) -> int | None:
    """The offset a segment/snapshot file is named after, or None if it is not one."""
    # String operations, not a Path: start-up calls this for every file of every partition dir.
    stem = os.path.basename(os.fspath(path)).split(".", 1)[0]
    return int(stem) if len(stem) == 20 and stem.isdigit() else None


def parse_topic_partition(name: str) -> tuple[str, int] | None:
    """Split a partition dir name on its LAST '-': topics may contain '-' themselves."""
    topic, sep, partition = name.rpartition("-")
    if not sep or not topic or not partition.isdigit():
        return None
    return topic, int(partition)


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def delete_dir_name(name: str, kind: str = DELETE_DIR_SUFFIX) -> str:
    """`<topic>-<partition>.<uuid>-delete` (or `-stray`), shortening the topic to fit 255
    bytes (as Kafka)."""
    parsed = parse_topic_partition(name)
    topic, partition = parsed if parsed else (name, None)
    suffix = f".{uuid.uuid4().hex}{kind}"
    if partition is not None:
        suffix = f"-{partition}{suffix}"
    return topic[:MAX_FILE_NAME - len(suffix)] + suffix


def fsync_dir(directory: Path | str) -> None:
    """Make creations, renames and deletions inside `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file."""
    path = Path(path)
    tmp = path.with_name(path.name + TEMP_SUFFIX)
    fd = filesystem.FS.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[filesystem.FS.write(fd, view):]
        filesystem.FS.fsync(fd)
    finally:
        os.close(fd)
    filesystem.FS.replace(tmp, path)
    fsync_dir(path.parent)


def unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
