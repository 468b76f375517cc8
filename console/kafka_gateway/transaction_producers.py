"""The open transactions of every partition (DescribeProducers of all partitions), for the
Transactions page's hanging check.

A transaction hangs when no coordinator will write its marker, and only the partitions know
which transactions they hold open: so the check asks every partition leader about all of its
partitions. At 20,000 partitions on 3 brokers that cost each page 1.2-2.2 s under load
(docs/benchmarks/index.md), while a hanging transaction is, by its nature, one that has been open
for minutes. So `open_transactions` serves them from `cache.TRANSACTION_PRODUCERS`: collected
on a background thread over a gateway of its own, with the time of collection for the page to
show (see console.kafka_gateway.cache). The page then reads its suspects again live, and the
abort reads its one partition live (console.transactions.selectors): the snapshot decides
what is looked at, never what is aborted.

The collection asks in rounds of a few thousand partitions, so that no single answer holds a
broker's request loop (or this process) for long and pages served meanwhile are not stuck
behind it; it keeps only the partitions with an open transaction or an error.
"""
from __future__ import annotations

from datetime import datetime, timezone

from console.kafka_gateway import cache
from console.kafka_gateway.cache import ProducersSnapshot
from console.kafka_gateway.client import Gateway

PARTITIONS_PER_ROUND = 4000       # DescribeProducers: one request per leader per round


def open_transactions(gateway: Gateway, *, max_age: float, wait_first: float) -> ProducersSnapshot | None:
    """Every partition's open transactions, at most `max_age` seconds old when a collection is
    not running late; None while the first collection of this process is still running after
    `wait_first` seconds. max_age 0: collected now over `gateway`."""
    return cache.TRANSACTION_PRODUCERS.get_for(gateway, collect, max_age=max_age, wait_first=wait_first)


def collect(gateway: Gateway) -> ProducersSnapshot:
    """The cached all-topics metadata, then DescribeProducers of every partition in rounds."""
    collected_at = datetime.now(timezone.utc)
    partitions = [p for t in gateway.metadata(cached=True).topics for p in t.partitions]
    found = {}
    for i in range(0, len(partitions), PARTITIONS_PER_ROUND):
        answer = gateway.transactions.describe_producers(partitions[i:i + PARTITIONS_PER_ROUND])
        found.update({key: p for key, p in answer.items()
                      if p.error or any(a.has_open_transaction for a in p.producers)})
    return ProducersSnapshot(collected_at=collected_at, found=found, partitions=len(partitions))
