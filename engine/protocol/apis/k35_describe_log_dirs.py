"""DescribeLogDirs: v1-4.

This broker's log dir (one per broker) with the size of every partition replica it holds
and its offset lag (as Kafka: high watermark minus log end offset, floored at 0).
topics null means every partition. v4 adds the file system's total and usable bytes.
A log dir taken offline by an I/O error (a full disk) answers KAFKA_STORAGE_ERROR and no
partitions, as Kafka's offline dirs do.
Authorization: DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED and no log dirs
(v3+ carry the error code; older versions just get none), as KafkaApis.
The named partitions and the broker's replicas are gone through in slices of the event loop
(engine/cluster/slices.py): a request may name millions of partitions.
"""
import shutil

import kafka.errors as Errors
from kafka.protocol.admin import DescribeLogDirsRequest, DescribeLogDirsResponse

from engine.cluster import slices
from engine.protocol.registry import api
from engine.security import authorize
from kafka_rules.acls import DESCRIBE

Result = DescribeLogDirsResponse.DescribeLogDirsResult
Topic = Result.DescribeLogDirsTopic
PartitionInfo = Topic.DescribeLogDirsPartition


@api(DescribeLogDirsRequest, DescribeLogDirsResponse, versions=(1, 4))
async def handle_describe_log_dirs(ctx, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    broker = ctx.broker
    if not authorize.authorize_cluster(ctx, DESCRIBE):
        return DescribeLogDirsResponse(throttle_time_ms=0, error_code=Errors.ClusterAuthorizationFailedError.errno,
                                       results=[])
    if broker.log_dir_error is not None:
        offline = Result(error_code=Errors.KafkaStorageError.errno, log_dir=str(broker.log_dir.resolve()), topics=[],
                         total_bytes=-1, usable_bytes=-1)
        return DescribeLogDirsResponse(throttle_time_ms=0, error_code=0, results=[offline])
    topics: dict[str, list] = {}
    with slices.Pacer() as pacer:
        wanted = None
        if request.topics is not None:
            wanted = set()
            await slices.for_each(((t.topic, p) for t in request.topics for p in t.partitions), wanted.add)
        for (name, index), partition in sorted(broker.partitions.items()):
            if wanted is None or (name, index) in wanted:
                topics.setdefault(name, []).append(PartitionInfo(
                    partition_index=index, partition_size=partition.log.size_in_bytes,
                    offset_lag=_offset_lag(broker, partition), is_future_key=False))
            await pacer.tick()
    usage = shutil.disk_usage(broker.log_dir)
    result = Result(error_code=0, log_dir=str(broker.log_dir.resolve()),
                    topics=[Topic(name=n, partitions=ps) for n, ps in topics.items()],
                    total_bytes=usage.total, usable_bytes=usage.free)
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=0, results=[result])


def _offset_lag(broker, partition) -> int:
    """As Kafka's getLogEndOffsetLag for a current (not future) log: high watermark minus log end."""
    return max(partition.high_watermark - partition.log_end_offset, 0)
