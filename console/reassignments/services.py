"""Writes for reassignments: plans (generate, import, manual edit) and job control.

Zulip's split: `check_*` validates, the service changes state in one transaction and writes
the audit entry, and the event (or the job's first step) goes out on commit. The job itself
advances in `runner.py`, step by step, on Celery.
"""
from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from console.accounts.services import audited
from console.clusters.models import Cluster
from console.enqueue import QueueUnavailable, enqueue_on_commit
from console.errors import ConsoleError, InvalidInput
from console.events import notify_on_commit
from console.reassignments.models import PartitionLock, Reassignment, ReassignmentMove
from console.reassignments.plan_json import check_replicas
from console.reassignments.plan_summary import PlanSummary, summarize
from console.reassignments.planner import Key, Placement, PlanGoals, plan_placement
from console.reassignments.selectors import Snapshot, cluster_snapshot

log = logging.getLogger(__name__)

SCENARIOS = ("rebalance", "add", "decommission", "restrict", "rf")
MAX_THROTTLE = 10 * 1024 ** 3
STEP_TASK = "console.reassignments.tasks.reassignment_step"


def plan_generate(*, cluster: Cluster, actor, name: str, scenario: str, topics: Iterable[str] | None = None,
                  brokers: Iterable[int] = (), replication_factor: int | None = None,
                  bytes_tolerance: float = 0.10) -> Reassignment:
    """A draft plan. `brokers` means: the brokers to fill (add), to empty (decommission) or the
    only ones the topics may use (restrict); `replication_factor` is the new RF (rf)."""
    topics = sorted(set(topics)) if topics else None
    brokers = sorted(set(brokers))
    details = {"scenario": scenario, "topics": topics, "brokers": brokers, "replication_factor": replication_factor}
    with audited(actor=actor, cluster=cluster, action="reassignment.plan", target=name, details=details):
        if scenario not in SCENARIOS:
            raise InvalidInput(f"Unknown scenario {scenario!r}: use one of {', '.join(SCENARIOS)}.")
        snapshot = cluster_snapshot(cluster=cluster, topics=topics)
        goals = _goals(scenario=scenario, snapshot=snapshot, topics=topics, brokers=brokers,
                       replication_factor=replication_factor, bytes_tolerance=bytes_tolerance)
        target = plan_placement(snapshot.placements, goals=goals)
        job = _save_plan(cluster=cluster, actor=actor, name=name, scenario=scenario, parameters=details,
                         placements=snapshot.placements, target=target, brokers=snapshot.brokers)
        details["job"] = job.pk
    return job


def _goals(*, scenario: str, snapshot: Snapshot, topics, brokers: list[int], replication_factor: int | None,
           bytes_tolerance: float) -> PlanGoals:
    known = snapshot.brokers
    unknown = sorted(set(brokers) - set(known))
    if unknown:
        raise InvalidInput(f"Unknown {'brokers' if len(unknown) > 1 else 'broker'} {unknown}: the cluster has "
                           f"{sorted(known)}.")
    if scenario in ("add", "decommission", "restrict") and not brokers:
        raise InvalidInput("Choose the brokers for this scenario.")
    if scenario == "decommission":
        return PlanGoals(brokers=known, exclude=frozenset(brokers), bytes_tolerance=bytes_tolerance)
    if scenario == "restrict":
        names = topics or sorted({p.topic for p in snapshot.placements})
        return PlanGoals(brokers=known, topic_brokers={t: frozenset(brokers) for t in names},
                         bytes_tolerance=bytes_tolerance)
    if scenario == "rf":
        if not replication_factor or replication_factor < 1:
            raise InvalidInput("Give the new replication factor (1 or more).")
        names = topics or sorted({p.topic for p in snapshot.placements})
        return PlanGoals(brokers=known, replication_factor={t: replication_factor for t in names},
                         bytes_tolerance=bytes_tolerance)
    return PlanGoals(brokers=known, bytes_tolerance=bytes_tolerance)   # rebalance; add (new brokers are empty)


