"""Beat's scheduler: django-celery-beat's DatabaseScheduler that sends only while it holds a
lock in Redis, so that two beats started by mistake never queue a schedule twice.

One beat is the rule (docs/operations/scale.md), but a second host with the same supervisor
config, or a restart while the old process lingers, is an easy mistake: both beats would send
every snapshot, every analytics run and every reassignment schedule. So each beat takes the
lock `console:beat:lock` (SET NX with a time to live, as celery-redbeat and single-beat do) and
only its holder sends; the holder renews it at every tick (ticks are at most a third of the
lock's life apart). The others check it at the same pace, and one takes over within
BEAT_LOCK_SECONDS of the holder's death; a beat that stops cleanly lets it go at once.

A schedule is not sent twice across a takeover either: the holder writes each entry's last run
to the database after every send (CELERY_BEAT_SYNC_EVERY = 1), and a beat that takes the lock
reads the schedule again from the database before it sends anything.
"""
from __future__ import annotations

import logging
import os
import socket

import redis
from django.conf import settings
from django_celery_beat.schedulers import DatabaseScheduler
from redis.exceptions import LockError, RedisError

LOCK_KEY = "console:beat:lock"
log = logging.getLogger(__name__)


class LockedDatabaseScheduler(DatabaseScheduler):
    def __init__(self, *args, **kwargs) -> None:
        self.lock_seconds = settings.BEAT_LOCK_SECONDS
        self._lock = None
        self.holding = False
        super().__init__(*args, **kwargs)

    def _beat_lock(self):
        if self._lock is None:
            client = redis.Redis.from_url(self.app.conf.broker_url, socket_timeout=5, socket_connect_timeout=5)
            self._lock = client.lock(LOCK_KEY, timeout=self.lock_seconds, blocking=False, thread_local=False)
        return self._lock

    def lock_held(self) -> bool:
        """Renew the lock if this beat holds it, else try to take it; False if Redis is down."""
        lock = self._beat_lock()
        try:
            if self.holding:
                try:
                    lock.reacquire()
                    return True
                except LockError:
                    log.warning("beat: the lock %s was lost (this beat paused longer than %s s); "
                                "another beat sends now", LOCK_KEY, self.lock_seconds)
                    self.holding = False
            # The token names the holder (host and pid), for an operator who looks at the key.
            if lock.acquire(blocking=False, token=f"{socket.gethostname()}:{os.getpid()}"):
                log.info("beat: holding %s, sending the schedule", LOCK_KEY)
                self.holding = True
                self._initial_read, self._heap = True, None     # the last holder's sends, from the database
                return True
        except RedisError as exc:
            log.warning("beat: cannot reach Redis for %s (%s); sending nothing until it answers", LOCK_KEY, exc)
            self.holding = False
        return False

    def tick(self, *args, **kwargs) -> float:
        renew_every = self.lock_seconds / 3
        if not self.lock_held():
            return renew_every
        return min(super().tick(*args, **kwargs), renew_every)

    def close(self) -> None:
        super().close()
        if self.holding:
            try:
                self._beat_lock().release()
            except (LockError, RedisError):
                pass
            self.holding = False
