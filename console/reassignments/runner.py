"""One step of a reassignment job. `tasks.reassignment_step` calls `job_step` again and again.

Every step starts from the cluster's real state, never from what the last step meant to do:
ListPartitionReassignments says which moves are in flight, Metadata which partitions have
reached their target replicas (and whether the ISR holds them all: the batch is verified).
So a step can run twice, or after a worker was killed (kill -9) half-way, and no harm is
done:
- a move is marked in flight in the database before AlterPartitionReassignments is sent.
  A move in flight that the cluster neither runs nor has finished is sent again, but only
  RESEND_AFTER seconds after it was issued (a broker's metadata may lag the controller);
- a pending move whose partition already has its target replicas is marked done, never sent;
- throttles are recorded on the job before they are set, and removed when it ends, fails or
  is cancelled.
Only the chain of steps whose token is the job's runs (services.job_resume_chain starts a
new chain and so ends the old one); `lease_until` keeps two steps of one chain apart.
"""
from __future__ import annotations

import logging
from collections import Counter
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from console import formatting
from console.clusters.gateway import cluster_gateway
from console.errors import ConsoleError
from console.events import notify_on_commit
from console.kafka_gateway.reassignments import throttled_replicas_value
from console.reassignments.models import PartitionLock, Reassignment, ReassignmentMove
from console.reassignments.selectors import job_progress

log = logging.getLogger(__name__)
RESEND_AFTER = timedelta(seconds=15)
UNFINISHED = (ReassignmentMove.PENDING, ReassignmentMove.IN_FLIGHT)
# The fields a step writes. `state` is not among them: people pause and cancel while a step
# runs, and a step must not write back the state it read (only _finish and the start do).
STEP_FIELDS = ["message", "waiting_since", "bytes_total", "bytes_done", "rate_bytes_per_sec", "progress_at",
               "throttled_brokers", "throttled_topics", "parameters", "updated_at"]


def job_step(*, job_id: int, token: str) -> float | None:
    """Advance the job once; the seconds until the next step, or None when this chain ends."""
    now = timezone.now()
    mine = Reassignment.objects.filter(pk=job_id, tick_token=token, state__in=Reassignment.ACTIVE)
    lease_until = now + timedelta(seconds=settings.REASSIGNMENT_STEP_LEASE_SECONDS)
    if not mine.filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now)).update(lease_until=lease_until):
        return poll_seconds() if mine.exists() else None
    try:
        return _advance(Reassignment.objects.select_related("cluster").get(pk=job_id))
    finally:
        # Our lease, even if the token changed meanwhile (a cancel starts a new chain at once).
        Reassignment.objects.filter(pk=job_id, lease_until=lease_until).update(lease_until=None)


def poll_seconds() -> float:
    return settings.REASSIGNMENT_POLL_SECONDS


def _advance(job: Reassignment) -> float | None:
    now = timezone.now()
    if job.state == Reassignment.SCHEDULED:
        if job.run_at and job.run_at > now:
            return min(300.0, (job.run_at - now).total_seconds())
        Reassignment.objects.filter(pk=job.pk, state=Reassignment.SCHEDULED).update(
            state=Reassignment.RUNNING, started_at=now)
        job.refresh_from_db()
    try:
        with cluster_gateway(job.cluster) as gw:
            delay = _Step(job, gw).run()
    except ConsoleError as exc:
        # The cluster does not answer: keep the job and try again (cancel still works later).
        job.message = f"Cannot reach the cluster, retrying: {exc}"
        job.save(update_fields=STEP_FIELDS)
        delay = 2 * poll_seconds()
    _announce(job)
    return delay


def _announce(job: Reassignment) -> None:
    progress = job_progress(job=job)
    notify_on_commit("reassignment.progress", {"cluster": job.cluster_id, **progress.as_event()})


