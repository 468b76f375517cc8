"""Incremental fetch sessions (KIP-227): what a Fetch's session_id and session_epoch ask for, and
the cache of one broker's sessions.

A request's (session_id, session_epoch):

- (0, -1): no session, a full fetch: every partition named is answered (kafkajs and librdkafka
  fetch so).
- (0, 0): a full fetch that opens a session: the answer carries the session's id, or 0 when the
  cache has no room (the client goes on without one).
- (id, 0): closes session `id` and opens a new one, as (0, 0).
- (id, -1): closes session `id`; a full fetch without a session.
- (id, n > 0): an incremental fetch. The request names only the partitions added or changed since
  the session's last fetch (a new fetch offset, max bytes or leader epoch) and, in
  forgotten_topics_data, those to drop; the session keeps the others with their last fetch
  offsets. The answer lists only the partitions with records or an error, or whose high
  watermark, last stable offset or log start offset changed since they were last answered.
  A partition that answered records moves to the end of the session's order, so that the
  response's max_bytes reaches the others first next time (Kafka's rotation).

Session errors answer at the top level with no partitions, as Kafka: FETCH_SESSION_ID_NOT_FOUND
(70) for an id the cache does not hold (never given, closed or evicted), INVALID_FETCH_SESSION_EPOCH
(71) for any epoch but the session's next, FETCH_SESSION_TOPIC_ID_ERROR (106) when a session
opened with topic names (v12 and older) goes on with topic ids or the reverse. An incremental
request's epoch is taken even when its answer is throttled (empty); nothing is then marked
answered.

The cache holds at most `max.incremental.fetch.session.cache.slots` sessions (Kafka's 1000) and
FETCH_SESSION_PARTITIONS cached partitions in all (an incremental fetch that would pass it
closes its session: FETCH_SESSION_ID_NOT_FOUND, and the client starts over). A new session takes
the place of the least recently used one once that has been idle for more than EVICTION_MS
(Kafka's two minutes); otherwise it is not opened. That is Kafka's rule for consumers' sessions.
The engine's followers open sessions too (engine/broker/fetch_session_handler.py) and take slots
by the same rule; Kafka also lets a follower's new session evict the smallest consumer session.
A follower that finds no room fetches in full, and asks for a session again with each fetch.

Owned by the broker's event loop; not thread-safe.
"""
from __future__ import annotations

import collections
import random
from dataclasses import dataclass, field
from typing import Callable

import kafka.errors as Errors

from engine.clock import now_ms
from engine.cluster import slices

INVALID_SESSION_ID, INITIAL_EPOCH, FINAL_EPOCH = 0, 0, -1
EVICTION_MS = 120_000
# All sessions of a broker together cache at most this many partitions (about 300 bytes each,
# so 60 MB): a client cannot make the broker hold more however many sessions it opens. A
# consumer of more partitions than this fetches without a session.
FETCH_SESSION_PARTITIONS = 200_000
FETCH_SESSION_TOPIC_ID_ERROR = 106       # Kafka 3.1's error, which kafka-python does not define
_INT_MAX = 2**31 - 1


@dataclass(slots=True)
class CachedPartition:
    """One partition of a session: what the client last asked for it, and what it was last told."""

    topic: str | None                     # the name the request used (v12 and older)
    topic_id: object                      # uuid.UUID (v13+), or the zero id
    partition: int
    fetch_offset: int = 0
    partition_max_bytes: int = 0
    current_leader_epoch: int = -1
    high_watermark: int = -2              # -2: never answered
    last_stable_offset: int = -2
    log_start_offset: int = -2

    def ask(self, wanted) -> None:
        """Take the request's fetch position for the partition (a FetchRequest partition)."""
        self.fetch_offset = wanted.fetch_offset
        self.partition_max_bytes = wanted.partition_max_bytes
        self.current_leader_epoch = wanted.current_leader_epoch

    def must_answer(self, read) -> bool:
        """Kafka's CachedPartition.maybeUpdateResponseData, for an incremental answer (a PartitionRead)."""
        return (read.slice is not None or read.error != 0 or read.high_watermark != self.high_watermark
                or read.last_stable_offset != self.last_stable_offset
                or read.log_start_offset != self.log_start_offset)

    def answered(self, read) -> None:
        self.high_watermark = read.high_watermark
        self.last_stable_offset = read.last_stable_offset
        self.log_start_offset = read.log_start_offset


@dataclass(eq=False)
class FetchSession:
    session_id: int
    by_topic_id: bool
    partitions: collections.OrderedDict = field(default_factory=collections.OrderedDict)
    next_epoch: int = 1
    last_used_ms: int = 0

    def take_epoch(self) -> None:
        self.next_epoch = 1 if self.next_epoch >= _INT_MAX else self.next_epoch + 1


