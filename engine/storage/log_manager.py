"""All partition logs of one broker log dir (Kafka's LogManager)."""
from __future__ import annotations

import logging
import os
import re
import shutil
import time
from pathlib import Path
from typing import Callable

from .checkpoint import OffsetCheckpointFile
from .log import Log
from .log_config import LogConfig
from .log_loader import RecoveryStats
from .log_threads import run_on_threads
from .log_files import (DELETE_DIR_SUFFIX, fsync_dir, parse_topic_partition, partition_dir_name,
                        write_atomically)

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
# Kafka's legal topic names; anything else could escape the log dir.
TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")

TopicPartition = tuple[str, int]
logger = logging.getLogger(__name__)


class LogManager:
    """Owns the log dir: one `<topic>-<partition>` dir per partition, plus

    * `recovery-point-offset-checkpoint`: per partition, the offset below which its log
      is fsynced (OffsetCheckpointFile format);
    * `log-start-offset-checkpoint`: per partition, its log start offset;
    * `.kafka_cleanshutdown`: present only between a clean shutdown and the next start;
      without it, each log re-validates what lies above its recovery point.

    Checkpoints are written by `checkpoint()` (the broker calls it periodically), after
    retention and deletions, and at shutdown.

    Not thread-safe: the broker's event loop calls every method.
    """

    def __init__(self, log_dir: Path | str) -> None:
        self.log_dir = Path(log_dir)
        self._logs: dict[TopicPartition, Log] = {}
        self._recovery_points = OffsetCheckpointFile(self.log_dir / RECOVERY_POINT_CHECKPOINT)
        self._log_start_offsets = OffsetCheckpointFile(self.log_dir / LOG_START_OFFSET_CHECKPOINT)
        self.had_clean_shutdown = False
        self.load_stats = RecoveryStats()     # what the last load() did (logged at its end)

    def load(self, config_for: Callable[[str], LogConfig], now_ms: int, *, threads: int = 1) -> None:
        """Open every partition dir, on `threads` threads (num.recovery.threads.per.data.dir);
        `config_for(topic)` gives each topic's config."""
        started = time.monotonic()
        self.load_stats = RecoveryStats()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        marker = self.log_dir / CLEAN_SHUTDOWN_FILE
        self.had_clean_shutdown = marker.exists()
        if self.had_clean_shutdown:
            # Removed before loading: a crash from here on must count as unclean.
            marker.unlink()
            fsync_dir(self.log_dir)
        recovery_points = self._recovery_points.read_or_ignore(
            "every log is recovered from its segments, from the start")
        if not recovery_points and self._recovery_points.path.exists():
            self.had_clean_shutdown = False   # so the loader validates every segment
        log_start_offsets = self._log_start_offsets.read_or_ignore(
            "log start offsets fall back to the first segment of each log")
        found = []
        for entry in sorted(os.scandir(self.log_dir), key=lambda e: e.name):
            if not entry.is_dir():
                continue
            if entry.name.endswith(DELETE_DIR_SUFFIX):
                shutil.rmtree(entry.path, ignore_errors=True)  # a deletion cut short
                continue
            tp = parse_topic_partition(entry.name)
            if tp is None or not TOPIC_NAME.fullmatch(tp[0]):
                continue
            found.append((tp, entry.path))
        configs = {topic: config_for(topic) for topic in {tp[0] for tp, _ in found}}

        def open_log(item: tuple[TopicPartition, str]) -> tuple[TopicPartition, Log, RecoveryStats]:
            tp, path = item
            stats = RecoveryStats()
            log = Log.open(path, configs[tp[0]], recovery_point=recovery_points.get(tp, 0),
                           log_start_offset=log_start_offsets.get(tp, 0), now_ms=now_ms,
                           had_clean_shutdown=self.had_clean_shutdown, stats=stats)
            log.release_descriptors()      # the first use reopens; see log_threads.py
            return tp, log, stats
        for tp, log, stats in run_on_threads(open_log, found, threads):
            self._logs[tp] = log
            self.load_stats.add(stats)
        self.checkpoint()
        stats = self.load_stats
        logger.info("Loaded %d logs from %s in %.1f s after %s shutdown: %d segments recovered, %d bytes truncated",
                 stats.logs, self.log_dir, time.monotonic() - started,
                 "a clean" if self.had_clean_shutdown else "an unclean", stats.recovered_segments,
                 stats.truncated_bytes)

    # --- lookup ------------------------------------------------------------------------
    def get_log(self, topic: str, partition: int) -> Log | None:
        return self._logs.get((topic, partition))

    def all_logs(self) -> dict[TopicPartition, Log]:
        return dict(self._logs)

    def get_or_create_log(self, topic: str, partition: int, config: LogConfig,
                          now_ms: int) -> Log:
        log = self._logs.get((topic, partition))
        if log is not None:
            return log
        if not TOPIC_NAME.fullmatch(topic) or topic in (".", "..") or partition < 0:
            raise ValueError(f"illegal topic partition {topic!r} {partition}")
        path = self.log_dir / partition_dir_name(topic, partition)
        os.makedirs(path, exist_ok=True)   # not fsync'd: see LogLoader.load on new logs
        log = Log.open(path, config, now_ms=now_ms, had_clean_shutdown=True)
        self._logs[(topic, partition)] = log
        return log

    def delete_log(self, topic: str, partition: int) -> bool:
        """Delete the partition's dir; False if there was no such log."""
        log = self._logs.pop((topic, partition), None)
        if log is None:
            return False
        log.delete()
        # A stale recovery point would let a re-created partition skip its recovery.
        self.checkpoint()
        return True

    def delete_logs(self, partitions: list[TopicPartition], *, checkpoint: bool = True) -> list[Path]:
        """Delete many logs at the cost of one: each dir is renamed `-delete` (the next load
        removes what is left of it), then one fsync of the log dir and one checkpoint.
        Returns the renamed dirs, for the caller to remove (off the event loop). Without
        `checkpoint`, the caller checkpoints once after its last batch."""
        doomed = []
        for tp in partitions:
            log = self._logs.pop(tp, None)
            if log is not None:
                doomed.append(log.rename_for_deletion())
        if doomed:
            fsync_dir(self.log_dir)
        if checkpoint and doomed:
            self.checkpoint()
        return doomed

    def mark_stray(self, topic: str, partition: int) -> Path | None:
        """Set aside a log the metadata does not name (KIP-866): renamed, never deleted."""
        log = self._logs.pop((topic, partition), None)
        if log is None:
            return None
        stray = log.rename_stray()
        self.checkpoint()
        return stray

    # --- background work ---------------------------------------------------------------
    def checkpoint(self) -> None:
        """Write both checkpoint files from the logs' current state."""
        self._recovery_points.write({tp: log.recovery_point for tp, log in self._logs.items()})
        self._log_start_offsets.write(
            {tp: log.log_start_offset for tp, log in self._logs.items()})

    def run_retention(self, now_ms: int, high_watermarks: dict[TopicPartition, int] | None = None) -> int:
        """Apply retention to every log; return the number of segments deleted.

        With `high_watermarks` (the broker's replicas), each log keeps everything from its
        high watermark on, and a log without one is left alone."""
        deleted = 0
        for tp, log in self._logs.items():
            high_watermark = None if high_watermarks is None else high_watermarks.get(tp)
            if high_watermarks is None or high_watermark is not None:
                deleted += log.delete_old_segments(now_ms, high_watermark)
        if deleted:
            self.checkpoint()
        return deleted

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> int:
        """Expire idle idempotent producers in every log; return how many were forgotten."""
        return sum(log.producer_state.remove_expired(now_ms, expiration_ms) for log in self._logs.values())

    def flush_dirty_logs(self, now_ms: int) -> int:
        """Flush the logs whose flush.ms has passed; return how many were flushed."""
        return sum(log.maybe_flush(now_ms) for log in self._logs.values())

    def shutdown(self, *, threads: int = 1) -> None:
        """Flush and close every log (on `threads` threads), checkpoint, then mark the shutdown
        clean."""
        def flush_and_close(log: Log) -> None:
            log.flush()
            log.close()
        run_on_threads(flush_and_close, self._logs.values(), threads)
        self.checkpoint()       # the closed logs still know their recovery points and start offsets
        self._logs.clear()
        write_atomically(self.log_dir / CLEAN_SHUTDOWN_FILE, b"")
