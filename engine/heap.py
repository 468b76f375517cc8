"""Keeping CPython's cyclic garbage collector off the long-lived cluster state.

The engine holds tens of objects per partition (metadata, partition, log, segment, index
and file objects): ~1.5 million at 40,000 partitions. CPython runs a full collection once
the objects that survived into the oldest generation since the last one reach a quarter of
it, and each full collection walks all of them: ~0.3 s per 20,000 partitions, paid by
whichever request is running, on the event loop every broker shares. Big answers (Metadata,
ListOffsets, OffsetFetch for thousands of partitions) survive long enough to be promoted,
so at fleet scale that happened every few console pages.

`gc.freeze()` moves every object tracked so far into a permanent generation the collector
never walks (CPython's advice for long-lived state built at start-up). The engine freezes
once it is up, and again after metadata commits that added many partitions (CreateTopics,
CreatePartitions) or many ACLs (CreateAcls: each binding is a few objects the authorizer keeps),
so the state they built is out of the way too. Frozen objects are still
freed by reference counting when dropped (a deleted topic's are); only cyclic garbage that
happened to exist at the moment of a freeze is kept, which is why it is not done after every
commit.
"""
from __future__ import annotations

import gc

FREEZE_AFTER_PARTITIONS = 1000      # partitions touched by metadata commits since the last freeze
FREEZE_AFTER_ACLS = 1000            # ACLs added since the last freeze


class HeapFreezer:
    def __init__(self, controller) -> None:
        self._controller = controller
        self._touched = 0
        self._acls_at_freeze = 0
        self.freezes = 0

    def freeze(self) -> None:
        gc.freeze()
        self._touched = 0
        self._acls_at_freeze = len(self._controller.image.acls)
        self.freezes += 1

    def on_metadata_change(self, changed: set[str], deleted: list, epoch: int) -> None:
        topics = self._controller.image.topics
        self._touched += sum(len(topics[name].partitions) for name in changed if name in topics)
        added_acls = len(self._controller.image.acls) - self._acls_at_freeze
        if self._touched >= FREEZE_AFTER_PARTITIONS or added_acls >= FREEZE_AFTER_ACLS:
            self.freeze()
