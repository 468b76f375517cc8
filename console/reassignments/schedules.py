"""Reassignment schedules: rows the console edits, fired by beat (django-celery-beat).

Each schedule owns one PeriodicTask (CrontabSchedule for a cron window, ClockedSchedule
one-off for a single time) that calls `tasks.reassignment_schedule_fire(schedule_id)`; the
task only passes the id to `schedule_fire`, which decides with fresh state: "nightly at
02:00, rebalance if leader skew is over 10%" reads the placement at 02:00.
"""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django_celery_beat.models import ClockedSchedule, CrontabSchedule, PeriodicTask

from console import formatting
from console.accounts.services import audited
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import ConsoleError, InvalidInput
from console.reassignments import services
from console.reassignments.models import ReassignmentSchedule
from console.reassignments.planner import Placement
from console.reassignments.selectors import cluster_snapshot

FIRE_TASK = "console.reassignments.tasks.reassignment_schedule_fire"


def check_cron(cron: str) -> list[str]:
    fields = cron.split()
    if len(fields) != 5:
        raise InvalidInput(f"{cron!r} is not a cron expression: use five fields, minute hour day month weekday.")
    try:
        from celery.schedules import crontab
        crontab(*fields)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"{cron!r} is not a valid cron expression: {exc}") from None
    return fields


def schedule_create(*, cluster: Cluster, actor, name: str, kind: str, cron: str = "", run_at: datetime | None = None,
                    topics: list[str] | None = None, min_leader_skew_percent: float | None = None,
                    throttle_bytes_per_sec: int | None = None) -> ReassignmentSchedule:
    details = {"kind": kind, "cron": cron, "run_at": run_at.isoformat() if run_at else None, "topics": topics or [],
               "min_leader_skew_percent": min_leader_skew_percent}
    with audited(actor=actor, cluster=cluster, action="reassignment_schedule.create", target=name, details=details):
        if kind not in dict(ReassignmentSchedule.KINDS):
            raise InvalidInput(f"Unknown schedule kind {kind!r}.")
        if not name.strip():
            raise InvalidInput("Give the schedule a name.")
        if bool(cron) == bool(run_at):
            raise InvalidInput("Give either a cron window or one time to run at.")
        if cron:
            check_cron(cron)
        services.check_run_options(throttle_bytes_per_sec=throttle_bytes_per_sec, per_broker_limit=5, cluster_limit=50)
        with transaction.atomic():
            schedule = ReassignmentSchedule.objects.create(
                cluster=cluster, name=name.strip()[:200], kind=kind, topics=sorted(set(topics or [])), cron=cron,
                run_at=run_at, min_leader_skew_percent=min_leader_skew_percent,
                throttle_bytes_per_sec=throttle_bytes_per_sec,
                created_by=actor if getattr(actor, "pk", None) else None)
            _sync_periodic_task(schedule)
        details["schedule"] = schedule.pk
    return schedule


def schedule_update(*, schedule: ReassignmentSchedule, actor, cron: str | None = None, enabled: bool | None = None,
                    min_leader_skew_percent: float | None = None) -> ReassignmentSchedule:
    details = {"cron": cron, "enabled": enabled, "min_leader_skew_percent": min_leader_skew_percent}
    with audited(actor=actor, cluster=schedule.cluster, action="reassignment_schedule.update", target=schedule.name,
                 details=details):
        if cron is not None:
            if schedule.run_at:
                raise InvalidInput("A one-time schedule has no cron window; create a new schedule.")
            check_cron(cron)
            schedule.cron = cron
        if enabled is not None:
            schedule.enabled = enabled
        if min_leader_skew_percent is not None:
            schedule.min_leader_skew_percent = min_leader_skew_percent
        with transaction.atomic():
            schedule.save()
            _sync_periodic_task(schedule)
    return schedule


def schedule_delete(*, schedule: ReassignmentSchedule, actor) -> None:
    with audited(actor=actor, cluster=schedule.cluster, action="reassignment_schedule.delete", target=schedule.name,
                 details={"schedule": schedule.pk}):
        with transaction.atomic():
            if schedule.periodic_task is not None:
                schedule.periodic_task.delete()
            schedule.delete()


