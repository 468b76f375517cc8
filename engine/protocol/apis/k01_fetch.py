"""Fetch: v4-17.

- Reads each partition from the leader's log up to the high watermark, at most
  `partition_max_bytes` per partition and `max_bytes` in all; the first partition with data
  returns at least one whole batch even if it is larger (KIP-74). A trailing partial batch
  may be sent, as Kafka does; clients drop it.
- Zero-copy: the response and partition headers are encoded by kafka.protocol with a marker
  in each records field, and the network layer sends the segment bytes with sendfile in
  place of the marker.
- Long polling: if fewer than `min_bytes` are available, the request waits until an append
  wakes it or `max_wait_ms` passes. Waiting costs no CPU: it is a future per request,
  resolved by the partitions' appends (and high watermark moves, leader changes, closes).
  A wait that ends with nothing woken, after a read that found nothing and held nothing
  back, is answered from that read: an idle follower's fetch of hundreds of partitions
  reads each once per `replica.fetch.wait.max.ms`, not twice. (Kafka reads again; its
  follower's fetch state is recorded on the first read only, as here.)
- v13+ addresses topics by id (UNKNOWN_TOPIC_ID for ids we do not know).
- Leader epoch fencing (KIP-320): a current_leader_epoch older than the partition's gets
  FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
- A negative max_bytes or partition_max_bytes is INVALID_REQUEST, and the connection closes.
- Each partition is answered once however often the request names it, and one response
  holds at most FETCH_SLICES_PER_RESPONSE descriptors (engine/resources.py): the partitions
  after that answer without records this time, as if max_bytes were reached.
- Per-partition errors: NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
  OFFSET_OUT_OF_RANGE, KAFKA_STORAGE_ERROR (an I/O failure, e.g. no descriptor left).
- read_committed (isolation_level 1, KIP-98): data only up to the last stable offset (the
  first offset of a transaction still open), plus `aborted_transactions`: the aborted
  transactions overlapping the fetched range, from the segments' .txnindex files (as
  Kafka's collectAbortedTransactions), so that clients drop aborted records. The records
  stay zero-copy: control batches and aborted data are sent, and the client filters them.
  Every answer carries the partition's last stable offset.
- Replica fetches (replica_id >= 0, or ReplicaState's in v15+) read up to the log end instead
  of the high watermark; the fetch offset is the follower's log end offset, which moves the
  high watermark and may grow the ISR. Only the replica itself may send one: it comes over
  its broker's inter-broker connection (engine/protocol/inter_broker.py), which no client
  socket reaches. From anyone else - any version, any replica id - every partition is
  answered TOPIC_AUTHORIZATION_FAILED, as Kafka answers a follower fetch without
  ClusterAction, and nothing changes. A follower's fetch offset outside the leader's log
  (past its end) is OFFSET_OUT_OF_RANGE and moves nothing either (Kafka's rule).
  Partitions named in `leader.replication.throttled.replicas` get no data while
  `leader.replication.throttled.rate` is exceeded.
- Client quotas (KIP-13, KIP-219), as Kafka's KafkaApis: a consumer's response bytes count
  against its `consumer_byte_rate`; over it, the answer is empty (no partitions), carries
  `throttle_time_ms`, and its bytes are uncounted again; the connection reads nothing more for
  that long (engine/protocol/byte_rate_throttle.py). A consumer with a quota gets at most its
  quota x (quota.window.num - 1) windows in one response (still at least one whole batch,
  KIP-74), so a consumer within its quota is answered with data; as on Kafka, a single batch
  bigger than that is never delivered to it. Replica fetches are never counted.
- Authorization (with an authorizer, as KafkaApis): a consumer needs READ on each topic,
  a replica fetch (on its own inter-broker connection) CLUSTER_ACTION on the cluster; a
  partition refused is TOPIC_AUTHORIZATION_FAILED.
- Fetch sessions (KIP-227, engine/protocol/fetch_sessions.py): session_id and session_epoch open,
  continue or close a session of the broker's cache; an incremental fetch names only what
  changed and is answered only what is new (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
  FETCH_SESSION_TOPIC_ID_ERROR at the top level otherwise).
"""
from __future__ import annotations

