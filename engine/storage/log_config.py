"""The per-partition settings the storage layer obeys, with Kafka's defaults.

The protocol layer maps topic configs (`retention.ms`, `segment.bytes`, ...) onto this
immutable value; a config change swaps the whole object on the log.
"""
from __future__ import annotations

from dataclasses import dataclass

LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class LogConfig:
    segment_bytes: int = 1024 * 1024 * 1024          # segment.bytes
    segment_ms: int = 7 * 24 * 3600 * 1000           # segment.ms
    segment_index_bytes: int = 10 * 1024 * 1024      # segment.index.bytes
    index_interval_bytes: int = 4096                 # index.interval.bytes
    retention_ms: int = 7 * 24 * 3600 * 1000         # retention.ms (-1: unlimited)
    retention_bytes: int = -1                        # retention.bytes (-1: unlimited)
    flush_messages: int = LONG_MAX                   # flush.messages
    flush_ms: int = LONG_MAX                         # flush.ms
    max_message_bytes: int = 1048588                 # max.message.bytes
    message_timestamp_type: str = "CreateTime"       # message.timestamp.type
    cleanup_policy: str = "delete"                   # cleanup.policy
    file_delete_delay_ms: int = 60000                # file.delete.delay.ms
    # Compaction (cleaner.py); they matter only when cleanup_policy contains "compact".
    delete_retention_ms: int = 24 * 3600 * 1000      # delete.retention.ms
    min_cleanable_dirty_ratio: float = 0.5           # min.cleanable.dirty.ratio
    min_compaction_lag_ms: int = 0                   # min.compaction.lag.ms
    max_compaction_lag_ms: int = LONG_MAX            # max.compaction.lag.ms

    @property
    def compact(self) -> bool:
        return "compact" in (p.strip() for p in self.cleanup_policy.split(","))

    @property
    def delete(self) -> bool:
        """cleanup.policy includes delete: retention applies, and clients may delete records."""
        return "delete" in (p.strip() for p in self.cleanup_policy.split(","))
