"""`python -m engine metadata repair --data-dir DIR --file NAME --offset N [--yes]`.

The repair the engine names when its metadata journal is corrupt in the middle: cut the
journal at that record. The metadata changes from there on are lost, so it only prints what
it would drop unless --yes confirms. Run it with the engine stopped: it takes the data dir's
lock (engine/storage/dir_lock.py) and refuses while an engine holds it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.cluster.journal import repair
from engine.storage.dir_lock import DataDirLockedError, DirLock

METADATA_DIR = "__cluster_metadata"


def add_parser(commands) -> None:
    parser = commands.add_parser("metadata", help="repair the cluster metadata of a stopped engine")
    parser.add_argument("action", choices=["repair"])
    parser.add_argument("--data-dir", required=True, help="the engine's data dir")
    parser.add_argument("--file", required=True, help="the journal file the engine named, e.g. journal-3.log")
    parser.add_argument("--offset", type=int, required=True, help="the byte offset the engine named")
    parser.add_argument("--yes", action="store_true", help="really truncate (without it: only say what would go)")


def run(args: argparse.Namespace) -> int:
    metadata_dir = Path(args.data_dir) / METADATA_DIR
    path = metadata_dir / args.file
    if not path.is_file():
        print(f"error: no such journal file {path}", file=sys.stderr)
        return 2
    size = path.stat().st_size
    if not args.yes:
        print(f"Would truncate {path} at byte {args.offset}, dropping {max(size - args.offset, 0)} of {size} "
              f"bytes (the metadata changes recorded there are lost). Re-run with --yes to do it.")
        return 1
    lock = DirLock(args.data_dir)
    try:
        lock.acquire()
        dropped = repair(metadata_dir, args.file, args.offset)
    except DataDirLockedError as exc:
        print(f"error: {exc} Stop the engine first.", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        lock.release()
    print(f"Truncated {path} at byte {args.offset}: {dropped} bytes dropped.")
    return 0
