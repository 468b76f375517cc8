"""What compaction does with transactions (Kafka's CleanedTransactionMetadata).

The cleaner walks a log's batches in offset order and asks, per batch:

- data batch (`on_batch`): is it part of an aborted transaction? Then it is dropped
  (and its records never enter the offset map, so aborted data never supersedes
  committed data). Which transactions were aborted comes from the segments' .txnindex.
- control batch (`on_marker`): may the marker go? An ABORT marker is kept while this pass
  still met data of its transaction (and its .txnindex entry is copied to the cleaned
  segment); a COMMIT marker while this pass met data of its transaction (data that may
  survive compaction). Otherwise it is *discardable*: the cleaner then stamps it with a
  delete horizon (now + delete.retention.ms, KIP-534, as for tombstones) and a later
  pass past that horizon removes it, so a consumer that read the transaction's data
  within delete.retention.ms still sees its marker.

The cleaner only cleans below the last stable offset, so every transaction it meets has
its marker written. One instance per pass over a run of segments; not thread-safe (the
cleaner's thread owns it).
"""
from __future__ import annotations

import heapq

from .control_records import EndTxnMarker
from .records import BatchHeader
from .transaction_index import AbortedTxn, TransactionIndex


class CleanedTransactions:
    def __init__(self, cleaned_index: TransactionIndex | None = None) -> None:
        self._pending: list[tuple[int, int, AbortedTxn]] = []     # heap by first offset
        self._known: set[tuple[int, int]] = set()
        self._ongoing_aborted: dict[int, list] = {}             # producer id -> [txn, data seen]
        self._ongoing_committed: set[int] = set()
        self._cleaned_index = cleaned_index

    def add_aborted(self, txns: list[AbortedTxn]) -> None:
        """Aborted transactions overlapping the segments about to be read (duplicates ignored)."""
        for txn in txns:
            key = (txn.producer_id, txn.first_offset)
            if key not in self._known:
                self._known.add(key)
                heapq.heappush(self._pending, (txn.first_offset, txn.producer_id, txn))

    def _start_aborted_up_to(self, offset: int) -> None:
        while self._pending and self._pending[0][0] <= offset:
            _, pid, txn = heapq.heappop(self._pending)
            self._ongoing_aborted.setdefault(pid, [txn, False])

    def on_batch(self, header: BatchHeader) -> bool:
        """True if this data batch belongs to an aborted transaction (drop it)."""
        self._start_aborted_up_to(header.last_offset)
        if not header.is_transactional:
            return False
        aborted = self._ongoing_aborted.get(header.producer_id)
        if aborted is not None:
            aborted[1] = True
            return True
        self._ongoing_committed.add(header.producer_id)
        return False

    def on_marker(self, header: BatchHeader, marker: EndTxnMarker) -> bool:
        """True if the marker is discardable: no data of its transaction is left before it."""
        self._start_aborted_up_to(header.last_offset)
        pid = header.producer_id
        if marker.commit:
            seen = pid in self._ongoing_committed
            self._ongoing_committed.discard(pid)
            return not seen
        aborted = self._ongoing_aborted.pop(pid, None)
        if aborted is not None and aborted[1]:
            if self._cleaned_index is not None:
                self._cleaned_index.append(aborted[0])
            return False
        return True
