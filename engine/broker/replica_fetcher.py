"""Followers replicate by fetching from their leader with Kafka's Fetch, as a replica.

One ReplicaFetcher per (follower broker, leader broker) runs a loop over a Kafka-protocol
connection to the leader's listener, on the inter-broker network (engine/protocol/inter_broker.py),
which is how the leader knows the fetch comes from this replica:
1. partitions that just became followers (new leader or epoch) first ask the leader, with
   OffsetForLeaderEpoch, where their last epoch ends there, and truncate a diverged tail
   (KIP-101/279);
2. then Fetch with `replica_id` from their log end offset; the leader reads up to its own log
   end (not the high watermark), and learns each follower's LEO from the fetch offset;
3. fetched batches are appended with their offsets (`append_as_follower`) and the follower's
   high watermark follows the leader's.
The fetches are incremental (KIP-227, fetch_session_handler.py): after a full fetch opens a
session on the leader, each names only the partitions whose fetch offset or epoch moved, and
is answered only the partitions with something new.
A stopped leader breaks the connection; the fetcher backs off and retries until the
controller's metadata points the partition at a new leader.

`follower.replication.throttled.rate` throttles the partitions listed in a topic's
`follower.replication.throttled.replicas` (see throttle.py).
"""
from __future__ import annotations

import asyncio
import logging

import kafka.errors as Errors
from kafka.protocol.consumer import (FetchRequest, FetchResponse, OffsetForLeaderEpochRequest,
                                     OffsetForLeaderEpochResponse)

from engine.broker.connection import BrokerConnection
from engine.broker.fetch_session_handler import FetchSessionHandler, Position
from engine.broker.partition import Partition
from engine.storage.errors import StorageError, is_io_failure
from engine.storage.records import whole_batches_size
from engine.clock import now_ms

log = logging.getLogger(__name__)
FETCH_VERSION = 12
EPOCH_VERSION = 4
BACKOFF_S = 0.2


