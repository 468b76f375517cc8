"""Alert fixtures: observations of the shared engine, rules, receivers."""
from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from console.alerts.models import Alert, AlertRule, Receiver, Silence
from console.clusters.models import Cluster
from console.metrics.selectors import observation_now
from tests.support.webhook_receiver import WebhookReceiver


def observe(cluster):
    return observation_now(cluster=cluster)


def make_rule(cluster, **fields) -> AlertRule:
    fields.setdefault("name", f"rule-{AlertRule.objects.count()}")
    receivers = fields.pop("receivers", ())
    rule = AlertRule.objects.create(cluster=cluster, **fields)
    rule.receivers.set(receivers)
    return rule


@pytest.fixture
def webhook():
    receiver = WebhookReceiver().start()
    yield receiver
    receiver.release()
    receiver.stop()


@pytest.fixture
def webhook_row(db, webhook):
    return Receiver.objects.create(name="hook", kind=Receiver.WEBHOOK, url=f"{webhook.url}/generic")


@pytest.fixture
def offline(db):
    """The alerts' reads need the console's database only."""
    return Cluster.objects.create(name="offline", bootstrap_servers="127.0.0.1:1")


def firing(rule: AlertRule, subject: str, *, state: str = Alert.FIRING) -> Alert:
    now = timezone.now()
    return Alert.objects.create(rule=rule, subject=subject, state=state, value=9, pending_since=now,
                                fired_at=now if state == Alert.FIRING else None)


def silence(rule: AlertRule, *, subject: str = "", hours: float = 2) -> Silence:
    return Silence.objects.create(rule=rule, subject=subject, until=timezone.now() + dt.timedelta(hours=hours),
                                  created_by="operator")
