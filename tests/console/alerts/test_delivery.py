"""The outbox delivered to real receivers: a webhook server on loopback (generic JSON, Slack,
Teams), retried with backoff through an outage, secrets from CONSOLE_SECRET_* names, and
e-mail through a real SMTP server (aiosmtpd)."""
from __future__ import annotations

import datetime as dt
import email

import pytest
from aiosmtpd.controller import Controller
from django.utils import timezone

from console.alerts import delivery, services
from console.alerts.models import AlertRule, Notification, Receiver
from tests.console.alerts.conftest import make_rule, observe
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit
from tests.support.engine_process import free_port_range
from tests.support.partition_io import send_values

pytestmark = pytest.mark.django_db


@pytest.fixture
def firing(cluster, unique_topic):
    """Returns fire(receivers) -> the firing event's notifications, for a group lagging by 7."""
    topic = make_topic(cluster, unique_topic())
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 10)
    group = f"{topic}-g"
    commit(cluster, group, {(topic, 0): 3})

    def fire(*receivers) -> list[Notification]:
        make_rule(cluster, name="lag", kind=AlertRule.GROUP_LAG, target_type=AlertRule.EXACT, target=group,
                  threshold=5, receivers=receivers)
        services.alerts_evaluate(cluster=cluster, observation=observe(cluster))
        return list(Notification.objects.order_by("pk"))
    fire.group = group
    return fire


def test_each_kind_of_webhook_gets_its_payload_once_with_the_delivery_key(firing, webhook):
    hooks = [Receiver.objects.create(name=kind, kind=kind, url=f"{webhook.url}/{kind}")
             for kind in (Receiver.WEBHOOK, Receiver.SLACK, Receiver.TEAMS)]
    notifications = firing(*hooks)
    for n in notifications:
        assert delivery.deliver(notification_id=n.pk) == Notification.SENT
        assert delivery.deliver(notification_id=n.pk) == "skipped"       # a redelivered task does nothing
    assert len(webhook.requests) == 3
    to_generic = next(n for n in notifications if n.receiver.kind == Receiver.WEBHOOK)
    generic = webhook.accepted[str(to_generic.delivery_key)]["body"]
    assert (generic["status"], generic["subject"], generic["value"], generic["rule"]) == ("firing", firing.group, 7.0,
                                                                                          "lag")
    assert generic["delivery_key"] == str(to_generic.delivery_key)
    [slack] = webhook.bodies("/slack")
    assert slack["text"].startswith("[FIRING] lag on shared engine: " + firing.group)
    [teams] = webhook.bodies("/teams")
    assert teams["@type"] == "MessageCard" and teams["themeColor"] == "D7000C"


def test_a_receiver_outage_is_retried_with_backoff_and_delivered_once(firing, webhook, settings):
    settings.ALERTS_DELIVERY_RETRY_SECONDS = 5.0
    hook = Receiver.objects.create(name="hook", kind=Receiver.WEBHOOK, url=f"{webhook.url}/generic")
    [notification] = firing(hook)
    webhook.fail_next(1, status=503)
    before = timezone.now()
    assert delivery.deliver(notification_id=notification.pk) == Notification.PENDING
    after = timezone.now()
    notification.refresh_from_db()
    assert notification.last_error == "the receiver answered HTTP 503 Service Unavailable"
    assert before + dt.timedelta(seconds=5) <= notification.next_attempt_at <= after + dt.timedelta(seconds=5)
    assert notification.pk not in delivery.notifications_due(now=before)      # not before its backoff
    webhook.stop()                                                     # now down altogether
    later = timezone.now() + dt.timedelta(seconds=6)
    assert delivery.notifications_due(now=later) == [notification.pk]
    Notification.objects.filter(pk=notification.pk).update(next_attempt_at=timezone.now())
    before = timezone.now()
    assert delivery.deliver(notification_id=notification.pk) == Notification.PENDING
    after = timezone.now()
    notification.refresh_from_db()
    assert notification.last_error.startswith("the receiver could not be reached")
    # doubled
    assert before + dt.timedelta(seconds=10) <= notification.next_attempt_at <= after + dt.timedelta(seconds=10)
    webhook.start()
    Notification.objects.filter(pk=notification.pk).update(next_attempt_at=timezone.now())
    assert delivery.deliver(notification_id=notification.pk) == Notification.SENT
    assert len(webhook.accepted) == 1 and len(webhook.requests) == 2      # the 503, then the delivery