def plan_from_assignment(*, cluster: Cluster, actor, name: str, assignment: Mapping[Key, tuple[int, ...]],
                         scenario: str = "import") -> Reassignment:
    """A draft from a full replica list per partition (imported JSON or manual edits)."""
    details = {"scenario": scenario, "partitions": len(assignment)}
    with audited(actor=actor, cluster=cluster, action="reassignment.plan", target=name, details=details):
        snapshot = cluster_snapshot(cluster=cluster, topics=sorted({t for t, _ in assignment}))
        current = {p.key for p in snapshot.placements}
        unknown = sorted(set(assignment) - current)
        if unknown:
            raise InvalidInput(f"Unknown {'partitions' if len(unknown) > 1 else 'partition'}: "
                               + ", ".join(f"{t}-{p}" for t, p in unknown[:10]))
        for (topic, partition), replicas in assignment.items():
            check_replicas(list(replicas), where=f"{topic}-{partition}", brokers=snapshot.brokers)
        placements = [p for p in snapshot.placements if p.key in assignment]
        job = _save_plan(cluster=cluster, actor=actor, name=name, scenario=scenario, parameters=details,
                         placements=placements, target=assignment, brokers=snapshot.brokers)
        details["job"] = job.pk
    return job


@transaction.atomic
def _save_plan(*, cluster: Cluster, actor, name: str, scenario: str, parameters: dict, placements: list[Placement],
               target: Mapping[Key, tuple[int, ...]], brokers: Mapping[int, str | None]) -> Reassignment:
    if not name.strip():
        raise InvalidInput("Give the plan a name.")
    summary = summarize(placements, target, brokers)
    job = Reassignment.objects.create(cluster=cluster, name=name.strip()[:200], scenario=scenario,
                                      parameters=parameters, summary=summary_json(summary, placements),
                                      created_by=actor if getattr(actor, "pk", None) else None)
    ReassignmentMove.objects.bulk_create(
        [ReassignmentMove(job=job, topic=m.topic, partition=m.partition, replicas_before=list(m.replicas_before),
                          replicas_after=list(m.replicas_after), size=m.size) for m in summary.moves],
        batch_size=2000)
    return job


def summary_json(summary: PlanSummary, placements: list[Placement]) -> dict:
    return {"moves": len(summary.moves), "replica_moves": summary.replica_moves,
            "bytes_to_copy": summary.bytes_to_copy, "leadership_changes": summary.leadership_changes,
            "partitions": len(placements),
            "brokers": [dataclasses.asdict(b) for b in summary.brokers]}


def plan_edit_move(*, job: Reassignment, actor, topic: str, partition: int, replicas: tuple[int, ...]) -> None:
    """Manual edit of one partition's target replicas in a draft (the table on the review page)."""
    details = {"job": job.pk, "replicas": list(replicas)}
    with audited(actor=actor, cluster=job.cluster, action="reassignment.edit", target=f"{topic}-{partition}",
                 details=details):
        if job.state != Reassignment.DRAFT:
            raise InvalidInput("Only a plan that has not run can be edited.")
        move = job.moves.filter(topic=topic, partition=partition).first()
        if move is None:
            raise InvalidInput(f"{topic}-{partition} is not in this plan; import a JSON that lists it.")
        known = [b["broker"] for b in job.summary.get("brokers", [])]
        check_replicas(list(replicas), where=f"{topic}-{partition}", brokers=known)
        with transaction.atomic():
            if list(replicas) == move.replicas_before:
                move.delete()
            else:
                move.replicas_after = list(replicas)
                move.save(update_fields=["replicas_after"])
            _refresh_summary(job)


def _refresh_summary(job: Reassignment) -> None:
    moves = list(job.moves.all())
    placements = [Placement(m.topic, m.partition, tuple(m.replicas_before), m.size) for m in moves]
    target = {m.key: tuple(m.replicas_after) for m in moves}
    brokers = [b["broker"] for b in job.summary.get("brokers", [])]
    # Per-broker figures of the whole scope cannot be rebuilt from the moves alone: shift them.
    old = {b["broker"]: b for b in job.summary.get("brokers", [])}
    fresh = summarize(placements, target, brokers)
    changed = {b.broker: b for b in fresh.brokers}
    for broker_id, row in old.items():
        f = changed.get(broker_id)
        if f is not None:
            row.update(replicas_after=row["replicas_before"] + f.replicas_after - f.replicas_before,
                       leaders_after=row["leaders_before"] + f.leaders_after - f.leaders_before,
                       bytes_after=row["bytes_before"] + f.bytes_after - f.bytes_before,
                       bytes_in=f.bytes_in, bytes_out=f.bytes_out)
    job.summary.update(moves=len(fresh.moves), replica_moves=fresh.replica_moves,
                       bytes_to_copy=fresh.bytes_to_copy, leadership_changes=fresh.leadership_changes)
    job.save(update_fields=["summary", "updated_at"])


