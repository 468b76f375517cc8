"""Process-wide caches of the two answers that grow with the cluster, shared by every request.

At 10,000 topics / 40,000 partitions, decoding the all-topics Metadata answer costs a page
about 0.3 s and DescribeLogDirs of every replica about 0.5 s (benchmarks/console_pages.py),
while both change slowly. So:

- `MetadataCache` keeps the last all-topics `ClusterMetadata` of each cluster for
  `max_age` seconds (setting KAFKA_METADATA_MAX_AGE_SECONDS). The request that finds it
  older fetches it again while the others wait for that one fetch (one request per cluster
  in flight, never a stampede). The live feed's renders go through it too, so while anyone
  watches a cluster live it is refreshed in the background of the pages. Every write the
  gateway makes that changes metadata (topics, partitions, elections, reassignments,
  brokers stopped or started) drops the cluster's entry, so this console never shows its
  own change late; changes made elsewhere show within `max_age`.
- `LogDirSizes` keeps each broker's log dir totals, collected on a background thread
  (setting LOG_DIR_SIZES_MAX_AGE_SECONDS); a page shows the last totals with the time they
  were collected and, when they are older than that, starts a new collection without
  waiting for it. Only the very first collection of a process is waited for, at most
  LOG_DIR_SIZES_WAIT_SECONDS.
- `GroupLags` keeps every group's committed offsets and their partitions' log end offsets
  the same way (settings GROUP_LAG_MAX_AGE_SECONDS, GROUP_LAG_WAIT_SECONDS), for the groups
  list sorted by lag: at 2,000 groups / 40,000 committed partitions reading them costs
  about 1.5 CPU-s per page. One group's page still reads its offsets live.
- `TransactionProducers` keeps the open transactions of every partition (DescribeProducers
  of all partitions) the same way (settings TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS,
  TRANSACTIONS_PRODUCERS_WAIT_SECONDS), for the Transactions page's hanging check: 20,000
  partitions cost a page 1.2-2.2 s under load. The page reads the suspects again live, and
  the abort reads its partition live.

A max age of 0 turns a cache off: every call asks the cluster (the test settings do this,
so that tests of other features see every change at once; the cache tests turn it on).

Entries are keyed by the connection settings (bootstrap servers, protocol, user or OAuth
client), and hold frozen records only, so threads share them without copies. Thread-safe.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from console.kafka_gateway.errors import gateway_error
from console.kafka_gateway.records import ClusterMetadata, ConnectionSettings

Clock = Callable[[], float]
CacheKey = tuple[str, ...]


def cache_key(settings: ConnectionSettings) -> CacheKey:
    """Who the console is to the cluster (what it may see): never a secret. With OAUTHBEARER the
    OAuth client is who it is."""
    return (settings.bootstrap_servers, settings.security_protocol, settings.sasl_mechanism, settings.sasl_username,
            settings.ssl_cafile, settings.ssl_certfile, settings.oauth_token_endpoint_url, settings.oauth_client_id,
            settings.oauth_scope)


@dataclass(frozen=True)
class _Cached:
    metadata: ClusterMetadata
    fetched_at: float             # clock() when the request was sent


class MetadataCache:
    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[CacheKey, _Cached] = {}
        self._fetching: dict[CacheKey, threading.Lock] = {}
        self._lock = threading.Lock()
        self.fetches = 0                   # cluster round trips made (tests count them)

    def get(self, key: CacheKey, *, max_age: float, fetch: Callable[[], ClusterMetadata]) -> ClusterMetadata:
        """The cached metadata when younger than `max_age` seconds, else `fetch()`ed (once,
        however many threads ask at the same moment) and cached."""
        if max_age <= 0:
            return self._fetch(key, fetch, store=False)
        cached = self.fresh(key, max_age=max_age)
        if cached is not None:
            return cached
        with self._lock:
            fetching = self._fetching.setdefault(key, threading.Lock())
        with fetching:
            cached = self.fresh(key, max_age=max_age)    # another thread may just have fetched it
            return cached if cached is not None else self._fetch(key, fetch, store=True)

    def fresh(self, key: CacheKey, *, max_age: float) -> ClusterMetadata | None:
        entry = self._entries.get(key)
        if entry is None or max_age <= 0 or self._clock() - entry.fetched_at > max_age:
            return None
        return entry.metadata

    def remember(self, key: CacheKey, metadata: ClusterMetadata, *, fetched_at: float | None = None) -> None:
        """Keep an all-topics answer fetched some other way (e.g. sent along with other requests)."""
        self._entries[key] = _Cached(metadata, self._clock() if fetched_at is None else fetched_at)

    def invalidate(self, key: CacheKey) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def now(self) -> float:
        return self._clock()

    def _fetch(self, key: CacheKey, fetch: Callable[[], ClusterMetadata], *, store: bool) -> ClusterMetadata:
        started = self._clock()
        self.fetches += 1
        metadata = fetch()
        if store:
            self._entries[key] = _Cached(metadata, started)
        return metadata


@dataclass(frozen=True)
class LogDirTotal:
    log_dir: str
    size: int                     # bytes of the replicas in the dir
    replicas: int


@dataclass(frozen=True)
class LogDirSnapshot:
    """Log dir totals of the brokers that answered, as of `collected_at`."""

    collected_at: datetime
    dirs: dict[int, tuple[LogDirTotal, ...]] = field(default_factory=dict)   # {broker id: dirs}
    errors: dict[int, str] = field(default_factory=dict)                     # {broker id: why not}
    monotonic_at: float = 0.0

    def size_of(self, broker_id: int) -> int | None:
        dirs = self.dirs.get(broker_id)
        return None if dirs is None else sum(d.size for d in dirs)

    def age_seconds(self, now: float) -> float:
        return max(0.0, now - self.monotonic_at)


class BackgroundSnapshots:
    """Per-cluster snapshots collected on a background thread: `get` answers the last one when
    it is young enough, else starts a new collection (one per cluster at a time) and waits a
    little for it; `drop` forgets one this console just made wrong. Subclasses say how a
    snapshot is stamped and what a failure keeps."""

    thread_name = "snapshot"

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._snapshots: dict[CacheKey, Any] = {}
        self._running: dict[CacheKey, threading.Thread] = {}
        self._running_generation: dict[CacheKey, int] = {}
        self._generations: dict[CacheKey, int] = {}      # bumped by each drop
        self._lock = threading.Lock()
        self.collections = 0               # background collections started (tests count them)

    def get(self, key: CacheKey, *, max_age: float, wait_first: float, collect: Callable[[], Any]) -> Any:
        """The last snapshot when it is at most `max_age` seconds old. Otherwise a collection
        starts (unless one runs) and is waited for up to `wait_first` seconds: the fresh
        snapshot when it ends in time; else the old one (None if there is none yet), which the
        page shows as being renewed (`SnapshotAge.renewing`), never as current. A page seen
        after a quiet hour therefore shows the cluster now, not the warm-up's figures.
        max_age 0: collect now, in this thread."""
        if max_age <= 0:
            started = self._clock()
            return self._stamped(collect(), started=started, ended=self._clock())
        snapshot = self._snapshots.get(key)
        if snapshot is None or self._clock() - snapshot.monotonic_at > max_age:
            self._start(key, collect).join(wait_first)
            snapshot = self._snapshots.get(key)
        return snapshot

    def get_for(self, gateway, collect: Callable[[Any], Any], *, max_age: float, wait_first: float) -> Any:
        """`get` for the cluster of `gateway` (console.kafka_gateway.client.Gateway): the
        background collection runs `collect` over a gateway of its own (`gateway.reopen()`).
        max_age 0, or a gateway that cannot be reopened: `collect(gateway)` now, in this thread."""
        if max_age <= 0 or gateway.reopen is None or gateway.cache_key is None:
            started = self._clock()     # stamped as a background one is: its age is the page's
            return self._stamped(collect(gateway), started=started, ended=self._clock())

        def in_background() -> Any:
            with gateway.reopen() as own:
                return collect(own)
        return self.get(gateway.cache_key, max_age=max_age, wait_first=wait_first, collect=in_background)

    def wait(self, key: CacheKey, timeout: float) -> None:
        """Until the running collection (if any) ends: for tests and shutdown."""
        thread = self._running.get(key)
        if thread is not None:
            thread.join(timeout)

    def now(self) -> float:
        return self._clock()

    def clear(self) -> None:
        self._snapshots.clear()

    def drop(self, key: CacheKey) -> None:
        """Forget the cluster's snapshot: this console just changed what it holds. The next
        page collects again (a collection already running is not kept: it may predate the change)."""
        with self._lock:
            self._snapshots.pop(key, None)
            self._generations[key] = self._generations.get(key, 0) + 1

    def _start(self, key: CacheKey, collect: Callable[[], Any]) -> threading.Thread:
        with self._lock:
            generation = self._generations.get(key, 0)
            running = self._running.get(key)
            if running is not None and running.is_alive() and self._running_generation.get(key) == generation:
                return running
            thread = threading.Thread(target=self._collect, args=(key, collect, generation), daemon=True,
                                      name=f"{self.thread_name}-{key[0][:40]}")
            self._running[key], self._running_generation[key] = thread, generation
            self.collections += 1
            thread.start()
            return thread

    def _collect(self, key: CacheKey, collect: Callable[[], Any], generation: int = 0) -> None:
        started = self._clock()
        try:
            snapshot = collect()
        except Exception as exc:  # noqa: BLE001 - a failed collection is shown, never raised in a thread
            # Shown on a page: in words, never a client library's or Python's own text.
            snapshot = self._failed(self._snapshots.get(key), gateway_error(exc))
        with self._lock:
            if self._generations.get(key, 0) == generation:     # else dropped meanwhile: may predate the change
                self._snapshots[key] = self._stamped(snapshot, started=started, ended=self._clock())

    def _failed(self, last: Any, exc: Exception) -> Any:
        raise NotImplementedError

    def _stamped(self, snapshot: Any, *, started: float, ended: float) -> Any:
        raise NotImplementedError


class LogDirSizes(BackgroundSnapshots):
    thread_name = "log-dir-sizes"

    def _failed(self, last: LogDirSnapshot | None, exc: Exception) -> LogDirSnapshot:
        # Keep the last totals with their own time (so they still read as old) and say why
        # they were not renewed.
        if last is not None:
            return replace(last, errors={-1: str(exc)})
        return LogDirSnapshot(collected_at=datetime.now(timezone.utc), errors={-1: str(exc)})

    def _stamped(self, snapshot: LogDirSnapshot, *, started: float, ended: float) -> LogDirSnapshot:
        # As old as the start of the collection that read them; a failure keeps the old time.
        return snapshot if snapshot.monotonic_at else replace(snapshot, monotonic_at=started)


@dataclass(frozen=True)
class GroupLagSnapshot:
    """Every group's committed offsets with the log end offsets of their partitions, as of
    `collected_at` (when the collection started: the lags are at least this old). `lag` is
    a `console.kafka_gateway.groups.LagSnapshot`; None when the collection failed (`error`)."""

    collected_at: datetime
    lag: Any = None
    error: str | None = None
    monotonic_at: float = 0.0

    def age_seconds(self, now: float) -> float:
        return max(0.0, now - self.monotonic_at)


class KeptSnapshots(BackgroundSnapshots):
    """Snapshots of `snapshot_type` (fields collected_at, error, monotonic_at and the data):
    a failed collection keeps the last data, with its own time, and says why it was not renewed."""

    snapshot_type: type = GroupLagSnapshot

    def _failed(self, last: Any, exc: Exception) -> Any:
        if last is not None:
            return replace(last, error=str(exc))
        return self.snapshot_type(collected_at=datetime.now(timezone.utc), error=str(exc))

    def _stamped(self, snapshot: Any, *, started: float, ended: float) -> Any:
        if snapshot.monotonic_at:          # a failure keeping the last data keeps its time
            return snapshot
        return replace(snapshot, monotonic_at=started)


class GroupLags(KeptSnapshots):
    thread_name = "group-lags"
    snapshot_type = GroupLagSnapshot


@dataclass(frozen=True)
class ProducersSnapshot:
    """The partitions' producers (DescribeProducers of every partition) as of `collected_at`
    (when the collection started). `found` keeps only the partitions with an open transaction
    or an error: {(topic, partition): console.kafka_gateway.transactions.PartitionProducers};
    None when the collection failed (`error`)."""

    collected_at: datetime
    found: Any = None
    partitions: int = 0               # how many partitions were asked
    error: str | None = None
    monotonic_at: float = 0.0

    def age_seconds(self, now: float) -> float:
        return max(0.0, now - self.monotonic_at)


class TransactionProducers(KeptSnapshots):
    thread_name = "transaction-producers"
    snapshot_type = ProducersSnapshot


@dataclass(frozen=True)
class SnapshotAge:
    """How old the background data a page shows is, for the page and its JSON. `renewing`:
    older than `max_age_seconds` and being collected again; the page says so and marks the
    old figures as old (static/js/regions.js fetches the page again until they are renewed)."""

    collected_at: datetime | None            # None: not collected yet (the first collection is running)
    age_seconds: float | None
    max_age_seconds: float                   # renewed in the background past this
    renewing: bool = False

    @classmethod
    def of(cls, snapshot: Any, *, snapshots: BackgroundSnapshots, max_age: float) -> SnapshotAge:
        """`snapshot`: one of `snapshots`' that holds data, or None."""
        if snapshot is None:
            return cls(None, None, max_age, renewing=max_age > 0)
        age = snapshot.age_seconds(snapshots.now())
        return cls(snapshot.collected_at, round(age, 1), max_age, renewing=0 < max_age < age)


METADATA = MetadataCache()
LOG_DIRS = LogDirSizes()
GROUP_LAGS = GroupLags()
TRANSACTION_PRODUCERS = TransactionProducers()