import asyncio
import logging
import time
import uuid

import kafka.errors as Errors
from kafka.protocol.consumer import FetchRequest, FetchResponse

from engine.cluster import slices
from engine.errors import ApiError
from engine.protocol.big_requests import off_loop, release_in_slices
from engine.protocol.byte_rate_throttle import fetch_size_limit, throttle_fetch
from engine.protocol.dispatch import ZeroCopyResponse, encode_response
from engine.protocol.fetch_sessions import INVALID_SESSION_ID, FetchContext, FetchSessionCache
from engine.protocol.registry import api
from engine.protocol.stats import refused
from engine.protocol.validation import require
from engine.security import authorize
from kafka_rules.acls import CLUSTER_ACTION, READ
from engine.resources import DESCRIPTORS, FETCH_SLICES_PER_RESPONSE
from engine.storage.errors import StorageError

TopicResponse = FetchResponse.FetchableTopicResponse
PartitionData = TopicResponse.PartitionData
AbortedTransaction = PartitionData.AbortedTransaction
log = logging.getLogger(__name__)
# An answer for more partitions than this is encoded off the event loop (big_requests.py).
ENCODE_OFF_LOOP_PARTITIONS = 2000


class SentSlice:
    """A file region to sendfile, through a duplicate descriptor of its own (FileSlice.dup)
    so that retention closing the segment meanwhile cannot pull the file away. The
    descriptor counts against DESCRIPTORS.fetch_slices until the writer closes it."""

    __slots__ = ("_slice", "position", "size")

    def __init__(self, file_slice) -> None:
        self._slice = file_slice.dup()
        self.position = file_slice.position
        self.size = file_slice.size

    def fileno(self) -> int:
        return self._slice.fd

    def close(self) -> None:
        if self._slice.fd >= 0:
            self._slice.close()
            DESCRIPTORS.release_slice()


@api(FetchRequest, FetchResponse, versions=(4, 17))
async def handle_fetch(ctx, request: FetchRequest):
    require(request.max_bytes >= 0, f"max_bytes is negative ({request.max_bytes})")
    with slices.Pacer() as pacer:     # a million partitions take a while to look at
        for topic in request.topics:
            require(all(p.partition_max_bytes >= 0 for p in topic.partitions), "a partition_max_bytes is negative")
            await pacer.tick()
    replica_id = replica_id_of(ctx, request)
    if replica_id >= 0 and not may_fetch_as_replica(ctx, replica_id):
        refused(log, "replica_fetches_refused", "Refused a replica fetch as broker %d from %s (%s): only that "
                "broker's own inter-broker connection may fetch as its replica", replica_id, ctx.client_host,
                ctx.principal)
        return _refused_response(ctx, request, Errors.TopicAuthorizationFailedError.errno)
    broker = ctx.broker
    context = await _context(ctx, request)
    if context.error:
        return FetchResponse(throttle_time_ms=0, error_code=context.error, session_id=INVALID_SESSION_ID,
                             responses=[])
    deadline = time.monotonic() + max(request.max_wait_ms, 0) / 1000
    reads = None
    while True:
        if reads is None:
            reads = await _read_all(ctx, request, context)
        available = sum(r.size for r in reads if r.slice is not None)
        errors = any(r.error for r in reads)
        remaining = deadline - time.monotonic()
        if available >= request.min_bytes or errors or remaining <= 0 or not broker.running:
            try:
                return await _build_response(ctx, request, reads, context)
            except BaseException:     # cancelled (the broker stops) or failed: the descriptors go back
                _close_slices(reads)
                raise
        _close_slices(reads)
        woken = await _wait_for_appends(broker, reads, remaining)
        if woken or available or any(r.held_back for r in reads):
            reads = None


