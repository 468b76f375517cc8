"""Source connectors' offsets, by connector and source partition: in the offsets topic in Kafka
Connect's format (KafkaOffsetBackingStore), or in a file for a standalone worker.

Offsets topic records: key `["<connector>", {<source partition>}]` and value `{<offset>}` as
compact JSON (schemas disabled, Connect's internal converter); a null value (tombstone) forgets
a partition. Keys are hashed with Java's murmur2, so a key lands in the partition a Java worker
would use, and a later record of the same key replaces the earlier one when compacted.

The standalone file (`offset.storage.file.filename`) holds the same pairs as a JSON list,
rewritten atomically (temporary file and rename) at every flush; Connect's own file is
Java-serialized and is not read.

Thread-safety: the map is changed under `_lock` (reader thread, or the writer for the file
store); `get`, `connector_offsets` and `put` may be called from any thread.
"""
from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from engine.connect.topic_log import CompactedTopicStore

log = logging.getLogger("engine.connect.offset_store")


def partition_key(partition: dict | None) -> str:
    """A source partition as a lookup key (key order does not matter)."""
    return json.dumps(partition, sort_keys=True, separators=(",", ":"))


def record_key(connector: str, partition: dict | None) -> bytes:
    return json.dumps([connector, partition], separators=(",", ":")).encode()


def record_value(offset: dict | None) -> bytes | None:
    return None if offset is None else json.dumps(offset, separators=(",", ":")).encode()


class OffsetStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        # connector -> partition key -> (partition, offset)
        self._offsets: dict[str, dict[str, tuple[dict | None, dict]]] = {}

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def refresh(self, timeout: float = 30.0) -> bool:
        return True

    def get(self, connector: str, partition: dict | None) -> dict | None:
        with self._lock:
            entry = self._offsets.get(connector, {}).get(partition_key(partition))
        return None if entry is None else dict(entry[1])

    def connector_offsets(self, connector: str) -> list[tuple[dict | None, dict]]:
        with self._lock:
            return [(p, dict(o)) for p, o in self._offsets.get(connector, {}).values()]

    def _remember(self, connector: str, partition: dict | None, offset: dict | None) -> None:
        with self._lock:
            partitions = self._offsets.setdefault(connector, {})
            if offset is None:
                partitions.pop(partition_key(partition), None)
                if not partitions:
                    self._offsets.pop(connector, None)
            else:
                partitions[partition_key(partition)] = (partition, offset)

    def put(self, connector: str, offsets: list[tuple[dict | None, dict | None]], timeout: float = 30.0) -> None:
        """Commit these offsets (None: forget the partition); returns once they are durable."""
        for partition, offset in offsets:
            self._remember(connector, partition, offset)


class FileOffsetStore(OffsetStore):
    def __init__(self, filename: str) -> None:
        super().__init__()
        self.path = Path(filename)

    def start(self) -> None:
        if not self.path.exists():
            return
        try:
            entries = json.loads(self.path.read_text())
        except (OSError, ValueError) as exc:
            raise RuntimeError(f"Could not read the offsets file {self.path}: {exc}") from exc
        for connector, partition, offset in entries:
            self._remember(connector, partition, offset)

    def put(self, connector: str, offsets: list[tuple[dict | None, dict | None]], timeout: float = 30.0) -> None:
        super().put(connector, offsets)
        with self._lock:
            entries = [[c, p, o] for c, parts in sorted(self._offsets.items()) for p, o in parts.values()]
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps(entries))
        with open(temporary, "rb") as f:
            os.fsync(f.fileno())
        os.replace(temporary, self.path)


class KafkaOffsetStore(CompactedTopicStore, OffsetStore):
    def __init__(self, topic: str, settings: dict[str, str], *, partitions: int, replication_factor: int,
                 client_id: str) -> None:
        super().__init__()
        self.attach_topic(topic, settings, partitions=partitions, replication_factor=replication_factor,
                          client_id=f"{client_id}-offsets", purpose="source connector offsets")

    def _on_record(self, key: bytes | None, value: bytes | None, offset: int, partition: int) -> None:
        try:
            parsed_key = json.loads(key) if key is not None else None
            parsed_value = json.loads(value) if value is not None else None
        except ValueError:
            log.warning("Ignoring an offset record that is not JSON at %s-%d@%d", self.topic, partition, offset)
            return
        if (not isinstance(parsed_key, list) or len(parsed_key) != 2 or not isinstance(parsed_key[0], str)
                or not (parsed_key[1] is None or isinstance(parsed_key[1], dict))
                or not (parsed_value is None or isinstance(parsed_value, dict))):
            log.warning("Ignoring an offset record of an unexpected shape at %s-%d@%d", self.topic, partition,
                        offset)
            return
        self._remember(parsed_key[0], parsed_key[1], parsed_value)

    def put(self, connector: str, offsets: list[tuple[dict | None, dict | None]], timeout: float = 30.0) -> None:
        futures = [self.log.send(record_key(connector, partition), record_value(offset))
                   for partition, offset in offsets]
        for future in futures:
            future.result(timeout)
        super().put(connector, offsets)
