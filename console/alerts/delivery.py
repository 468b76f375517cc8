"""Delivering the outbox: each Notification row to its receiver, once, retried with backoff.

Exactly once is not something HTTP or SMTP can promise to a sender that may die: a worker
killed with -9 after the receiver took the message but before the "sent" commit cannot know
it was taken. So delivery is idempotent instead of hopeful:

1. **Claim.** A worker takes a row with one conditional UPDATE (pending and due, or a
   "sending" whose lease ran out): `state=sending, lease_until=now+lease, attempts+1`. Only
   one worker wins a row; a task delivered twice (acks_late, a redelivery after a kill) finds
   it taken or sent and does nothing.
2. **Send** with the row's `delivery_key`: the `Idempotency-Key` header and the payload's
   `delivery_key` for webhooks, the `Message-ID` for e-mail. A receiver that keeps the keys
   it has seen (as ours in the tests, and as mail systems do with Message-IDs) takes a repeat
   once; a killed worker's message is re-sent with the same key after its lease.
3. **Record.** 2xx (or the SMTP server's acceptance): `sent`. Anything else: back to
   `pending` with `next_attempt_at` doubling from DELIVERY_RETRY_SECONDS up to
   DELIVERY_MAX_RETRY_SECONDS, and the error kept for the page. A row is never dropped;
   after DELIVERY_MAX_ATTEMPTS it is `failed` and shown as such (an operator can see it).

Beat's sweep (`notifications_due`) finds rows whose task never ran (a worker killed before
it started, a lost message), so nothing waits for Redis's visibility timeout.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import urllib.error
import urllib.request

from celery import current_app
from django.conf import settings
from django.core.mail import EmailMessage
from django.db.models import F, Q
from django.utils import timezone

from console.alerts.models import AlertEvent, Notification, Receiver

log = logging.getLogger(__name__)
DELIVER_TASK = "console.alerts.tasks.alerts_deliver"
_PLACEHOLDER = re.compile(r"\{(CONSOLE_SECRET_[A-Z0-9_]+)\}")


def claim(*, notification_id: int, now: dt.datetime | None = None) -> Notification | None:
    now = now or timezone.now()
    due = Q(state=Notification.PENDING, next_attempt_at__lte=now) | Q(state=Notification.SENDING, lease_until__lt=now)
    taken = Notification.objects.filter(due, pk=notification_id).update(
        state=Notification.SENDING, lease_until=now + dt.timedelta(seconds=settings.ALERTS_DELIVERY_LEASE_SECONDS),
        attempts=F("attempts") + 1)
    if not taken:
        return None
    return Notification.objects.select_related("receiver", "event__alert__rule__cluster").get(pk=notification_id)


def deliver(*, notification_id: int) -> str:
    """Claim, send, record; returns the row's state afterwards (or "skipped": not ours now)."""
    notification = claim(notification_id=notification_id)
    if notification is None:
        return "skipped"
    try:
        send(notification)
    except Exception as exc:  # noqa: BLE001 - any failure of the receiver is retried, and shown
        _failed(notification, exc)
        return notification.state
    Notification.objects.filter(pk=notification.pk, state=Notification.SENDING).update(
        state=Notification.SENT, sent_at=timezone.now(), lease_until=None, last_error="")
    return Notification.SENT


def _failed(notification: Notification, exc: Exception) -> None:
    attempts = notification.attempts
    delay = min(settings.ALERTS_DELIVERY_RETRY_SECONDS * 2 ** (attempts - 1), settings.ALERTS_DELIVERY_MAX_RETRY_SECONDS)
    state = Notification.FAILED if attempts >= settings.ALERTS_DELIVERY_MAX_ATTEMPTS else Notification.PENDING
    message = str(exc)[:900]
    Notification.objects.filter(pk=notification.pk, state=Notification.SENDING).update(
        state=state, next_attempt_at=timezone.now() + dt.timedelta(seconds=delay), lease_until=None,
        last_error=message)
    notification.state = state
    log.warning("Alert notification %s to %s failed (attempt %d, next in %.0f s): %s", notification.pk,
                notification.receiver.name, attempts, delay, message)


def queue_deliveries(*, notification_ids: list[int]) -> None:
    """After the round's commit: one delivery task per notification (beat's sweep covers a lost
    one). Sent by name: the tasks module imports the services that call this."""
    for notification_id in notification_ids:
        current_app.send_task(DELIVER_TASK, args=[notification_id])