async def _context(ctx, request) -> FetchContext:
    """The fetch session the request names (KIP-227), through the broker's session cache."""
    cache = getattr(ctx.broker, "fetch_sessions", None)
    if cache is None:                       # a test double of a broker: every fetch is sessionless
        cache = FetchSessionCache(lambda: 0)
    return await cache.context(request, by_topic_id=ctx.api_version >= 13)


class PartitionRead:
    __slots__ = ("topic", "topic_id", "index", "error", "high_watermark", "log_start_offset", "slice", "size",
                 "partition", "last_stable_offset", "aborted", "held_back")

    def __init__(self, topic, topic_id, index) -> None:
        self.topic, self.topic_id, self.index = topic, topic_id, index
        self.error = 0
        self.high_watermark = self.log_start_offset = self.last_stable_offset = -1
        self.aborted: list | None = None   # read_committed only
        self.slice: SentSlice | None = None
        self.size = 0
        self.partition = None
        # Records were there to read but not taken (a throttle, a quota, max_bytes, no descriptor):
        # a read after the wait may take them.
        self.held_back = False


def may_fetch_as_replica(ctx, replica_id: int) -> bool:
    """Only broker `replica_id`'s own inter-broker connection proves that a fetch comes from
    that replica; and, as Kafka's KafkaApis.handleFetchRequest, its principal needs
    CLUSTER_ACTION on the cluster (the brokers' own principal is a super user)."""
    return ctx.inter_broker_peer == replica_id and authorize.authorize_cluster(ctx, CLUSTER_ACTION)


def _refused_response(ctx, request, error_code: int):
    """Every partition of the request answered `error_code`, nothing read."""
    by_id = ctx.api_version >= 13
    image = ctx.broker.image
    topics = []
    for topic in request.topics:
        name = topic.topic
        if by_id:
            state = image.topics_by_id.get(topic.topic_id)
            name = state.name if state else None
        topics.append(TopicResponse(topic=name, topic_id=topic.topic_id, partitions=[
            PartitionData(partition_index=p.partition, error_code=error_code, high_watermark=-1,
                          last_stable_offset=-1, log_start_offset=-1, aborted_transactions=None,
                          preferred_read_replica=-1, records=b"") for p in topic.partitions]))
    return FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=topics)


def replica_id_of(ctx, request) -> int:
    if ctx.api_version >= 15:
        return request.replica_state.replica_id if request.replica_state is not None else -1
    return request.replica_id


class _Round:
    """One round of reads of a Fetch: each partition named, once, within the byte budget."""

    def __init__(self, ctx, request, partitions: list) -> None:
        self.ctx, self.request = ctx, request
        self.replica_id = replica_id_of(ctx, request)
        max_bytes = min(request.max_bytes, ctx.broker.config.get("fetch.max.bytes"))
        quota_limit = fetch_size_limit(ctx, replica_id=self.replica_id)
        if quota_limit is not None:
            max_bytes = max(0, min(max_bytes, quota_limit - _headers_bound(partitions)))
        self.max_bytes = self.budget = max_bytes
        self.reads: list[PartitionRead] = []
        self.held = 0

    def read(self, name: str | None, topic_id, wanted) -> None:
        """One partition of the fetch context, which holds each partition once (a partition
        named twice is read and answered once, so a request cannot multiply its descriptors)."""
        read = PartitionRead(name, topic_id, wanted.partition)
        self.reads.append(read)
        if name is None:
            read.error = Errors.UnknownTopicIdError.errno
            return
        if self.replica_id < 0 and not authorize.authorize_topic(self.ctx, READ, name):   # a replica: checked before
            read.error = Errors.TopicAuthorizationFailedError.errno
            return
        self.budget -= _read_partition(
            self.ctx, read, wanted, self.budget, min_one_batch=self.budget == self.max_bytes,
            replica_id=self.replica_id, may_hold=self.held < FETCH_SLICES_PER_RESPONSE,
            read_committed=self.request.isolation_level == 1 and self.replica_id < 0)
        self.held += read.slice is not None