def test_webhook_secrets_come_from_console_secret_variables_and_stay_out_of_errors(firing, webhook, monkeypatch):
    hook = Receiver.objects.create(name="secret", kind=Receiver.SLACK,
                                   url=f"{webhook.url}/services/{{CONSOLE_SECRET_TEST_HOOK_PATH}}")
    [notification] = firing(hook)
    assert delivery.deliver(notification_id=notification.pk) == Notification.PENDING
    notification.refresh_from_db()
    assert notification.last_error == ("the webhook URL names CONSOLE_SECRET_TEST_HOOK_PATH, which is not set in "
                                       "the worker's environment")
    monkeypatch.setenv("CONSOLE_SECRET_TEST_HOOK_PATH", "T000/B000/s3cr3t")
    Notification.objects.filter(pk=notification.pk).update(next_attempt_at=timezone.now())
    assert delivery.deliver(notification_id=notification.pk) == Notification.SENT
    assert webhook.requests[-1]["path"] == "/services/T000/B000/s3cr3t"
    assert "s3cr3t" not in Receiver.objects.get(pk=hook.pk).url


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[email.message.Message] = []

    async def handle_DATA(self, server, session, envelope):      # noqa: N802 - aiosmtpd's name
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 Message accepted for delivery"


def test_email_goes_through_a_real_smtp_server_with_the_delivery_key_as_message_id(firing, settings):
    inbox = _Inbox()
    port = free_port_range(1)
    smtp = Controller(inbox, hostname="127.0.0.1", port=port)
    smtp.start()
    try:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        mail = Receiver.objects.create(name="oncall", kind=Receiver.EMAIL, emails="oncall@example.com")
        [notification] = firing(mail)
        assert delivery.deliver(notification_id=notification.pk) == Notification.SENT
    finally:
        smtp.stop()
    [message] = inbox.messages
    assert message["To"] == "oncall@example.com"
    assert message["Subject"].startswith("[FIRING] lag on shared engine")
    assert message["Message-ID"] == f"<{notification.delivery_key}@kafka-console>"


def test_names_with_markup_and_line_breaks_stay_text(cluster, webhook, settings, unique_topic):
    """A group id may hold any character: Slack gets it escaped, an e-mail subject on one line."""
    from console.alerts.models import Alert, AlertEvent

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    from django.core import mail
    rule = make_rule(cluster, name="odd", kind=AlertRule.GROUP_LAG, threshold=0)
    alert = Alert.objects.create(rule=rule, subject="<!channel>\nBcc: x@example.com", state=Alert.FIRING, value=3,
                                 pending_since=timezone.now(), fired_at=timezone.now())
    event = AlertEvent.objects.create(alert=alert, kind=AlertEvent.FIRING, value=3, at=timezone.now())
    slack = Receiver.objects.create(name="slack", kind=Receiver.SLACK, url=f"{webhook.url}/slack")
    email_receiver = Receiver.objects.create(name="mail", kind=Receiver.EMAIL, emails="ops@example.com")
    for receiver in (slack, email_receiver):
        n = Notification.objects.create(event=event, receiver=receiver, next_attempt_at=timezone.now())
        assert delivery.deliver(notification_id=n.pk) == Notification.SENT
    [text] = [b["text"] for b in webhook.bodies("/slack")]
    assert "&lt;!channel&gt;" in text and "<!channel>" not in text
    [message] = mail.outbox
    assert "\n" not in message.subject and message.to == ["ops@example.com"]
