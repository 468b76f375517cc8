"""Celery tasks for reassignment jobs. Thin: they take ids and call the runner or a service.

`reassignment_step` runs one step of a job and sends the next one itself (after the step's
database writes are committed). Steps are short (a few requests), so a step held by a
worker that is killed is not what the job waits for: a starting worker (`worker_ready`)
gives every active job a new chain of steps, and beat's watchdog does the same for a job
whose chain broke. The killed worker's own unacknowledged step comes back from Redis only
after the visibility timeout (CELERY_BROKER_TRANSPORT_OPTIONS), finds its token stale and
ends there.
"""
from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from celery.signals import worker_ready
from django.utils import timezone

from console.reassignments import runner, services
from console.reassignments.models import Reassignment


@shared_task(acks_late=True, ignore_result=True)
def reassignment_step(job_id: int, token: str) -> None:
    delay = runner.job_step(job_id=job_id, token=token)
    if delay is not None:
        reassignment_step.apply_async((job_id, token), countdown=delay)


@shared_task(acks_late=True, ignore_result=True)
def reassignment_watchdog() -> None:
    """Restart the chain of any active job that has not moved for a while, and retry removing
    the throttles a finished job had to leave behind (a broker was down when it ended)."""
    stale = timezone.now() - timedelta(seconds=max(60.0, 20 * runner.poll_seconds()))
    for job_id in Reassignment.objects.filter(state__in=(Reassignment.RUNNING, Reassignment.PAUSED,
                                                         Reassignment.CANCELLING),
                                              updated_at__lt=stale).values_list("pk", flat=True):
        services.job_resume_chain(job_id=job_id)
    leftovers = (Reassignment.objects.filter(state__in=Reassignment.FINISHED)
                 .exclude(throttled_brokers=[], throttled_topics=[]).values_list("pk", flat=True))
    for job_id in leftovers:
        runner.clear_leftover_throttles(job_id=job_id)


@worker_ready.connect
def resume_jobs(sender=None, **kwargs) -> None:
    for job_id in Reassignment.objects.filter(state__in=Reassignment.ACTIVE).values_list("pk", flat=True):
        services.job_resume_chain(job_id=job_id)


@shared_task(acks_late=True, ignore_result=True)
def reassignment_schedule_fire(schedule_id: int) -> None:
    from console.reassignments.schedules import schedule_fire
    schedule_fire(schedule_id=schedule_id)
