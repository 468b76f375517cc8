"""Writing COMMIT / ABORT transaction markers to the partitions this broker leads
(the partition side of Kafka's WriteTxnMarkers, ReplicaManager.appendRecords with
origin COORDINATOR and acks=all).

Each marker is one control batch (engine/storage/control_records.py) appended through
the same replicated path as a Produce: the leader appends it, followers fetch it, and
the call waits until the high watermark passes it, as for acks=all. Only then are the
`broker.txn_marker_listeners` called (the group coordinator makes a transaction's
pending offsets visible, or drops them), so a listener never acts on a marker a new
leader might not have.

Runs on the broker's event loop.
"""
from __future__ import annotations

import asyncio
import logging

import kafka.errors as Errors

from engine.clock import now_ms
from engine.broker.min_insync import check_min_insync
from engine.errors import ApiError
from engine.storage.control_records import build_marker_batch
from engine.storage.errors import StorageError

log = logging.getLogger(__name__)


async def write_txn_markers(broker, *, producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool,
                            partitions: list[tuple[str, int]], timeout_ms: int) -> dict[tuple[str, int], int]:
    """Append a COMMIT (or ABORT) marker of `producer_id` to each partition and wait until
    each is replicated; a Kafka error code per partition (0 on success).

    A marker whose producer epoch is older than the partition has seen is
    INVALID_PRODUCER_EPOCH, whose coordinator epoch is older TRANSACTION_COORDINATOR_FENCED;
    a partition this broker does not lead NOT_LEADER_OR_FOLLOWER (or
    UNKNOWN_TOPIC_OR_PARTITION); an ISR below min.insync.replicas NOT_ENOUGH_REPLICAS; no
    replication within `timeout_ms` REQUEST_TIMED_OUT."""
    results: dict[tuple[str, int], int] = {}
    waits = []
    for key in dict.fromkeys(partitions):
        try:
            partition = broker.leader_partition(*key)
            check_min_insync(broker, partition, Errors.NotEnoughReplicasError)
            batch = build_marker_batch(producer_id=producer_id, producer_epoch=producer_epoch,
                                       coordinator_epoch=coordinator_epoch, commit=commit, timestamp_ms=now_ms())
            info = partition.append(batch, now_ms(), control=True)
        except ApiError as exc:
            results[key] = exc.code
            continue
        except StorageError as exc:
            results[key] = exc.error_code
            continue
        except OSError:
            results[key] = Errors.KafkaStorageError.errno
            continue
        waits.append((key, partition, partition.wait_for_high_watermark(info.last_offset + 1)))
    if waits:
        _, pending = await asyncio.wait([future for _, _, future in waits], timeout=max(timeout_ms, 0) / 1000)
        for key, partition, future in waits:
            results[key] = _replicated(broker, partition, future, pending)
            if results[key] == 0:
                _notify(broker, key, producer_id, commit)
    return results


def _replicated(broker, partition, future, pending) -> int:
    if future in pending:
        future.cancel()
        return Errors.RequestTimedOutError.errno
    if future.result() is False:
        return Errors.NotLeaderForPartitionError.errno
    try:
        check_min_insync(broker, partition, Errors.NotEnoughReplicasAfterAppendError)
    except ApiError as exc:
        return exc.code
    return 0


def _notify(broker, key: tuple[str, int], producer_id: int, commit: bool) -> None:
    for listener in list(broker.txn_marker_listeners):
        try:
            listener(key[0], key[1], producer_id, commit)
        except Exception:  # noqa: BLE001 - one listener's bug must not fail the marker
            log.exception("Broker %d: txn marker listener %r failed for %s-%d", broker.node_id, listener, *key)