@dataclass
class FetchContext:
    """What one Fetch reads and answers: `partitions` in order (CachedPartition, or a sessionless
    request's own partitions wrapped in one); `incremental` answers only what changed; `error`
    (a session error) answers nothing else."""

    session_id: int = INVALID_SESSION_ID
    partitions: list[CachedPartition] = field(default_factory=list)
    session: FetchSession | None = None
    incremental: bool = False
    error: int = 0

    async def to_answer(self, reads: list) -> list:
        """The reads (one per partition of the context, in its order) that the answer lists: all of
        them, or for an incremental fetch those with something new (see CachedPartition.must_answer)."""
        if not self.incremental:
            return reads
        chosen = []
        with slices.Pacer() as pacer:
            for read, cached in zip(reads, self.partitions):
                if cached.must_answer(read):
                    chosen.append(read)
                await pacer.tick()
        return chosen

    async def answered(self, reads: list) -> None:
        """The answer went out: its partitions are marked answered in the session, and those that
        carried records move to the end of its order."""
        session = self.session
        if session is None:
            return
        with slices.Pacer() as pacer:
            for read, cached in zip(reads, self.partitions):
                await pacer.tick()
                if self.incremental and not cached.must_answer(read):
                    continue
                cached.answered(read)
                if read.slice is not None and self.incremental:
                    session.partitions.move_to_end(_key(session.by_topic_id, cached.topic, cached.topic_id,
                                                        cached.partition))


def _key(by_topic_id: bool, topic, topic_id, partition: int) -> tuple:
    return (topic_id if by_topic_id else topic, partition)


async def _requested(request, by_topic_id: bool) -> list[CachedPartition]:
    """The request's partitions, each once (the last mention wins), in the request's order; in
    slices of the event loop, since a request may name a million."""
    found: dict[tuple, CachedPartition] = {}
    with slices.Pacer() as pacer:
        for topic in request.topics:
            name, topic_id = (None, topic.topic_id) if by_topic_id else (topic.topic, None)
            for wanted in topic.partitions:
                key = _key(by_topic_id, name, topic_id, wanted.partition)
                cached = found.pop(key, None) or CachedPartition(name, topic_id, wanted.partition)
                cached.ask(wanted)
                found[key] = cached
                await pacer.tick()
    return list(found.values())


class FetchSessionCache:
    """The sessions of one broker (see the module docstring)."""

    def __init__(self, slots: Callable[[], int]) -> None:
        self._slots = slots                   # () -> max.incremental.fetch.session.cache.slots
        self._sessions: collections.OrderedDict[int, FetchSession] = collections.OrderedDict()   # LRU first
        self.partitions_cached = 0
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._sessions)

    async def context(self, request, *, by_topic_id: bool) -> FetchContext:
        """The context of one Fetch; opens, updates or closes the session it names."""
        session_id, epoch = request.session_id, request.session_epoch
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                self._close(session_id)
            partitions = await _requested(request, by_topic_id)
            if epoch == FINAL_EPOCH:
                return FetchContext(partitions=partitions)
            session = self._open(partitions, by_topic_id)
            return FetchContext(session_id=session.session_id if session else INVALID_SESSION_ID,
                                partitions=partitions, session=session)
        session = self._sessions.get(session_id)
        if session is None:
            return FetchContext(error=Errors.FetchSessionIdNotFoundError.errno)
        if epoch != session.next_epoch:
            return FetchContext(error=Errors.InvalidFetchSessionEpochError.errno)
        if session.by_topic_id != by_topic_id:
            return FetchContext(error=FETCH_SESSION_TOPIC_ID_ERROR)
        session.take_epoch()
        if not await self._update(session, request):
            return FetchContext(error=Errors.FetchSessionIdNotFoundError.errno)
        return FetchContext(session_id=session.session_id, partitions=list(session.partitions.values()),
                            session=session, incremental=True)

    def _open(self, partitions: list[CachedPartition], by_topic_id: bool) -> FetchSession | None:
        now = now_ms()
        if self.partitions_cached + len(partitions) > FETCH_SESSION_PARTITIONS:
            return None
        if len(self._sessions) >= self._slots():
            oldest = next(iter(self._sessions.values()), None)
            if oldest is None or now - oldest.last_used_ms <= EVICTION_MS:
                return None
            self._close(oldest.session_id)
            self.evictions += 1
        session = FetchSession(self._new_id(), by_topic_id, last_used_ms=now)
        for cached in partitions:
            session.partitions[_key(by_topic_id, cached.topic, cached.topic_id, cached.partition)] = cached
        self._sessions[session.session_id] = session
        self.partitions_cached += len(session.partitions)
        return session

    async def _update(self, session: FetchSession, request) -> bool:
        """An incremental request's partitions added or changed, its forgotten ones dropped; False
        (the session closed) when its additions would pass the cache's partitions."""
        before = len(session.partitions)
        requested = await _requested(request, session.by_topic_id)
        if self.partitions_cached + len(requested) > FETCH_SESSION_PARTITIONS:
            self._close(session.session_id)
            return False
        for cached in requested:
            key = _key(session.by_topic_id, cached.topic, cached.topic_id, cached.partition)
            known = session.partitions.get(key)
            if known is None:
                session.partitions[key] = cached
            else:
                known.fetch_offset, known.partition_max_bytes = cached.fetch_offset, cached.partition_max_bytes
                known.current_leader_epoch = cached.current_leader_epoch
        for topic in request.forgotten_topics_data or []:
            name, topic_id = (None, topic.topic_id) if session.by_topic_id else (topic.topic, None)
            for index in topic.partitions:
                session.partitions.pop(_key(session.by_topic_id, name, topic_id, index), None)
        self.partitions_cached += len(session.partitions) - before
        session.last_used_ms = now_ms()
        self._sessions.move_to_end(session.session_id)
        return True

    def _close(self, session_id: int) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self.partitions_cached -= len(session.partitions)

    def _new_id(self) -> int:
        while True:
            session_id = random.randint(1, _INT_MAX)
            if session_id not in self._sessions:
                return session_id