def notifications_due(*, now: dt.datetime | None = None) -> list[int]:
    now = now or timezone.now()
    due = Q(state=Notification.PENDING, next_attempt_at__lte=now) | Q(state=Notification.SENDING, lease_until__lt=now)
    return list(Notification.objects.filter(due).values_list("pk", flat=True)[:500])


# --- sending -----------------------------------------------------------------------------------

def send(notification: Notification) -> None:
    receiver = notification.receiver
    message = _message(notification.event, str(notification.delivery_key))
    if receiver.kind == Receiver.EMAIL:
        _send_email(receiver, message, str(notification.delivery_key))
        return
    payload = {Receiver.SLACK: _slack, Receiver.TEAMS: _teams}.get(receiver.kind, _generic)(message)
    request = urllib.request.Request(
        resolve_url(receiver.url), data=json.dumps(payload).encode(), method="POST",
        headers={"Content-Type": "application/json", "Idempotency-Key": str(notification.delivery_key),
                 "User-Agent": "kafka-console-alerts"})
    try:
        with urllib.request.urlopen(request, timeout=settings.ALERTS_DELIVERY_TIMEOUT_SECONDS) as answer:
            answer.read(65536)
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"the receiver answered HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        # The URL may hold secrets: say what failed, never where.
        raise RuntimeError(f"the receiver could not be reached: {getattr(exc, 'reason', exc)}") from None


def resolve_url(url: str) -> str:
    """The URL with each `{CONSOLE_SECRET_NAME}` replaced by that variable's value."""
    def value(match: re.Match) -> str:
        name = match.group(1)
        secret = os.environ.get(name, "")
        if not secret:
            raise RuntimeError(f"the webhook URL names {name}, which is not set in the worker's environment")
        return secret
    return _PLACEHOLDER.sub(value, url)


def placeholders(url: str) -> list[str]:
    return _PLACEHOLDER.findall(url)


def _message(event: AlertEvent, key: str) -> dict:
    alert = event.alert
    rule = alert.rule
    status = "resolved" if event.kind == AlertEvent.RESOLVED else "firing"
    value = "not gaining" if alert.value is not None and alert.value >= 1e12 else alert.value
    return {
        "version": "1", "delivery_key": key, "status": status, "cluster": rule.cluster.name,
        "rule": rule.name, "kind": rule.kind, "subject": alert.subject, "value": value,
        "threshold": rule.threshold, "for_seconds": rule.for_seconds,
        "started_at": (alert.fired_at or alert.pending_since).isoformat(),
        "ended_at": alert.resolved_at.isoformat() if alert.resolved_at else None,
        "summary": f"[{status.upper()}] {rule.name} on {rule.cluster.name}: {alert.subject} "
                   f"({rule.get_kind_display()}, value {_readable(value)}, threshold {_readable(rule.threshold)})",
    }


def _readable(value) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return str(value)


def _generic(message: dict) -> dict:
    return message


def _slack(message: dict) -> dict:
    # Slack reads <...> as links and mentions: a group or topic name is shown as text.
    text = message["summary"].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return {"text": text, "delivery_key": message["delivery_key"]}


def _teams(message: dict) -> dict:
    """An Office 365 connector MessageCard, which Teams' incoming webhooks take."""
    return {"@type": "MessageCard", "@context": "https://schema.org/extensions", "summary": message["summary"],
            "themeColor": "2DC72D" if message["status"] == "resolved" else "D7000C",
            "title": message["summary"],
            "sections": [{"facts": [{"name": k, "value": str(message[k])} for k in
                                    ("cluster", "rule", "subject", "value", "threshold", "started_at",
                                     "delivery_key")]}]}


def _send_email(receiver: Receiver, message: dict, key: str) -> None:
    to = [a.strip() for a in receiver.emails.split(",") if a.strip()]
    body = "\n".join(f"{k}: {v}" for k, v in message.items() if k != "summary")
    # A group id may hold any character: no line break may reach a header.
    subject = "".join(c if c.isprintable() else " " for c in message["summary"])
    email = EmailMessage(subject=subject, body=body, to=to,
                         headers={"Message-ID": f"<{key}@kafka-console>"})
    email.send(fail_silently=False)

