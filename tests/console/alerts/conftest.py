"""Alert fixtures: observations of the shared engine, rules, receivers."""
from __future__ import annotations

import pytest

from console.alerts.models import AlertRule, Receiver
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
