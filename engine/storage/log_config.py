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
    # A client's CreateTime record may be at most this much older / newer than the broker's
    # clock. Unbounded here; the broker passes the topic's (Kafka 4.0's default after: 1 h).
    message_timestamp_before_max_ms: int = LONG_MAX  # message.timestamp.before.max.ms
    message_timestamp_after_max_ms: int = LONG_MAX   # message.timestamp.after.max.ms
    cleanup_policy: str = "delete"                   # cleanup.policy
    file_delete_delay_ms: int = 60000                # file.delete.delay.ms
    # Compaction (cleaner.py); they matter only when cleanup_policy contains "compact".
    delete_retention_ms: int = 24 * 3600 * 1000      # delete.retention.ms
    min_cleanable_dirty_ratio: float = 0.5           # min.cleanable.dirty.ratio
    min_compaction_lag_ms: int = 0                   # min.compaction.lag.ms
    max_compaction_lag_ms: int = LONG_MAX            # max.compaction.lag.ms

    def timestamp_bounds(self, now_ms: int) -> tuple[int, int] | None:
        """(oldest, newest) CreateTime timestamp a client's record may carry now; None when the
        broker stamps the records (LogAppendTime) or nothing is bounded."""
        if self.message_timestamp_type != "CreateTime" or \
                self.message_timestamp_before_max_ms == self.message_timestamp_after_max_ms == LONG_MAX:
            return None
        return (now_ms - min(self.message_timestamp_before_max_ms, now_ms),
                min(now_ms + self.message_timestamp_after_max_ms, LONG_MAX))

    @property
    def compact(self) -> bool:
        return "compact" in (p.strip() for p in self.cleanup_policy.split(","))

    @property
    def delete(self) -> bool:
        """cleanup.policy includes delete: retention applies, and clients may delete records."""
        return "delete" in (p.strip() for p in self.cleanup_policy.split(","))