def _sync_periodic_task(schedule: ReassignmentSchedule) -> None:
    """Make the schedule's PeriodicTask say what the row says (beat notices the change)."""
    fields = {"name": f"reassignment-schedule-{schedule.pk}", "task": FIRE_TASK,
              "args": json.dumps([schedule.pk]), "enabled": schedule.enabled, "one_off": bool(schedule.run_at),
              "crontab": None, "clocked": None}
    if schedule.run_at:
        fields["clocked"], _ = ClockedSchedule.objects.get_or_create(clocked_time=schedule.run_at)
    else:
        minute, hour, day_of_month, month_of_year, day_of_week = schedule.cron.split()
        fields["crontab"], _ = CrontabSchedule.objects.get_or_create(
            minute=minute, hour=hour, day_of_month=day_of_month, month_of_year=month_of_year,
            day_of_week=day_of_week, timezone="UTC")
    task = schedule.periodic_task
    if task is None:
        schedule.periodic_task = PeriodicTask.objects.create(**fields)
        schedule.save(update_fields=["periodic_task"])
    else:
        for key, value in fields.items():
            setattr(task, key, value)
        task.save()


def leader_skew_percent(placements: list[Placement], brokers) -> float:
    """How far the broker with the most preferred leaderships is above the mean, in %."""
    brokers = list(brokers)
    if not placements or not brokers:
        return 0.0
    leaders = Counter(p.replicas[0] for p in placements if p.replicas)
    mean = len(placements) / len(brokers)
    return 100.0 * (max(leaders[b] for b in brokers) - mean) / mean


def schedule_fire(*, schedule_id: int) -> str:
    """What beat runs: check the condition against the cluster now, then act. Returns (and
    stores) a sentence saying what happened."""
    schedule = ReassignmentSchedule.objects.select_related("cluster").filter(pk=schedule_id).first()
    if schedule is None or not schedule.enabled:
        return "schedule gone or disabled"
    job = None
    try:
        if schedule.kind == ReassignmentSchedule.ELECT:
            result = _elect(schedule)
        else:
            result, job = _rebalance(schedule)
    except ConsoleError as exc:
        result = f"Failed: {exc}"
    ReassignmentSchedule.objects.filter(pk=schedule.pk).update(last_fired_at=timezone.now(), last_result=result,
                                                               last_job=job or schedule.last_job)
    return result


def _elect(schedule: ReassignmentSchedule) -> str:
    with audited(actor=None, cluster=schedule.cluster, action="reassignment_schedule.elect", target=schedule.name,
                 details={"schedule": schedule.pk}):
        with cluster_gateway(schedule.cluster) as gw:
            meta = gw.metadata(schedule.topics or None)
            wanted = {t.name: [p.partition for p in t.partitions] for t in meta.topics if not t.is_internal}
            outcome = gw.elect_preferred_leaders(wanted)
    return (f"Elected {formatting.counted(len(outcome.elected), 'leader')}; {outcome.not_needed} already preferred; "
            f"{len(outcome.failed)} failed.")


def _rebalance(schedule: ReassignmentSchedule):
    snapshot = cluster_snapshot(cluster=schedule.cluster, topics=schedule.topics or None)
    skew = leader_skew_percent(snapshot.placements, snapshot.live_brokers)
    threshold = schedule.min_leader_skew_percent
    if threshold is not None and skew <= threshold:
        return f"Leader skew {skew:.1f}% is not over {threshold:g}%: nothing to do.", None
    name = f"{schedule.name} {timezone.now():%Y-%m-%d %H:%M}"
    job = services.plan_generate(cluster=schedule.cluster, actor=None, name=name, scenario="rebalance",
                                 topics=schedule.topics or None)
    if not job.moves.exists():
        return f"Leader skew {skew:.1f}%; the plan changes nothing.", job
    services.job_start(job=job, actor=None, throttle_bytes_per_sec=schedule.throttle_bytes_per_sec)
    return f"Leader skew {skew:.1f}%: started {formatting.counted(job.summary['moves'], 'move')}.", job