class ReplicaFetcher:
    def __init__(self, broker, leader_id: int) -> None:
        self.broker = broker
        self.leader_id = leader_id
        self.partitions: dict[tuple[str, int], Partition] = {}
        self._to_truncate: set[tuple[str, int]] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._connection: BrokerConnection | None = None
        self._session = FetchSessionHandler()

    # --- membership (called by the broker on metadata changes) ------------------------------

    def add(self, partition: Partition, *, truncate: bool) -> None:
        key = (partition.topic, partition.index)
        self.partitions[key] = partition
        if truncate:
            self._to_truncate.add(key)
        self._session.reset()         # a partition that follows anew is answered in full once
        self._wake.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"fetcher-{self.broker.node_id}-{self.leader_id}")

    def remove(self, key: tuple[str, int]) -> None:
        self.partitions.pop(key, None)
        self._to_truncate.discard(key)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self._disconnect()

    # --- the loop --------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            if not self.partitions:
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                connection = self._connect()
                if self._to_truncate:
                    await self._truncate(connection)
                fetched = await self._fetch(connection)
                if not fetched:
                    await asyncio.sleep(BACKOFF_S)
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError, KeyError) as exc:
                log.debug("Broker %d fetching from %d: %r", self.broker.node_id, self.leader_id, exc)
                self._disconnect()
                await asyncio.sleep(BACKOFF_S)
            except Exception:  # noqa: BLE001 - a dead fetcher would stop replication silently
                log.exception("Broker %d: fetching from %d failed", self.broker.node_id, self.leader_id)
                self._disconnect()
                await asyncio.sleep(BACKOFF_S)

    def _disconnect(self) -> None:
        self._session.reset()
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _connect(self) -> BrokerConnection:
        if self._connection is None:
            self._connection = BrokerConnection(
                lambda: self.broker.inter_broker.connect(self.broker.node_id, self.leader_id),
                f"replica-{self.broker.node_id}")
        return self._connection

    async def _truncate(self, connection: BrokerConnection) -> None:
        """Cut each newly-following partition back to where it agrees with the leader."""
        keys = [k for k in self._to_truncate if k in self.partitions]
        asked = {k: (self.partitions[k], self.partitions[k].log.leader_epoch_cache.latest_epoch) for k in keys}
        self._to_truncate.difference_update(keys)
        wanted = {k: v for k, v in asked.items() if v[1] >= 0}
        if not wanted:
            return
        T = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
        by_topic: dict[str, list] = {}
        for (topic, index), (partition, epoch) in wanted.items():
            by_topic.setdefault(topic, []).append(T.OffsetForLeaderPartition(
                partition=index, current_leader_epoch=partition.leader_epoch, leader_epoch=epoch))
        request = OffsetForLeaderEpochRequest(replica_id=self.broker.node_id,
                                              topics=[T(topic=t, partitions=ps) for t, ps in by_topic.items()])
        response = await connection.request(request, EPOCH_VERSION, OffsetForLeaderEpochResponse)
        for topic in response.topics:
            for answer in topic.partitions:
                key = (topic.topic, answer.partition)
                partition, epoch = wanted.get(key, (None, -1))
                if partition is None or self.partitions.get(key) is not partition:
                    continue
                if answer.error_code:
                    self._to_truncate.add(key)   # e.g. the leader has not caught up with metadata yet
                    continue
                self._truncate_partition(partition, epoch, answer.leader_epoch, answer.end_offset)

    def _truncate_partition(self, partition: Partition, my_epoch: int, leader_epoch: int, leader_end: int) -> None:
        log_ = partition.log
        if leader_epoch < 0:
            target = partition.high_watermark        # the leader knows no such epoch: keep what was committed
        elif leader_epoch < my_epoch:
            # The leader never had our last epoch: keep what we wrote in the epoch it names.
            mine = log_.leader_epoch_cache.end_offset_for(leader_epoch, log_.log_end_offset)[1]
            target = min(leader_end, mine)
        else:
            target = min(leader_end, log_.log_end_offset)
        if target < log_.log_end_offset:
            log.info("Broker %d truncating %s-%d from %d to %d (leader epoch %d ends at %d)",
                     self.broker.node_id, partition.topic, partition.index, log_.log_end_offset, target,
                     leader_epoch, leader_end)
            log_.truncate_to(max(target, 0))
            partition.high_watermark = min(partition.high_watermark, log_.log_end_offset)
            self._session.reset()

    async def _fetch(self, connection: BrokerConnection) -> bool:
        config = self.broker.config
        throttle = self.broker.follower_throttle
        sent: dict[tuple[str, int], tuple[Partition, int, int]] = {}
        wanted: dict[tuple[str, int], Position] = {}
        max_bytes = config.get("replica.fetch.max.bytes")
        throttled = throttle.exceeded()
        for key, partition in self.partitions.items():
            if key in self._to_truncate or (throttled and self.broker.is_throttled_follower(partition)):
                continue
            log_ = partition.log
            offset = log_.log_end_offset
            sent[key] = (partition, partition.leader_epoch, offset)
            wanted[key] = Position(offset, partition.leader_epoch, max_bytes, log_.leader_epoch_cache.latest_epoch,
                                   log_.log_start_offset)
        if not wanted:
            return False
        session_id, session_epoch, send, forget = self._session.next_request(wanted)
        T = FetchRequest.FetchTopic
        topics: dict[str, list] = {}
        for key in send:
            at = wanted[key]
            topics.setdefault(key[0], []).append(T.FetchPartition(
                partition=key[1], current_leader_epoch=at.leader_epoch, fetch_offset=at.fetch_offset,
                last_fetched_epoch=at.last_fetched_epoch, log_start_offset=at.log_start_offset,
                partition_max_bytes=at.max_bytes))
        forgotten: dict[str, list[int]] = {}
        for topic, index in forget:
            forgotten.setdefault(topic, []).append(index)
        request = FetchRequest(replica_id=self.broker.node_id, max_wait_ms=config.get("replica.fetch.wait.max.ms"),
                               min_bytes=1, max_bytes=config.get("replica.fetch.response.max.bytes"),
                               isolation_level=0, session_id=session_id, session_epoch=session_epoch,
                               topics=[T(topic=t, partitions=ps) for t, ps in topics.items()],
                               forgotten_topics_data=[FetchRequest.ForgottenTopic(topic=t, partitions=ps)
                                                      for t, ps in forgotten.items()], rack_id="")
        response = await connection.request(request, FETCH_VERSION, FetchResponse)
        self._session.answered(response.error_code, response.session_id)
        if response.error_code:
            log.debug("Broker %d fetching from %d: session error %d, fetching in full", self.broker.node_id,
                      self.leader_id, response.error_code)
            return True
        ok = True
        for topic in response.responses:
            for data in topic.partitions:
                key = (topic.topic, data.partition_index)
                if key in sent:
                    ok &= self._process(key, sent[key], data)
        return ok

    def _process(self, key, sent: tuple[Partition, int, int], data) -> bool:
        partition, epoch, offset = sent
        if self.partitions.get(key) is not partition or partition.leader_epoch != epoch or \
                partition.log.log_end_offset != offset:
            self._session.reset()
            return True   # the partition changed while the fetch was in flight: drop the answer
        if data.error_code == Errors.OffsetOutOfRangeError.errno:
            self._session.reset()
            self._out_of_range(partition, data)
            return True
        if data.error_code:
            return False
        records = data.records or b""
        size = whole_batches_size(records)
        try:
            if size:
                partition.log.append_as_follower(bytearray(records[:size]), now_ms=now_ms())
                if self.broker.is_throttled_follower(partition):
                    self.broker.follower_throttle.record(size)
        except (StorageError, OSError) as exc:
            log.error("Broker %d could not append to %s-%d as follower: %s", self.broker.node_id, *key, exc)
            if is_io_failure(exc):
                self.broker.log_dir_failed(exc)
            self._to_truncate.add(key)
            self._session.reset()
            return False
        partition.high_watermark = min(data.high_watermark, partition.log.log_end_offset)
        if data.log_start_offset > partition.log.log_start_offset:
            partition.log.delete_records_before(min(data.log_start_offset, partition.log.log_end_offset))
        return True

    def _out_of_range(self, partition: Partition, data) -> None:
        log_ = partition.log
        if log_.log_end_offset < data.log_start_offset:
            # Everything we have is below the leader's log start: start over at its start.
            log_.truncate_fully_and_start_at(data.log_start_offset)
            partition.high_watermark = data.log_start_offset
        else:
            self._to_truncate.add((partition.topic, partition.index))
