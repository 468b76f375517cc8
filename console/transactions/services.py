"""Writes for transactions: abort a hanging transaction (`kafka-transactions.sh abort`).

The service reads the partition again and aborts only a transaction that is still open there,
starting at the offset the admin confirmed, and that the page's rule still calls hanging
(selectors.py): a transaction its coordinator will finish is never aborted behind its back.
It writes an audit log entry however it ends, and announces the change after commit.
"""
from __future__ import annotations

from console.accounts.services import audited
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import InvalidInput
from console.events import notify_on_commit
from console.transactions.selectors import HangingTransaction, hanging_transaction


def transaction_abort(*, cluster: Cluster, actor, topic: str, partition: int, start_offset: int) -> HangingTransaction:
    with audited(actor=actor, cluster=cluster, action="transaction.abort", target=f"{topic}-{partition}",
                 details={"start_offset": start_offset}) as details:
        with cluster_gateway(cluster) as gw:
            found = hanging_transaction(gw=gw, topic=topic, partition=partition, start_offset=start_offset)
            if found is None:
                raise InvalidInput(f"No hanging transaction starts at offset {start_offset} of {topic}-{partition} "
                                   f"(it may have finished, or its coordinator will finish it).")
            details.update(producer_id=found.producer_id, producer_epoch=found.producer_epoch,
                           transactional_id=found.transactional_id, reason=found.reason)
            # A partition that never saw a marker reports coordinator epoch -1; Kafka's tool sends
            # 0 then, which no partition can have fenced.
            gw.transactions.abort(topic=topic, partition=partition, leader=found.leader,
                                  producer_id=found.producer_id, producer_epoch=found.producer_epoch,
                                  coordinator_epoch=max(found.coordinator_epoch, 0))
    notify_on_commit("transaction.aborted", {"cluster": cluster.pk, "topic": topic, "partition": partition})
    return found
