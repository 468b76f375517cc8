"""The console's data path: read one topic's partitions with raw Fetch requests.

A `TopicReader` is a consumer with manual assignment and no group: it never joins, never
commits, and keeps its positions in the caller's hands (a browse page, a search, a tail).
It sends Fetch (v4-12, topics by name) and ListOffsets itself, one request per leader, all
in flight together, through the same kafka-python connection manager as `client.Gateway`
(see that module's docstring for why the private `_manager` is used). Fetch answers are not
decoded into records here: each partition comes back as the raw record set bytes, so a
search can look for a substring in a batch's bytes before paying for its records
(`console.kafka_gateway.batches`).

Isolation (KIP-98): reads are read_uncommitted (0) unless a caller asks for READ_COMMITTED
(1); then ListOffsets' latest is the last stable offset, and Fetch stops there and names the
aborted transactions of what it returns (`FetchedPartition.aborted_transactions`), which the
reader must drop as Kafka's consumer does (`console.messages.scan.AbortedTransactions`).

Every public method raises only `GatewayError`.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import kafka.errors as Errors
from kafka.protocol.consumer import FetchRequest, ListOffsetsRequest
from kafka.protocol.metadata import MetadataRequest

from console.kafka_gateway.errors import (AUTHORIZATION_CODES, GatewayError, describe_error_code, error_for_code,
                                          translated)
from console.kafka_gateway.records import ConnectionSettings, PartitionOffsets
from console.kafka_gateway.wire import connect, send, send_to_each

EARLIEST, LATEST = -2, -1
READ_UNCOMMITTED, READ_COMMITTED = 0, 1
_FETCH_MAX_VERSION = 12          # v13+ names topics by id; the console names them by name
_NOT_LEADER = {Errors.NotLeaderForPartitionError.errno, Errors.LeaderNotAvailableError.errno,
               Errors.FencedLeaderEpochError.errno, Errors.UnknownLeaderEpochError.errno}
OFFSET_OUT_OF_RANGE = Errors.OffsetOutOfRangeError.errno


@dataclass(frozen=True)
class FetchedPartition:
    """One partition of a Fetch answer: the record set as the broker sent it (it may end in a
    partial batch, which readers drop), or the error that replaced it."""

    partition: int
    fetch_offset: int
    records: bytes
    high_watermark: int
    log_start_offset: int
    error_code: int = 0
    last_stable_offset: int = -1
    aborted_transactions: tuple[tuple[int, int], ...] = ()     # (producer id, first offset), read_committed only

    @property
    def error(self) -> str | None:
        return describe_error_code(self.error_code) if self.error_code else None


@contextmanager
def open_topic_reader(settings: ConnectionSettings, topic: str, *, request_timeout_ms: int = 10000,
                      bootstrap_timeout_ms: int = 5000) -> Iterator[TopicReader]:
    admin = connect(settings, request_timeout_ms, bootstrap_timeout_ms)
    try:
        yield TopicReader(admin, topic, request_timeout_ms=request_timeout_ms)
    finally:
        admin.close()


class TopicReader:
    """Manual-assignment reads of one topic (see the module docstring). Not thread-safe."""

    def __init__(self, admin, topic: str, *, request_timeout_ms: int) -> None:
        self._admin = admin
        self._manager = admin._manager
        self.topic = topic
        self._timeout_ms = request_timeout_ms
        self._leaders: dict[int, int] = {}
        self._epochs: dict[int, int] = {}
        self.refresh_leaders()

    @translated
    def refresh_leaders(self) -> None:
        request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=self.topic)],
                                  allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
                                  include_topic_authorized_operations=False)
        response = self._manager.run(send, self._manager, request)
        topic = next((t for t in response.topics if t.name == self.topic), None)
        if topic is None or topic.error_code == Errors.UnknownTopicOrPartitionError.errno:
            raise UnknownTopic(f"The cluster has no topic {self.topic!r}.")
        if topic.error_code:
            raise _refused(topic.error_code)
        self._leaders = {p.partition_index: p.leader_id for p in topic.partitions}
        self._epochs = {p.partition_index: p.leader_epoch for p in topic.partitions}

    @property
    def partitions(self) -> list[int]:
        return sorted(self._leaders)

    def _by_leader(self, partitions) -> dict[int, list[int]]:
        grouped: dict[int, list[int]] = defaultdict(list)
        for p in partitions:
            leader = self._leaders.get(p, -1)
            if leader < 0:
                raise GatewayError(f"Partition {self.topic}-{p} has no leader right now.")
            grouped[leader].append(p)
        return grouped

    # --- ListOffsets ------------------------------------------------------------------------

    def offsets(self, partitions=None, *, isolation_level: int = READ_UNCOMMITTED) -> dict[int, PartitionOffsets]:
        """Log start offset and high watermark of each partition (all by default); with
        READ_COMMITTED, `high_watermark` holds the last stable offset (the end a read_committed
        consumer sees)."""
        partitions = self.partitions if partitions is None else list(partitions)
        starts = self.list_offsets({p: EARLIEST for p in partitions})
        ends = self.list_offsets({p: LATEST for p in partitions}, isolation_level=isolation_level)
        return {p: PartitionOffsets(log_start_offset=starts[p][0], high_watermark=ends[p][0]) for p in partitions}

    def offsets_for_timestamp(self, timestamp_ms: int, partitions=None) -> dict[int, int | None]:
        """The first offset whose timestamp is at or after `timestamp_ms`; None when none is."""
        partitions = self.partitions if partitions is None else list(partitions)
        found = self.list_offsets({p: timestamp_ms for p in partitions})
        return {p: (offset if offset >= 0 else None) for p, (offset, _) in found.items()}

    @translated
    def list_offsets(self, specs: Mapping[int, int], *, isolation_level: int = READ_UNCOMMITTED,
                     ) -> dict[int, tuple[int, int]]:
        """{partition: timestamp or EARLIEST/LATEST} -> {partition: (offset, timestamp)}; one
        request per leader, retried once after a leader change."""
        for attempt in (1, 2):
            try:
                return self._list_offsets_once(specs, isolation_level)
            except _LeaderMoved:
                if attempt == 2:
                    raise GatewayError("Partition leaders kept moving; try again.") from None
                self.refresh_leaders()
        raise AssertionError("unreachable")

    def _list_offsets_once(self, specs: Mapping[int, int], isolation_level: int) -> dict[int, tuple[int, int]]:
        by_leader = self._by_leader(specs)
        topic_cls = ListOffsetsRequest.ListOffsetsTopic
        part_cls = topic_cls.ListOffsetsPartition

        def make(partitions):
            return ListOffsetsRequest(replica_id=-1, isolation_level=isolation_level, topics=[topic_cls(
                name=self.topic, partitions=[part_cls(partition_index=p, current_leader_epoch=self._epochs.get(p, -1),
                                                      timestamp=specs[p]) for p in partitions])],
                min_version=2 if isolation_level else 1)   # v2 brought isolation_level
        leaders = list(by_leader)
        requests = iter([make(by_leader[leader]) for leader in leaders])
        responses = self._manager.run(send_to_each, self._manager, lambda: next(requests), leaders)
        found = {}
        for response in responses:
            for t in response.topics:
                for p in t.partitions:
                    if p.error_code in _NOT_LEADER:
                        raise _LeaderMoved()
                    if p.error_code:
                        raise _refused(p.error_code, f"Partition {p.partition_index}: ")
                    found[p.partition_index] = (p.offset, p.timestamp)
        return found

    # --- Fetch --------------------------------------------------------------------------------

    @translated
    def fetch(self, positions: Mapping[int, int], *, partition_max_bytes: int = 1 << 20,
              max_bytes: int = 50 << 20, max_wait_ms: int = 0, min_bytes: int = 1,
              isolation_level: int = READ_UNCOMMITTED) -> dict[int, FetchedPartition]:
        """Fetch from each {partition: offset}, one request per leader, all in flight together.
        Partitions whose leader moved are asked again once, after a metadata refresh."""
        args = (partition_max_bytes, max_bytes, max_wait_ms, min_bytes, isolation_level)
        fetched = self._fetch_once(positions, *args)
        moved = {p: positions[p] for p, f in fetched.items() if f.error_code in _NOT_LEADER}
        if moved:
            self.refresh_leaders()
            fetched.update(self._fetch_once(moved, *args))
        return fetched

    def _fetch_once(self, positions, partition_max_bytes, max_bytes, max_wait_ms, min_bytes, isolation_level):
        if not positions:
            return {}
        by_leader = self._by_leader(positions)
        topic_cls = FetchRequest.FetchTopic
        part_cls = topic_cls.FetchPartition

        def make(partitions):
            return FetchRequest(
                replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=max_bytes,
                isolation_level=isolation_level, session_id=0, session_epoch=-1,
                topics=[topic_cls(topic=self.topic, partitions=[
                    part_cls(partition=p, current_leader_epoch=-1, fetch_offset=positions[p], log_start_offset=-1,
                             partition_max_bytes=partition_max_bytes) for p in partitions])],
                forgotten_topics_data=[], rack_id="", max_version=_FETCH_MAX_VERSION,
                **({"min_version": 4} if isolation_level else {}))   # v4 brought isolation_level
        leaders = list(by_leader)
        requests = iter([make(by_leader[leader]) for leader in leaders])
        responses = self._manager.run(send_to_each, self._manager, lambda: next(requests), leaders)
        fetched: dict[int, FetchedPartition] = {}
        for response in responses:
            if response.error_code:
                raise GatewayError(describe_error_code(response.error_code))
            for t in response.responses:
                for p in t.partitions:
                    if p.error_code in AUTHORIZATION_CODES:       # the whole read is refused, not one partition
                        raise error_for_code(p.error_code)
                    fetched[p.partition_index] = FetchedPartition(
                        partition=p.partition_index, fetch_offset=positions[p.partition_index],
                        records=p.records or b"", high_watermark=p.high_watermark,
                        log_start_offset=p.log_start_offset, error_code=p.error_code,
                        last_stable_offset=p.last_stable_offset if p.last_stable_offset is not None else -1,
                        aborted_transactions=tuple((a.producer_id, a.first_offset)
                                                   for a in p.aborted_transactions or ()))
        return fetched


def _refused(code: int, where: str = "") -> GatewayError:
    """An authorization failure is NotAuthorized (the page says so); anything else a GatewayError."""
    if code in AUTHORIZATION_CODES:
        return error_for_code(code)
    return GatewayError(f"{where}{describe_error_code(code)}")


class _LeaderMoved(Exception):
    pass


class UnknownTopic(GatewayError):
    """The cluster has no such topic."""