def _headers_bound(partitions: list) -> int:
    """At most the bytes of a Fetch answer besides its records, for any version: the part of a
    quota window's bytes that the records must leave free, so that a capped answer, headers
    included, is within the quota and not throttled empty."""
    topics = {p.topic_id if p.topic is None else p.topic for p in partitions}
    return 64 + sum(48 + len(t) if isinstance(t, str) else 64 for t in topics) + 64 * len(partitions)


async def _read_all(ctx, request, context: FetchContext) -> list[PartitionRead]:
    """Every partition of the fetch context (the request's, or its session's), in its order and
    in slices of the event loop (a request may name a million): one read each."""
    by_id = ctx.api_version >= 13
    round_ = _Round(ctx, request, context.partitions)
    names: dict = {}
    try:
        with slices.Pacer() as pacer:
            for wanted in context.partitions:
                name = wanted.topic
                if by_id:
                    if wanted.topic_id not in names:
                        state = ctx.broker.image.topics_by_id.get(wanted.topic_id)
                        names[wanted.topic_id] = state.name if state else None
                    name = names[wanted.topic_id]
                round_.read(name, wanted.topic_id, wanted)
                await pacer.tick()
    except BaseException:             # cancelled while sliced: the descriptors taken go back
        _close_slices(round_.reads)
        raise
    return round_.reads


def _read_partition(ctx, read: PartitionRead, wanted, budget: int, *, min_one_batch: bool, replica_id: int,
                    may_hold: bool, read_committed: bool) -> int:
    """Read one partition; `may_hold` False (this response holds its share of descriptors)
    answers its offsets without records, as if max_bytes were reached."""
    try:
        partition, file_slice = ctx.broker.read_for_fetch(
            read.topic, read.index, fetch_offset=wanted.fetch_offset,
            max_bytes=min(wanted.partition_max_bytes, max(budget, 0)),
            current_leader_epoch=wanted.current_leader_epoch, replica_id=replica_id, min_one_batch=min_one_batch,
            isolation_level=1 if read_committed else 0)
        read.partition = partition
        read.high_watermark = partition.high_watermark
        read.last_stable_offset = partition.last_stable_offset
        read.log_start_offset = partition.log_start_offset
        if file_slice is not None and file_slice.size > 0 and may_hold and DESCRIPTORS.take_slice():
            try:
                read.slice = SentSlice(file_slice)
            except OSError:
                DESCRIPTORS.release_slice()
                raise
            read.size = file_slice.size
        else:
            readable = (partition.log.log_end_offset if replica_id >= 0
                        else read.last_stable_offset if read_committed else read.high_watermark)
            read.held_back = readable > wanted.fetch_offset
        if read_committed:
            read.aborted = _aborted_in(partition, wanted.fetch_offset) if read.slice is not None else []
    except ApiError as exc:
        read.error = exc.code
    except StorageError as exc:
        read.error = exc.error_code
    except OSError:  # e.g. no descriptor left to dup (EMFILE): this partition fails, not the connection
        read.error = Errors.KafkaStorageError.errno
    return read.size


def _aborted_in(partition, fetch_offset: int) -> list[AbortedTransaction]:
    upper = partition.log.fetch_upper_bound(fetch_offset, partition.last_stable_offset)
    return [AbortedTransaction(producer_id=pid, first_offset=first)
            for pid, first in partition.aborted_transactions(fetch_offset, upper)]


