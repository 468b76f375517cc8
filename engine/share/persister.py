"""The share coordinator's client on one broker (Kafka's DefaultStatePersister): what share
partitions and the group coordinator call to read and write share state.

Each call goes to the key's share coordinator, the leader of its `__share_group_state`
partition (created here on first use): in process when that is this broker, else as the
internal API (InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
DeleteShareGroupState: keys 83-86, v0) over a connection of this broker's own. A coordinator
that moved, is loading or cannot be reached is retried with a backoff until the call's
deadline; any other error is raised as ApiError.
"""
from __future__ import annotations

import asyncio
import logging
import time
import uuid

import kafka.errors as Errors

from engine.coordinator.transactions.channel import PeerChannel
from engine.errors import ApiError
from engine.protocol import specs as S
from engine.share.coordinator import ShareCoordinator
from engine.share.state import ShareState, StateBatch

log = logging.getLogger(__name__)
RETRIABLE = {Errors.NotCoordinatorError.errno, Errors.CoordinatorLoadInProgressError.errno,
             Errors.CoordinatorNotAvailableError.errno}
DEADLINE_S = 15.0
BACKOFF_S = (0.02, 0.5)
VERSION = 0


class Persister:
    def __init__(self, broker, coordinator: ShareCoordinator) -> None:
        self._broker = broker
        self._coordinator = coordinator
        self._channel = PeerChannel(broker)

    def close(self) -> None:
        self._channel.close()

    # --- the calls ----------------------------------------------------------------------------
    async def read(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int) -> ShareState:
        key = (group_id, topic_id, partition)

        def local():
            return self._coordinator.read(key, leader_epoch)

        async def remote(node):
            R = S.ReadShareGroupStateRequest
            response = await self._send(node, R(group_id=group_id, topics=[R.ReadStateData(
                topic_id=topic_id, partitions=[R.ReadStateData.PartitionData(partition=partition,
                                                                              leader_epoch=leader_epoch)])]),
                                        S.ReadShareGroupStateResponse)
            result = _only(response)
            _raise_for(result)
            return ShareState(result.start_offset, result.state_epoch, leader_epoch,
                              [StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                               for b in result.state_batches])
        return await self._call(key, local, remote)

    async def write(self, group_id: str, topic_id: uuid.UUID, partition: int, *, state_epoch: int, leader_epoch: int,
                    start_offset: int, batches: list[StateBatch]) -> None:
        key = (group_id, topic_id, partition)

        async def local():
            await self._coordinator.write(key, state_epoch=state_epoch, leader_epoch=leader_epoch,
                                          start_offset=start_offset, batches=batches)

        async def remote(node):
            R = S.WriteShareGroupStateRequest
            P = R.WriteStateData.PartitionData
            request = R(group_id=group_id, topics=[R.WriteStateData(topic_id=topic_id, partitions=[P(
                partition=partition, state_epoch=state_epoch, leader_epoch=leader_epoch, start_offset=start_offset,
                state_batches=[P.StateBatch(first_offset=b.first_offset, last_offset=b.last_offset,
                                            delivery_state=b.delivery_state, delivery_count=b.delivery_count)
                               for b in batches])])])
            _raise_for(_only(await self._send(node, request, S.WriteShareGroupStateResponse)))
        await self._call(key, local, remote)

    async def initialize(self, group_id: str, topic_id: uuid.UUID, partition: int, *, state_epoch: int,
                         start_offset: int) -> None:
        key = (group_id, topic_id, partition)

        async def local():
            await self._coordinator.initialize(key, state_epoch=state_epoch, start_offset=start_offset)

        async def remote(node):
            R = S.InitializeShareGroupStateRequest
            request = R(group_id=group_id, topics=[R.InitializeStateData(topic_id=topic_id, partitions=[
                R.InitializeStateData.PartitionData(partition=partition, state_epoch=state_epoch,
                                                    start_offset=start_offset)])])
            _raise_for(_only(await self._send(node, request, S.InitializeShareGroupStateResponse)))
        await self._call(key, local, remote)

    async def delete(self, group_id: str, topic_id: uuid.UUID, partition: int) -> None:
        key = (group_id, topic_id, partition)

        async def local():
            await self._coordinator.delete(key)

        async def remote(node):
            R = S.DeleteShareGroupStateRequest
            request = R(group_id=group_id, topics=[R.DeleteStateData(topic_id=topic_id, partitions=[
                R.DeleteStateData.PartitionData(partition=partition)])])
            _raise_for(_only(await self._send(node, request, S.DeleteShareGroupStateResponse)))
        await self._call(key, local, remote)

    # --- routing ------------------------------------------------------------------------------
    async def _call(self, key, local, remote):
        deadline = time.monotonic() + DEADLINE_S
        backoff = BACKOFF_S[0]
        while True:
            try:
                node = self._coordinator_node(key)
                if node == self._broker.node_id:
                    result = local()
                    return await result if asyncio.iscoroutine(result) else result
                return await remote(node)
            except ApiError as exc:
                if exc.code not in RETRIABLE or time.monotonic() + backoff > deadline or not self._broker.running:
                    raise
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_S[1])

    def _coordinator_node(self, key) -> int:
        if not self._coordinator.ensure_topic():
            raise ApiError(Errors.CoordinatorNotAvailableError)
        state = self._broker.image.partition("__share_group_state", self._coordinator.partition_of(key))
        if state is None or state.leader < 0 or state.leader not in self._broker.controller.live_brokers():
            raise ApiError(Errors.CoordinatorNotAvailableError)
        return state.leader

    async def _send(self, node: int, request, response_class):
        return await self._channel.request(node, request, VERSION, response_class, timeout_s=10.0,
                                           unreachable=Errors.CoordinatorNotAvailableError)


def _only(response):
    """The one partition result of a one-key response."""
    return response.results[0].partitions[0]


def _raise_for(result) -> None:
    if result.error_code:
        raise ApiError(Errors.for_code(result.error_code), result.error_message)
