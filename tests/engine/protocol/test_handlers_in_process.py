"""API handlers called in-process with stand-in brokers, for states a real cluster reaches only
by races: whatever happens while a request waits must end in an error code, never in an
exception that closes the connection."""
import asyncio
import errno
import os
import uuid
from types import SimpleNamespace

import kafka.errors as Errors
from kafka.protocol.admin import DescribeClusterRequest
from kafka.protocol.consumer import FetchRequest

from engine.cluster.metadata import BrokerRegistration
from engine.metrics.stats import BrokerStats
from engine.protocol.apis import k01_fetch
from engine.protocol.apis.k00_produce import PartitionResponse, _wait_for_replication
from engine.protocol.apis.k02_list_offsets import LATEST_TIERED, _offset_for
from engine.protocol.apis.k60_describe_cluster import handle_describe_cluster
from engine.resources import DESCRIPTORS
from engine.storage import file_records
from engine.storage.file_records import FileSlice


class ReplicatedPartition:
    topic, index, isr = "gone", 0, [0]

    def wait_for_high_watermark(self, offset: int) -> asyncio.Future:
        waiter = asyncio.get_running_loop().create_future()
        waiter.set_result(True)
        return waiter


def test_a_topic_deleted_while_acks_all_waits_is_unknown_topic():
    answer = PartitionResponse(index=0, error_code=0, base_offset=5, log_append_time_ms=-1, log_start_offset=0,
                               record_errors=[], error_message=None)
    ctx = SimpleNamespace(broker=SimpleNamespace(image=SimpleNamespace(topics={})))   # the topic is gone

    asyncio.run(_wait_for_replication(ctx, [(answer, ReplicatedPartition(), 6)], 1000))

    assert answer.error_code == Errors.UnknownTopicOrPartitionError.errno
    assert answer.base_offset == -1


def test_describe_cluster_lists_only_live_brokers():
    """As KRaft's DescribeCluster v0-1: a stopped (fenced) broker is not in the answer."""
    brokers = {i: BrokerRegistration(i, "127.0.0.1", 9092 + i, None) for i in range(3)}
    image = SimpleNamespace(brokers=brokers, cluster_id=str(uuid.uuid4()), controller_id=0)
    broker = SimpleNamespace(image=image, controller=SimpleNamespace(live_brokers=lambda: {0, 2}))
    ctx = SimpleNamespace(broker=broker, controller=broker.controller, api_version=1, listener_name=None)

    response = asyncio.run(handle_describe_cluster(ctx, DescribeClusterRequest(include_cluster_authorized_operations=False,
                                                                                endpoint_type=1)))

    assert response.error_code == 0
    assert sorted(b.broker_id for b in response.brokers) == [0, 2]


def test_a_fetch_that_runs_out_of_descriptors_fails_one_partition_and_leaks_nothing(tmp_path, monkeypatch):
    """Each partition's bytes are sent from a dup of the segment's descriptor. If dup fails
    (EMFILE), that partition answers KAFKA_STORAGE_ERROR; the connection stays open and the
    descriptors already taken for the other partitions still reach the writer, which closes them."""
    segment = tmp_path / "segment.log"
    segment.write_bytes(b"x" * 100)
    fd = os.open(segment, os.O_RDONLY)

    class Partition:
        leader_epoch, high_watermark, last_stable_offset, log_start_offset = 0, 100, 100, 0
        log = SimpleNamespace(read=lambda offset, max_bytes, **kw: FileSlice(fd, 0, 100))

        def check_leader_epoch(self, current_leader_epoch):
            pass

    broker = SimpleNamespace(read_for_fetch=lambda topic, index, **kw: (Partition(), FileSlice(fd, 0, 100)),
                             image=SimpleNamespace(), config=SimpleNamespace(get=lambda name: 57671680),
                             metrics=BrokerStats())
    ctx = SimpleNamespace(broker=broker, api_version=12)
    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
                           session_id=0, session_epoch=-1, topics=[F(topic="t", partitions=[
                               F.FetchPartition(partition=i, current_leader_epoch=-1, fetch_offset=0,
                                                log_start_offset=-1, partition_max_bytes=1000) for i in range(2)])],
                           forgotten_topics_data=[], rack_id="")
    real_dup, dups = os.dup, []

    def dup_once(fd_):
        if dups:
            raise OSError(errno.EMFILE, "Too many open files")
        dups.append(real_dup(fd_))
        return dups[-1]

    monkeypatch.setattr(file_records.os, "dup", dup_once)
    held_before = DESCRIPTORS.slices_open
    try:
        async def read_all():
            return await k01_fetch._read_all(ctx, request, await k01_fetch._context(ctx, request))
        reads = asyncio.run(read_all())
    finally:
        os.close(fd)
    assert [r.error for r in reads] == [0, Errors.KafkaStorageError.errno]
    assert reads[0].slice.fileno() == dups[0]
    assert DESCRIPTORS.slices_open == held_before + 1      # the failed dup gave its place back
    reads[0].slice.close()
    assert DESCRIPTORS.slices_open == held_before


def test_list_offsets_latest_tiered_is_none_without_remote_storage():
    """KIP-1005's -5: Kafka answers -1/-1 when nothing is tiered, not INVALID_REQUEST."""
    assert _offset_for(SimpleNamespace(high_watermark=10, log_start_offset=0), LATEST_TIERED) == (-1, -1)
