"""The JSON of `kafka-reassign-partitions.sh` (version 1), read and written; manual edits.

    {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2, 3],
                                   "log_dirs": ["any", "any", "any"]}]}

`log_dirs` is optional on input and must say "any" (moving between log dirs of one broker
is not supported); it is written as "any". Every problem is an InvalidInput naming the entry.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from console.errors import InvalidInput
from console.reassignments.planner import Key

MAX_JSON_BYTES = 20 * 1024 * 1024


def export_json(assignment: Mapping[Key, Iterable[int]]) -> str:
    partitions = [{"topic": topic, "partition": partition, "replicas": list(replicas),
                   "log_dirs": ["any"] * len(list(replicas))}
                  for (topic, partition), replicas in sorted(assignment.items())]
    return json.dumps({"version": 1, "partitions": partitions}, indent=1)


def import_json(text: str | bytes) -> dict[Key, tuple[int, ...]]:
    if len(text) > MAX_JSON_BYTES:
        raise InvalidInput(f"The reassignment JSON is larger than {MAX_JSON_BYTES // (1024 * 1024)} MB.")
    try:
        document = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"Not valid JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != 1:
        raise InvalidInput('Expected {"version": 1, "partitions": [...]} (kafka-reassign-partitions.sh format).')
    entries = document.get("partitions")
    if not isinstance(entries, list) or not entries:
        raise InvalidInput('"partitions" must be a non-empty list.')
    assignment: dict[Key, tuple[int, ...]] = {}
    for n, entry in enumerate(entries):
        key, replicas = _entry(n, entry)
        if key in assignment:
            raise InvalidInput(f"Partition {key[0]}-{key[1]} is listed twice.")
        assignment[key] = replicas
    return assignment


def _entry(n: int, entry) -> tuple[Key, tuple[int, ...]]:
    where = f"Entry {n + 1}"
    if not isinstance(entry, dict):
        raise InvalidInput(f"{where} is not an object.")
    topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
    if not isinstance(topic, str) or not topic:
        raise InvalidInput(f"{where}: \"topic\" must be a topic name.")
    if not _is_int(partition) or partition < 0:
        raise InvalidInput(f"{where}: \"partition\" must be a partition number.")
    where = f"{topic}-{partition}"
    checked = check_replicas(replicas, where=where)
    log_dirs = entry.get("log_dirs")
    if log_dirs is not None and (not isinstance(log_dirs, list) or len(log_dirs) != len(checked)
                                 or any(d != "any" for d in log_dirs)):
        raise InvalidInput(f"{where}: \"log_dirs\" must list \"any\" once per replica (moves between log "
                           "directories are not supported).")
    return (topic, partition), checked


def check_replicas(replicas, *, where: str, brokers: Iterable[int] | None = None) -> tuple[int, ...]:
    """A valid replica list: non-empty, distinct broker ids (known ones when `brokers` is given)."""
    if not isinstance(replicas, list) or not replicas or not all(_is_int(b) and b >= 0 for b in replicas):
        raise InvalidInput(f"{where}: replicas must be a non-empty list of broker ids.")
    if len(set(replicas)) != len(replicas):
        raise InvalidInput(f"{where}: a broker appears twice in {replicas}.")
    if brokers is not None:
        unknown = sorted(set(replicas) - set(brokers))
        if unknown:
            raise InvalidInput(f"{where}: unknown {'brokers' if len(unknown) > 1 else 'broker'} {unknown}.")
    return tuple(replicas)


def parse_replica_list(text: str, *, where: str, brokers: Iterable[int] | None = None) -> tuple[int, ...]:
    """A replica list typed in the manual editor: "1,2,3" (spaces allowed)."""
    parts = [s.strip() for s in text.split(",") if s.strip()]
    try:
        replicas = [int(s) for s in parts]
    except ValueError:
        raise InvalidInput(f"{where}: {text!r} is not a comma-separated list of broker ids.") from None
    return check_replicas(replicas, where=where, brokers=brokers)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
