"""A follower's side of an incremental fetch session (KIP-227), as Kafka's FetchSessionHandler.

A ReplicaFetcher wants every partition it follows from its leader in each Fetch. Named in full
each time, the partitions of an idle cluster kept the leaders reading, encoding and answering
every one of them twice a second (`replica.fetch.wait.max.ms`), and the followers decoding the
answers: 300 partitions of 3 replicas took 13% of a core doing nothing. In a session the leader
keeps the partitions and their fetch positions (engine/protocol/fetch_sessions.py); a fetch names
only the partitions whose position changed, and the answer holds only those with something new.

- `next_request(wanted)` -> (session_id, session_epoch, keys to send, keys to forget):
  - with no session, or after `reset()`, a full fetch: epoch 0 (INITIAL), every partition. It
    opens a session, and closes the one it names, if any;
  - in a session, the next epoch, the partitions added or changed since the last fetch answered
    (any field of their Position), and those dropped since, to forget.
- `answered(error_code, session_id)` after each response: the session moves on, or starts over
  on a session error (the next fetch is a full one). A full fetch answered with session id 0 (the
  leader's cache had no room) leaves the follower without a session: it asks for one again with
  each full fetch.
- `reset()`: the next fetch is a full one. The fetcher calls it when its connection breaks (the
  last request may or may not have reached the leader), when a partition starts following (the
  leader answers it in full once), and when it drops or cuts back what it fetched for a
  partition (an answer that came too late, a truncation), so that the leader answers every
  partition once more rather than only what changed on its side. A reset while a fetch is in
  flight holds: that fetch's answer does not move the session on.

Owned by one ReplicaFetcher: its task, and the broker's metadata updates that add partitions to
it, both on the broker's event loop. Not thread-safe.
"""
from __future__ import annotations

from typing import NamedTuple

import kafka.errors as Errors

INVALID_SESSION_ID, INITIAL_EPOCH = 0, 0
_INT_MAX = 2**31 - 1


class Position(NamedTuple):
    """What a follower asks of one partition, as a Fetch request's partition names it."""

    fetch_offset: int
    leader_epoch: int
    max_bytes: int
    last_fetched_epoch: int
    log_start_offset: int


class FetchSessionHandler:
    def __init__(self) -> None:
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
        self._known: dict[tuple[str, int], Position] = {}     # the session's partitions, as last answered
        self._asked: dict[tuple[str, int], Position] = {}     # the partitions of the fetch in flight
        self._resets = 0                   # reset() calls so far
        self._resets_when_asked = 0        # ... when the fetch in flight was built

    def next_request(self, wanted: dict[tuple[str, int], Position]) -> tuple[int, int, list, list]:
        """`wanted`: every partition the follower fetches now, and where."""
        self._asked = wanted
        self._resets_when_asked = self._resets
        if self.epoch == INITIAL_EPOCH:
            return self.session_id, INITIAL_EPOCH, list(wanted), []
        send = [key for key, position in self._asked.items() if self._known.get(key) != position]
        forget = [key for key in self._known if key not in self._asked]
        return self.session_id, self.epoch, send, forget

    def answered(self, error_code: int, session_id: int) -> None:
        if self._resets != self._resets_when_asked:
            # reset() while the fetch was in flight: the next is a full one whatever this answer
            # says; it closes the session this one opened or went on in.
            if not error_code and session_id != INVALID_SESSION_ID:
                self.session_id = session_id
            return
        if error_code == Errors.FetchSessionIdNotFoundError.errno:
            self.session_id = INVALID_SESSION_ID
            self.reset()
        elif error_code:                    # a wrong epoch or kind of topic naming: start the session over
            self.reset()
        elif self.epoch == INITIAL_EPOCH:
            self.session_id = session_id
            self.epoch = INITIAL_EPOCH if session_id == INVALID_SESSION_ID else 1
            self._known = self._asked
        else:
            self.epoch = 1 if self.epoch >= _INT_MAX else self.epoch + 1
            self._known = self._asked

    def reset(self) -> None:
        self.epoch = INITIAL_EPOCH
        self._known = {}
        self._resets += 1

    @property
    def incremental(self) -> bool:
        return self.epoch != INITIAL_EPOCH
