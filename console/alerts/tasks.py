"""Celery tasks for alerts: thin wrappers around services and delivery.

Beat runs `alerts_evaluate_all` every ALERTS_EVALUATION_SECONDS on the `alerts` queue: each
cluster with enabled rules is observed (console.metrics) and its rules evaluated. That queue
has one worker process (`make run`: `--pool solo`), so every round of a cluster sees the same
history of observations (time lag, Burrow's windows). Deliveries run on the default queue,
one task per notification; beat's `alerts_deliver_due` sweeps what no task delivered.
Every task is idempotent (acks_late: a redelivered task finds its work done or taken).
"""
from __future__ import annotations

import logging

from celery import shared_task

from console.alerts import delivery, services
from console.alerts.models import AlertRule
from console.clusters.models import Cluster
from console.kafka_gateway import GatewayError
from console.metrics.selectors import observation_now

log = logging.getLogger(__name__)


@shared_task(acks_late=True)
def alerts_evaluate_all() -> int:
    clusters = Cluster.objects.filter(pk__in=AlertRule.objects.filter(enabled=True).values("cluster"))
    for cluster in clusters:
        try:
            observation = observation_now(cluster=cluster)
        except GatewayError as exc:
            log.warning("Alert rules of %s not evaluated: %s", cluster.name, exc)
            continue
        services.alerts_evaluate(cluster=cluster, observation=observation)
    return len(clusters)


@shared_task(acks_late=True)
def alerts_deliver(notification_id: int) -> str:
    return delivery.deliver(notification_id=notification_id)


@shared_task(acks_late=True)
def alerts_deliver_due() -> int:
    due = delivery.notifications_due()
    for notification_id in due:
        alerts_deliver.delay(notification_id)
    return len(due)

