"""What one broker counts for its metrics, written by the hot paths (one call each).

Kafka keeps these in Yammer meters and histograms (BrokerTopicStats, RequestMetrics,
ReplicaManager's ISR meters, LogFlushStats); here they are plain ints and `Reservoir`s,
written on the event loop that owns the broker, and read by `collector.py` at scrape time on
the same loop. Counters are totals since the broker object was made (Prometheus's `rate()`
turns them into Kafka's per-second rates); a restart of the process starts them from 0,
which Prometheus handles as a counter reset.

Requests are kept by API key and version; names come from the API registry at scrape time.
Errors are counted per API and error code, NONE included, as Kafka's ErrorsPerSec: every
error code the response carries at the levels Kafka counts (each partition of a Produce, the
top level and each partition of a Fetch ...; error_counts.py), and INVALID_REQUEST for a
request refused before its handler answered.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from engine.metrics.reservoir import Reservoir


class TopicCounters:
    __slots__ = ("messages_in", "bytes_in", "bytes_out")

    def __init__(self) -> None:
        self.messages_in = 0
        self.bytes_in = 0
        self.bytes_out = 0        # to consumers only: followers' fetches are replication, as in Kafka


class SaslListenerStats:
    """One listener's SASL sessions (KIP-368; Kafka's socket-server-metrics of the listener,
    counted by engine/security/session.py and the listener)."""
    __slots__ = ("successful_reauthentication", "failed_reauthentication", "successful_authentication_no_reauth",
                 "reauthentication_latency_ms", "expired_connections_killed")

    def __init__(self) -> None:
        self.successful_reauthentication = 0
        self.failed_reauthentication = 0
        # Logins by clients that cannot re-authenticate (no SaslAuthenticate v1+): the ones a
        # session lifetime would disconnect.
        self.successful_authentication_no_reauth = 0
        self.reauthentication_latency_ms = Reservoir()     # re-authentication's SaslHandshake to its success
        self.expired_connections_killed = 0                # closed at a request after the session ran out


class BrokerStats:
    def __init__(self) -> None:
        self.topics: dict[str, TopicCounters] = {}
        self.requests: defaultdict[tuple[int, int], int] = defaultdict(int)      # (api key, version)
        self.errors: defaultdict[tuple[int, int], int] = defaultdict(int)        # (api key, error code)
        self.total_time_ms: dict[int, Reservoir] = {}                            # api key -> timings
        self.queue_time_ms: dict[int, Reservoir] = {}
        self.isr_shrinks = 0
        self.isr_expands = 0
        self.sasl: dict[str, SaslListenerStats] = {}                           # listener name -> its sessions

    # --- hot paths: one call each ------------------------------------------------------------
    def produced(self, topic: str, messages: int, size: int) -> None:
        counters = self.topics.get(topic) or self._topic(topic)
        counters.messages_in += messages
        counters.bytes_in += size

    def fetched(self, topic: str, size: int) -> None:
        counters = self.topics.get(topic) or self._topic(topic)
        counters.bytes_out += size

    def handled(self, api_key: int, api_version: int, queue_ms: float, error_codes: int | list[int]) -> None:
        """A request's handler answered (or it was refused): counted, with its errors (one code,
        or the codes its response carries) and the time from the whole request being read to
        its handler starting."""
        self.requests[api_key, api_version] += 1
        # A code left None (by a response that will fail to encode) is not one to count.
        if type(error_codes) is int:
            self.errors[api_key, error_codes] += 1
        elif len(error_codes) == 1:                         # most APIs: one top-level code
            if error_codes[0] is not None:
                self.errors[api_key, error_codes[0]] += 1
        elif error_codes:
            # Thousands of partitions share a code or two: tallied in C, then added per code.
            counts = Counter(error_codes)
            counts.pop(None, None)
            for code, count in counts.items():
                self.errors[api_key, code] += count
        (self.queue_time_ms.get(api_key) or self._reservoir(self.queue_time_ms, api_key)).record(queue_ms)

    def completed(self, api_key: int, total_ms: float) -> None:
        """A request's response was written (or none was due): its total time."""
        (self.total_time_ms.get(api_key) or self._reservoir(self.total_time_ms, api_key)).record(total_ms)

    def sasl_listener(self, listener: str) -> SaslListenerStats:
        """The SASL session counters of one listener, made at its first connection."""
        return self.sasl.get(listener) or self.sasl.setdefault(listener, SaslListenerStats())

    # --- first sight of a topic or an API ------------------------------------------------------
    def _topic(self, topic: str) -> TopicCounters:
        counters = self.topics[topic] = TopicCounters()
        return counters

    @staticmethod
    def _reservoir(by_key: dict[int, Reservoir], api_key: int) -> Reservoir:
        reservoir = by_key[api_key] = Reservoir()
        return reservoir

    def forget_topics(self, keep) -> None:
        """Drop the counters of deleted topics (Kafka removes a topic's meters with it)."""
        for topic in [t for t in self.topics if t not in keep]:
            del self.topics[topic]


# Log flushes happen in engine/storage (a Log knows its directory, not its broker): they are
# timed per broker log dir, the parent of the partition's directory.
LOG_FLUSH_MS: dict[str, Reservoir] = {}


def log_flushed(broker_log_dir: str, elapsed_ms: float) -> None:
    (LOG_FLUSH_MS.get(broker_log_dir) or LOG_FLUSH_MS.setdefault(broker_log_dir, Reservoir())).record(elapsed_ms)