async def _wait_for_appends(broker, reads: list[PartitionRead], timeout: float) -> bool:
    """Wait until one of the partitions read wakes its fetchers or `timeout` passes: True if
    one did (Partition.notify_fetchers: an append, a high watermark that moved, a change of
    leader or epoch, a partition closed)."""
    waiter = asyncio.get_running_loop().create_future()
    partitions = [r.partition for r in reads if r.partition is not None]
    for partition in partitions:
        partition.add_fetch_waiter(waiter)
    try:
        await asyncio.wait_for(waiter, timeout)
        return True
    except asyncio.TimeoutError:
        return False
    finally:
        for partition in partitions:
            partition.remove_fetch_waiter(waiter)


def _close_slices(reads: list[PartitionRead]) -> None:
    for read in reads:
        if read.slice is not None:
            read.slice.close()


async def _build_response(ctx, request, all_reads: list[PartitionRead], context: FetchContext):
    """Partitions are grouped by topic, in the order each topic first appears, so a request
    listing A0, B0, A1 is answered A[0, 1], B[0]. Markers are numbered in that response order:
    the writer finds them front to back in the frame. Built in slices of the event loop, and
    encoded off it when it answers thousands of partitions (engine/protocol/big_requests.py).
    An incremental fetch answers only its partitions with something new (fetch_sessions.py)."""
    consumer = replica_id_of(ctx, request) < 0
    reads = await context.to_answer(all_reads)
    with slices.Pacer() as pacer:
        nonce = uuid.uuid4().bytes
        grouped: dict[tuple, list[PartitionRead]] = {}
        for read in reads:
            grouped.setdefault((read.topic, read.topic_id), []).append(read)
            await pacer.tick()
        markers, file_slices, topics = [], [], []
        for (name, topic_id), topic_reads in grouped.items():
            partitions = []
            for read in topic_reads:
                records = b""
                if read.slice is not None:
                    records = nonce + len(markers).to_bytes(4, "big")
                    markers.append(records)
                    file_slices.append(read.slice)
                    if consumer:
                        ctx.broker.metrics.fetched(read.topic, read.size)
                partitions.append(PartitionData(
                    partition_index=read.index, error_code=read.error, high_watermark=read.high_watermark,
                    last_stable_offset=read.last_stable_offset, log_start_offset=read.log_start_offset,
                    aborted_transactions=read.aborted, preferred_read_replica=-1, records=records))
                await pacer.tick()
            topics.append(TopicResponse(topic=name, topic_id=topic_id, partitions=partitions))
    big = len(reads) > ENCODE_OFF_LOOP_PARTITIONS
    session_id = context.session_id
    frame = await _encode(ctx, topics, throttle_ms=0, session_id=session_id, big=big)
    response_bytes = len(frame) - 4 + sum(s.size - len(m) for s, m in zip(file_slices, markers))
    throttle_ms = throttle_fetch(ctx, response_bytes, replica_id=replica_id_of(ctx, request))
    if throttle_ms:      # Kafka's throttled answer: no partitions at all, the data stays unsent
        for read in reads:
            if read.slice is not None:
                ctx.broker.metrics.fetched(read.topic, -read.size)
        _close_slices(all_reads)
        frame = await _encode(ctx, [], throttle_ms=throttle_ms, session_id=session_id, big=False)
        markers, file_slices = [], []
        error_codes = [0]
    else:
        await context.answered(all_reads)
        error_codes = [0] + [read.error for read in reads]   # as Kafka counts them: the top level, each partition
    if big:
        await release_in_slices(topics, all_reads)
    return ZeroCopyResponse(frame, markers, file_slices, FetchRequest.flexible_version_q(ctx.api_version),
                            error_codes=error_codes)


async def _encode(ctx, topics, *, throttle_ms: int, session_id: int, big: bool) -> bytes:
    response = FetchResponse(throttle_time_ms=throttle_ms, error_code=0, session_id=session_id, responses=topics)
    if big:
        return await off_loop(encode_response, response, ctx.api_version, ctx.header.correlation_id)
    return encode_response(response, ctx.api_version, ctx.header.correlation_id)