# --- job control --------------------------------------------------------------------------

def check_run_options(*, throttle_bytes_per_sec: int | None, per_broker_limit: int, cluster_limit: int) -> None:
    if throttle_bytes_per_sec is not None and not 1024 <= throttle_bytes_per_sec <= MAX_THROTTLE:
        raise InvalidInput("The throttle must be between 1 KB/s and 10 GB/s (or empty for none).")
    if not 1 <= per_broker_limit <= 1000:
        raise InvalidInput("Moves per broker must be between 1 and 1000.")
    if not 1 <= cluster_limit <= 100_000:
        raise InvalidInput("Moves in the cluster must be between 1 and 100,000.")


def job_start(*, job: Reassignment, actor, throttle_bytes_per_sec: int | None = None, per_broker_limit: int = 5,
              cluster_limit: int = 50, elect_preferred: bool = True, run_at: datetime | None = None) -> Reassignment:
    """Run a draft now (or at `run_at`): lock its partitions, then the first step goes to Celery."""
    details = {"throttle_bytes_per_sec": throttle_bytes_per_sec, "per_broker_limit": per_broker_limit,
               "cluster_limit": cluster_limit, "elect_preferred": elect_preferred,
               "run_at": run_at.isoformat() if run_at else None}
    with audited(actor=actor, cluster=job.cluster, action="reassignment.run", target=job.name, details=details):
        check_run_options(throttle_bytes_per_sec=throttle_bytes_per_sec, per_broker_limit=per_broker_limit,
                          cluster_limit=cluster_limit)
        with transaction.atomic():
            job = Reassignment.objects.select_for_update().get(pk=job.pk)
            if job.state != Reassignment.DRAFT:
                raise InvalidInput(f"This plan is {job.state}; only a plan that has not run can start.")
            if not job.moves.exists():
                raise InvalidInput("This plan changes nothing: there is nothing to run.")
            _lock_partitions(job)
            job.throttle_bytes_per_sec = throttle_bytes_per_sec
            job.per_broker_limit, job.cluster_limit, job.elect_preferred = per_broker_limit, cluster_limit, elect_preferred
            job.bytes_total = sum(m.bytes_to_copy for m in job.moves.all())
            if run_at and run_at > timezone.now():
                job.state, job.run_at = Reassignment.SCHEDULED, run_at
            else:
                job.state, job.started_at = Reassignment.RUNNING, timezone.now()
            job.tick_token = uuid.uuid4().hex
            job.save()
            _kick_on_commit(job, undo_start=True)
            notify_on_commit("reassignment.changed", {"cluster": job.cluster_id, "job": job.pk})
    return job


def _lock_partitions(job: Reassignment) -> None:
    keys = list(job.moves.values_list("topic", "partition"))
    clash = (PartitionLock.objects.filter(cluster=job.cluster_id, topic__in={t for t, _ in keys})
             .exclude(job=job).select_related("job"))
    wanted = set(keys)
    holders = sorted({lock.job.name for lock in clash if (lock.topic, lock.partition) in wanted})
    if holders:
        raise InvalidInput(f"Another job is moving some of these partitions: {', '.join(holders)}. "
                           "Wait for it to finish or cancel it.")
    try:
        with transaction.atomic():
            PartitionLock.objects.bulk_create([PartitionLock(cluster_id=job.cluster_id, topic=t, partition=p, job=job)
                                               for t, p in keys], batch_size=2000)
    except IntegrityError:
        # Another job took one of them between our check and our insert.
        raise InvalidInput("Another job started moving some of these partitions just now.") from None


def _kick_on_commit(job: Reassignment, *, undo_start: bool = False) -> None:
    """The job's first step, once committed. A scheduled job's steps wait at most 5 minutes at
    a time (runner): a task with an ETA hours away would outlive Redis's visibility timeout and
    be delivered twice.

    If the task queue cannot be reached: a job being started (`undo_start`) is a draft again
    and the caller gets QueueUnavailable; an active job's new chain is left to the watchdog,
    which restarts it once the queue is back."""
    job_id, token, name = job.pk, job.tick_token, job.name

    def failed(exc: QueueUnavailable) -> bool:
        if undo_start:
            _undo_start(job_id=job_id, token=token)
            return True
        log.warning("%s The watchdog restarts the job once the queue is back.", exc)
        return False
    enqueue_on_commit(STEP_TASK, job_id, token, on_failure=failed,
                      what=f"the job {name!r}" if undo_start else f"the job {name!r}'s next step")


