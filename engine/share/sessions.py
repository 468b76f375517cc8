"""Share sessions: the share variant of KIP-227's fetch sessions (Kafka's ShareSessionCache).

A member opens a session with epoch 0 and the partitions it wants; later requests carry the
next epoch (1, 2, ... wrapping to 1) and only the partitions that changed (added with the
request, dropped with ForgottenTopicsData); epoch -1 closes the session, and so does the
close of the connection it was opened on (manager.py). One session per (group, member) on
each broker; opening one again replaces it.

- An epoch other than the expected one: INVALID_SHARE_SESSION_EPOCH; no session for a
  non-zero epoch: SHARE_SESSION_NOT_FOUND; acknowledgements with epoch 0, or
  ForgottenTopicsData with epoch -1: INVALID_REQUEST.
- At most `group.share.max.share.sessions` (2000) sessions: an idle one (unused for its
  group's share session timeout) is evicted for a new one, else SHARE_SESSION_LIMIT_REACHED.
  Idle sessions are also swept; what their member still holds is released then.
Not thread-safe: the event loop owns it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import kafka.errors as Errors

from engine.errors import ApiError

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
TopicIdPartition = tuple[object, int]          # (topic id, partition)


class ShareSessionLimitReachedError(Errors.BrokerResponseError):
    """Kafka's SHARE_SESSION_LIMIT_REACHED (KIP-932), which kafka-python 3.0.12 does not define."""
    errno = 133
    message = "SHARE_SESSION_LIMIT_REACHED"
    description = "The limit of share sessions has been reached."


def next_epoch(epoch: int) -> int:
    return FINAL_EPOCH if epoch < 0 else (1 if epoch >= 2**31 - 1 else epoch + 1)


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    epoch: int                                    # the epoch the next request must carry
    partitions: set[TopicIdPartition] = field(default_factory=set)
    last_used: float = field(default_factory=time.monotonic)


class ShareSessionCache:
    def __init__(self, max_sessions: Callable[[], int], idle_after_s: Callable[[str], float]) -> None:
        self._sessions: dict[tuple[str, str], ShareSession] = {}
        self._max_sessions = max_sessions
        self._idle_after_s = idle_after_s       # by group: its share session timeout

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self._sessions.get((group_id, member_id))

    def open(self, group_id: str, member_id: str, partitions: set[TopicIdPartition]
             ) -> tuple[ShareSession, list[ShareSession]]:
        """A new session at epoch 1 next; (it, the sessions it replaced or evicted)."""
        gone = []
        old = self._sessions.pop((group_id, member_id), None)
        if old is not None:
            gone.append(old)
        if len(self._sessions) >= self._max_sessions():
            idle = self.idle()
            if not idle:
                raise ApiError(ShareSessionLimitReachedError)
            oldest = min(idle, key=lambda s: s.last_used)
            del self._sessions[(oldest.group_id, oldest.member_id)]
            gone.append(oldest)
        session = ShareSession(group_id, member_id, next_epoch(INITIAL_EPOCH), set(partitions))
        self._sessions[(group_id, member_id)] = session
        return session, gone

    def use(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """The session a request with this (non-zero) epoch continues; advances its epoch."""
        session = self._sessions.get((group_id, member_id))
        if session is None:
            raise ApiError(Errors.ShareSessionNotFoundError,
                           f"The share session for member {member_id} of group {group_id} was not found.")
        if epoch != FINAL_EPOCH and epoch != session.epoch:
            raise ApiError(Errors.InvalidShareSessionEpochError,
                           f"The share session epoch {epoch} does not match the expected epoch {session.epoch}.")
        session.epoch = next_epoch(epoch)
        session.last_used = time.monotonic()
        return session

    def close(self, session: ShareSession) -> None:
        if self._sessions.get((session.group_id, session.member_id)) is session:
            del self._sessions[(session.group_id, session.member_id)]

    def idle(self) -> list[ShareSession]:
        now = time.monotonic()
        return [s for s in self._sessions.values() if now - s.last_used > self._idle_after_s(s.group_id)]

    def sweep(self) -> list[ShareSession]:
        """Drop and return the idle sessions."""
        idle = self.idle()
        for session in idle:
            self.close(session)
        return idle

    def sessions(self) -> list[ShareSession]:
        return list(self._sessions.values())