class _Step:
    def __init__(self, job: Reassignment, gw) -> None:
        self.job, self.gw, self.calls = job, gw, gw.reassignments
        self.now = timezone.now()

    def run(self) -> float | None:
        job = self.job
        self.moves = list(job.moves.filter(state__in=UNFINISHED))
        topics = sorted({m.topic for m in self.moves})
        meta = self.gw.metadata(topics) if topics else None
        self.live = {b.node_id for b in meta.brokers} if meta else set()
        self.current = {(p.topic, p.partition): p for t in (meta.topics if meta else ()) for p in t.partitions}
        self.ongoing = self.calls.ongoing() if topics else {}
        finished = self._reconcile()
        if job.elect_preferred and finished:
            self._elect(finished)
        if job.state == Reassignment.CANCELLING:
            return self._cancel()
        down = self._brokers_down()
        if down and self._waited_too_long(down):
            return self._fail(f"{'Brokers' if len(down) > 1 else 'Broker'} {', '.join(map(str, down))} stayed down for more than "
                              f"{settings.REASSIGNMENT_BROKER_WAIT_SECONDS} s; moves in flight were cancelled.")
        if job.state == Reassignment.RUNNING:
            self._issue()
        self._sync_topic_throttles()
        self._measure()
        if not any(m.state in UNFINISHED for m in self.moves) and job.state in (Reassignment.RUNNING,
                                                                                Reassignment.PAUSED):
            failed = job.moves.filter(state=ReassignmentMove.FAILED).count()
            return self._finish(Reassignment.FAILED if failed else Reassignment.DONE,
                                f"{formatting.counted(failed, 'move')} {'were' if failed > 1 else 'was'} refused by "
                                f"the cluster." if failed else "")
        job.save(update_fields=STEP_FIELDS)
        return poll_seconds()

    # --- what the cluster says ----------------------------------------------------------------

    def _reconcile(self) -> list[ReassignmentMove]:
        finished = []
        for m in self.moves:
            p = self.current.get(m.key)
            if p is None:
                self._end_move(m, ReassignmentMove.FAILED, "The partition no longer exists.")
            elif m.key in self.ongoing:
                continue
            elif list(p.replicas) == m.replicas_after:
                if set(m.replicas_after) <= set(p.isr):   # verified: every target replica in sync
                    m.bytes_copied = m.bytes_to_copy
                    self._end_move(m, ReassignmentMove.DONE)
                    finished.append(m)
            elif m.state == ReassignmentMove.IN_FLIGHT:
                if self.job.state == Reassignment.CANCELLING:
                    self._end_move(m, ReassignmentMove.CANCELLED)
                elif m.issued_at is None or self.now - m.issued_at > RESEND_AFTER:
                    m.state = ReassignmentMove.PENDING        # never reached the cluster, or was undone
                    m.save(update_fields=["state"])
        return finished

    def _end_move(self, m: ReassignmentMove, state: str, error: str = "") -> None:
        log.info("Job %s: %s-%s %s %s", self.job.pk, m.topic, m.partition, state, error)
        m.state, m.error, m.finished_at = state, error, self.now
        m.save(update_fields=["state", "error", "finished_at", "bytes_copied"])

    def _brokers_down(self) -> list[int]:
        needed = {b for m in self.moves if m.state in UNFINISHED for b in m.replicas_after}
        return sorted(needed - self.live)

    def _waited_too_long(self, down: list[int]) -> bool:
        job = self.job
        job.waiting_since = job.waiting_since or self.now
        job.message = f"Waiting for {'brokers' if len(down) > 1 else 'broker'} {', '.join(map(str, down))} to come back."
        return (self.now - job.waiting_since).total_seconds() > settings.REASSIGNMENT_BROKER_WAIT_SECONDS

    # --- actions ------------------------------------------------------------------------------

    def _issue(self) -> None:
        job = self.job
        if not self._brokers_down():
            job.waiting_since, job.message = None, ""
        in_flight = [m for m in self.moves if m.state == ReassignmentMove.IN_FLIGHT]
        load = Counter(b for m in in_flight for b in _involved(m))
        total, batch = len(in_flight), []
        for m in self.moves:
            if total >= job.cluster_limit:
                break
            involved = _involved(m)
            if (m.state != ReassignmentMove.PENDING or m.key in self.ongoing
                    or not set(m.replicas_after) <= self.live
                    or any(load[b] >= job.per_broker_limit for b in involved)):
                continue
            batch.append(m)
            load.update(involved)
            total += 1
        if not batch:
            return
        if job.throttle_bytes_per_sec:
            self._throttle_brokers({b for m in batch for b in m.replicas_before + m.replicas_after})
        for m in batch:   # recorded before it is sent (see the module docstring)
            m.state, m.issued_at, m.attempts = ReassignmentMove.IN_FLIGHT, self.now, m.attempts + 1
            m.save(update_fields=["state", "issued_at", "attempts"])
        self._sync_topic_throttles()
        log.info("Job %s: moving %s", job.pk, ", ".join(f"{t}-{p}" for t, p in (m.key for m in batch)))
        refused = self.calls.alter({m.key: m.replicas_after for m in batch})
        for m in batch:
            if m.key in refused:
                self._end_move(m, ReassignmentMove.FAILED, refused[m.key])

    def _throttle_brokers(self, brokers: set[int]) -> None:
        job = self.job
        new = sorted(brokers - set(job.throttled_brokers))
        if not new:
            return
        job.throttled_brokers = sorted(set(job.throttled_brokers) | set(new))
        job.save(update_fields=["throttled_brokers"])   # recorded before it is set
        failed = self.calls.set_broker_throttles(new, job.throttle_bytes_per_sec)
        if failed:
            log.warning("Throttle not set on brokers %s: %s", sorted(failed), failed)

    def _sync_topic_throttles(self) -> None:
        """Each topic's *.replication.throttled.replicas name exactly its moves in flight."""
        job = self.job
        if not job.throttle_bytes_per_sec:
            return
        leader, follower = {}, {}
        for m in self.moves:
            if m.state == ReassignmentMove.IN_FLIGHT and m.adding:
                leader.setdefault(m.topic, set()).update((m.partition, b) for b in m.replicas_before)
                follower.setdefault(m.topic, set()).update((m.partition, b) for b in m.adding)
        wanted = {t: (throttled_replicas_value(leader[t]), throttled_replicas_value(follower[t])) for t in leader}
        if wanted == {t: tuple(v) for t, v in job.parameters.get("_throttle_values", {}).items()}:
            return
        stale = sorted(set(job.throttled_topics) - set(wanted))
        job.throttled_topics = sorted(set(job.throttled_topics) | set(wanted))
        job.parameters["_throttle_values"] = {t: list(v) for t, v in wanted.items()}
        job.save(update_fields=["throttled_topics", "parameters"])
        self.calls.set_topic_throttled_replicas(wanted)
        if stale:
            self.calls.clear_topic_throttled_replicas(stale)
            job.throttled_topics = sorted(wanted)
            job.save(update_fields=["throttled_topics"])

    def _elect(self, finished: list[ReassignmentMove]) -> None:
        wanted: dict[str, list[int]] = {}
        for m in finished:
            p = self.current.get(m.key)
            if p is not None and p.leader != m.replicas_after[0]:
                wanted.setdefault(m.topic, []).append(m.partition)
        if wanted:
            try:
                self.gw.elect_preferred_leaders(wanted)
            except ConsoleError as exc:   # the moves are done; a leader off its place is not a failure
                log.warning("Preferred election after a batch of job %s failed: %s", self.job.pk, exc)

    def _measure(self) -> None:
        """Bytes copied per move in flight: each new replica's size against the leader's."""
        job = self.job
        moving = [m for m in self.moves if m.state == ReassignmentMove.IN_FLIGHT and m.adding]
        if moving:
            partitions: dict[str, list[int]] = {}
            for m in moving:
                partitions.setdefault(m.topic, []).append(m.partition)
            brokers = sorted({b for m in moving for b in m.replicas_before + m.adding} & self.live)
            sizes = self.calls.replica_sizes(partitions, brokers)
            for m in moving:
                p = self.current.get(m.key)
                leader_size = sizes.get((m.topic, m.partition, p.leader)) if p else None
                if leader_size is not None:
                    m.size = leader_size
                m.bytes_copied = sum(min(sizes.get((m.topic, m.partition, b), 0), m.size) for b in m.adding)
                m.save(update_fields=["size", "bytes_copied"])
        rows = job.moves.exclude(state=ReassignmentMove.CANCELLED).values_list("size", "replicas_before",
                                                                                 "replicas_after", "bytes_copied")
        total = done = 0
        for size, before, after, copied in rows:
            total += size * sum(b not in before for b in after)
            done += copied
        elapsed = (self.now - job.progress_at).total_seconds() if job.progress_at else 0
        if elapsed > 0 and done >= job.bytes_done:
            rate = (done - job.bytes_done) / elapsed
            job.rate_bytes_per_sec = rate if not job.rate_bytes_per_sec else 0.7 * job.rate_bytes_per_sec + 0.3 * rate
        job.bytes_total, job.bytes_done, job.progress_at = total, min(done, total), self.now

    # --- endings ------------------------------------------------------------------------------

    def _cancel(self) -> float | None:
        in_flight = [m for m in self.moves if m.state == ReassignmentMove.IN_FLIGHT]
        running = {m.key: None for m in in_flight if m.key in self.ongoing}
        if running:
            log.info("Job %s: cancelling %s", self.job.pk, ", ".join(f"{t}-{p}" for t, p in running))
            self.calls.alter(running)
        for m in self.moves:
            if m.state == ReassignmentMove.PENDING:
                self._end_move(m, ReassignmentMove.CANCELLED)
        if running or any(m.state == ReassignmentMove.IN_FLIGHT for m in self.moves):
            self.job.save(update_fields=STEP_FIELDS)
            return poll_seconds()    # the next step sees them back on their old replicas
        return self._finish(Reassignment.CANCELLED, "Cancelled: moves in flight went back to their old replicas.")

    def _fail(self, reason: str) -> None:
        running = {m.key: None for m in self.moves if m.state == ReassignmentMove.IN_FLIGHT and m.key in self.ongoing}
        if running:
            self.calls.alter(running)
        for m in self.moves:
            if m.state in UNFINISHED:
                self._end_move(m, ReassignmentMove.CANCELLED)
        return self._finish(Reassignment.FAILED, reason)

    def _finish(self, state: str, message: str) -> None:
        job = self.job
        leftovers = self._clear_throttles()
        if leftovers:
            message = (message + " " if message else "") + leftovers
        job.state, job.message, job.finished_at, job.waiting_since = state, message, self.now, None
        if state == Reassignment.DONE:
            job.bytes_done = job.bytes_total
        job.save(update_fields=STEP_FIELDS + ["state", "finished_at"])
        PartitionLock.objects.filter(job=job).delete()
        return None

    def _clear_throttles(self) -> str:
        job, problems = self.job, []
        if job.throttled_topics:
            failed = self.calls.clear_topic_throttled_replicas(job.throttled_topics)
            problems += [f"topic {t}: {e}" for t, e in failed.items()]
            job.throttled_topics = sorted(failed)
        if job.throttled_brokers:
            failed = self.calls.clear_broker_throttles(job.throttled_brokers)
            problems += [f"broker {b}: {e}" for b, e in failed.items()]
            job.throttled_brokers = sorted(failed)
        job.parameters.pop("_throttle_values", None)
        return ("Throttle configs could not be removed (" + "; ".join(problems) + ").") if problems else ""


def clear_leftover_throttles(*, job_id: int) -> bool:
    """A finished job whose throttles could not all be removed (a broker was down) tries again;
    True once none is left. Beat's watchdog calls it."""
    job = Reassignment.objects.select_related("cluster").get(pk=job_id)
    if job.state not in Reassignment.FINISHED or not (job.throttled_brokers or job.throttled_topics):
        return True
    try:
        with cluster_gateway(job.cluster) as gw:
            step = _Step(job, gw)
            problems = step._clear_throttles()
    except ConsoleError:
        return False
    if not problems:
        job.message = job.message.split(" Throttle configs could not be removed")[0]
    job.save(update_fields=["throttled_brokers", "throttled_topics", "parameters", "message", "updated_at"])
    return not problems


def _involved(m: ReassignmentMove) -> set[int]:
    """The brokers a move loads: the ones receiving a replica and the ones losing one."""
    return set(m.adding) | set(m.removing)