def _undo_start(*, job_id: int, token: str) -> None:
    """Back to a draft, its partitions unlocked: the start's first step could not be queued."""
    with transaction.atomic():
        job = Reassignment.objects.select_for_update().filter(
            pk=job_id, tick_token=token, state__in=(Reassignment.RUNNING, Reassignment.SCHEDULED)).first()
        if job is None:
            return
        PartitionLock.objects.filter(job=job).delete()
        job.state, job.started_at, job.run_at, job.tick_token = Reassignment.DRAFT, None, None, ""
        job.save(update_fields=["state", "started_at", "run_at", "tick_token", "updated_at"])
        notify_on_commit("reassignment.changed", {"cluster": job.cluster_id, "job": job.pk})


def job_resume_chain(*, job_id: int) -> None:
    """Start a new chain of steps for an active job (a worker restarted, or the chain broke);
    the old chain, if any, ends at its next step because its token is no longer the job's."""
    with transaction.atomic():
        job = Reassignment.objects.select_for_update().filter(pk=job_id, state__in=Reassignment.ACTIVE).first()
        if job is None:
            return
        job.tick_token = uuid.uuid4().hex
        job.save(update_fields=["tick_token"])
        _kick_on_commit(job)


def job_watchdog_sweep() -> None:
    """Beat's watchdog: restart the chain of any active job that has not moved for a while, and
    retry removing the throttles a finished job had to leave behind (a broker was down)."""
    from console.reassignments import runner
    stale = timezone.now() - timedelta(seconds=max(settings.REASSIGNMENT_WATCHDOG_SECONDS, 20 * runner.poll_seconds()))
    for job_id in Reassignment.objects.filter(state__in=(Reassignment.RUNNING, Reassignment.PAUSED,
                                                         Reassignment.CANCELLING),
                                              updated_at__lt=stale).values_list("pk", flat=True):
        job_resume_chain(job_id=job_id)
    leftovers = (Reassignment.objects.filter(state__in=Reassignment.FINISHED)
                 .exclude(throttled_brokers=[], throttled_topics=[]).values_list("pk", flat=True))
    for job_id in leftovers:
        runner.clear_leftover_throttles(job_id=job_id)


def _control(job: Reassignment, actor, action: str, allowed_from: tuple[str, ...], new_state: str) -> Reassignment:
    with audited(actor=actor, cluster=job.cluster, action=f"reassignment.{action}", target=job.name,
                 details={"job": job.pk}):
        with transaction.atomic():
            job = Reassignment.objects.select_for_update().get(pk=job.pk)
            if job.state not in allowed_from:
                raise InvalidInput(f"A {job.state} job cannot {action}.")
            job.state = new_state
            job.save(update_fields=["state", "updated_at"])
            notify_on_commit("reassignment.changed", {"cluster": job.cluster_id, "job": job.pk})
    return job


def job_pause(*, job: Reassignment, actor) -> Reassignment:
    """No new moves start; the ones in flight finish."""
    return _control(job, actor, "pause", (Reassignment.RUNNING,), Reassignment.PAUSED)


def job_resume(*, job: Reassignment, actor) -> Reassignment:
    return _control(job, actor, "resume", (Reassignment.PAUSED,), Reassignment.RUNNING)


def job_cancel(*, job: Reassignment, actor) -> Reassignment:
    """No more moves; the ones in flight are cancelled on the cluster and go back (runner)."""
    job = _control(job, actor, "cancel", (Reassignment.SCHEDULED, Reassignment.RUNNING, Reassignment.PAUSED),
                   Reassignment.CANCELLING)
    job_resume_chain(job_id=job.pk)   # a scheduled job's step is hours away: act now
    return job


__all__ = ["ConsoleError", "job_cancel", "job_pause", "job_resume", "job_resume_chain", "job_start",
           "plan_edit_move", "plan_from_assignment", "plan_generate"]
