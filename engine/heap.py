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


# --- while one request builds a million objects ------------------------------------------------
# A request naming a million topics makes millions of short-lived objects (kafka.protocol's
# structs), enough to trigger full collections one after the other, each walking all of them:
# 0.1-1.4 s pauses, on whichever thread allocated, with the GIL held - the loop stopped as
# surely as if the work ran on it. While such work is in flight only the young generations are
# collected (they catch most cyclic garbage and cost little); the request's objects are freed
# by reference counting when it is answered, and full collections resume once no such work is
# left. Event-loop only.

_NO_FULL_COLLECTIONS = 1 << 30          # gen1 collections before a full one: never, in practice
_pausing = 0
_saved_threshold: tuple[int, int, int] | None = None


class FullCollectionsPaused:
    """`with FullCollectionsPaused():` around a big request's work (nests, counts holders)."""

    def __enter__(self) -> "FullCollectionsPaused":
        global _pausing, _saved_threshold
        if _pausing == 0:
            _saved_threshold = gc.get_threshold()
            gc.set_threshold(_saved_threshold[0], _saved_threshold[1], _NO_FULL_COLLECTIONS)
        _pausing += 1
        return self

    def __exit__(self, *exc_info) -> None:
        global _pausing
        _pausing -= 1
        if _pausing == 0 and _saved_threshold is not None:
            gc.set_threshold(*_saved_threshold)
