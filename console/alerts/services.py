"""Writes for alerts: rules, receivers, silences and acknowledgements (operator role, audited),
and one evaluation round of a cluster's rules on its observation (the Celery beat task's).

The evaluation round, per rule and subject (evaluation.py says which subjects breach):
- a breach with no open alert opens one: pending, or firing at once when the rule has no
  `for:`; a pending alert fires once it has breached for `for_seconds` (Prometheus's `for:`);
- an open alert whose subject no longer breaches ends: a firing one is resolved, a pending
  one cleared (nobody was told it started, so nobody is told it ended);
- firing and resolved events notify each of the rule's receivers once: a Notification row
  per receiver, written in the event's transaction (the outbox, console/alerts/delivery.py),
  unless a silence covers the rule and subject; a silenced event is kept in the history.
Alerts stay open across rounds (one per rule and subject: de-duplication), so a flapping
value notifies once per change, never once per round.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from console.accounts.services import audited
from console.alerts import delivery, evaluation
from console.alerts.models import Alert, AlertEvent, AlertRule, Notification, Receiver, RuleValue, Silence
from console.clusters.models import Cluster
from console.errors import InvalidInput
from console.events import notify_on_commit

SUBJECT_CHARS = 1000
SPARKLINE_POINTS = 60             # rounds of history in a rule's sparkline


# --- rules, receivers, silences, acknowledgements --------------------------------------------

def rule_save(*, actor, cluster: Cluster, rule: AlertRule | None, fields: dict,
              receivers: Iterable[Receiver]) -> AlertRule:
    """Create (rule None) or change a rule from validated form fields."""
    creating = rule is None
    action = "alert_rule.create" if creating else "alert_rule.update"
    with audited(actor=actor, cluster=cluster, action=action, target=fields.get("name", ""),
                 details={k: v for k, v in fields.items()}) as details, transaction.atomic():
        name = fields.get("name", rule.name if rule else "")
        if AlertRule.objects.filter(cluster=cluster, name=name).exclude(pk=rule.pk if rule else None).exists():
            raise InvalidInput(f"This cluster already has a rule named {name!r}: choose another name.")
        rule = rule or AlertRule(cluster=cluster)
        for name, value in fields.items():
            setattr(rule, name, value)
        rule.save()
        rule.receivers.set(receivers)
        if not rule.enabled:
            details["alerts_ended"] = _end_open_alerts(rule)
        details["receivers"] = [r.name for r in rule.receivers.all()]
        details["rule_id"] = rule.pk
        notify_on_commit("alerts.changed", {"cluster": cluster.pk})
    return rule


def _end_open_alerts(rule: AlertRule) -> int:
    """A rule switched off ends its open alerts, as "cleared": nobody is told (it was not the
    subject that recovered)."""
    now = timezone.now()
    ended = list(Alert.objects.filter(rule=rule, open=True))
    Alert.objects.filter(pk__in=[a.pk for a in ended]).update(state=Alert.RESOLVED, open=False, resolved_at=now)
    AlertEvent.objects.bulk_create([AlertEvent(alert=a, kind=AlertEvent.CLEARED, value=a.value, at=now,
                                               by="(rule switched off)") for a in ended])
    return len(ended)


def rule_delete(*, actor, rule: AlertRule) -> None:
    with audited(actor=actor, cluster=rule.cluster, action="alert_rule.delete", target=rule.name,
                 details={"rule_id": rule.pk}), transaction.atomic():
        cluster_id = rule.cluster_id
        rule.delete()
        notify_on_commit("alerts.changed", {"cluster": cluster_id})


def receiver_save(*, actor, cluster: Cluster, fields: dict) -> Receiver:
    with audited(actor=actor, cluster=cluster, action="alert_receiver.create", target=fields.get("name", ""),
                 details={"kind": fields.get("kind"), "url": fields.get("url", ""),
                          "emails": fields.get("emails", "")}):
        if Receiver.objects.filter(name=fields.get("name", "")).exists():
            raise InvalidInput(f"A receiver named {fields.get('name')!r} exists already: choose another name.")
        return Receiver.objects.create(**fields)


def receiver_delete(*, actor, cluster: Cluster, receiver: Receiver) -> None:
    """Rules keep their other receivers; notifications not yet sent to this one are dropped with it."""
    with audited(actor=actor, cluster=cluster, action="alert_receiver.delete", target=receiver.name,
                 details={"kind": receiver.kind, "rules": [r.name for r in receiver.rules.all()]}):
        receiver.delete()


def silence_create(*, actor, rule: AlertRule, subject: str, until: dt.datetime, reason: str) -> Silence:
    if until <= timezone.now():
        raise InvalidInput("A silence must end in the future.")
    with audited(actor=actor, cluster=rule.cluster, action="alert_rule.silence", target=rule.name,
                 details={"subject": subject, "until": until.isoformat(), "reason": reason}):
        silence = Silence.objects.create(rule=rule, subject=subject, until=until, reason=reason,
                                         created_by=actor.username)
        notify_on_commit("alerts.changed", {"cluster": rule.cluster_id})
        return silence


def silence_end(*, actor, silence: Silence) -> None:
    with audited(actor=actor, cluster=silence.rule.cluster, action="alert_rule.unsilence", target=silence.rule.name,
                 details={"subject": silence.subject, "until": silence.until.isoformat()}):
        silence.until = timezone.now()
        silence.save(update_fields=["until"])


def alert_acknowledge(*, actor, alert: Alert) -> Alert:
    if not alert.open:
        raise InvalidInput("This alert has ended; there is nothing to acknowledge.")
    with audited(actor=actor, cluster=alert.rule.cluster, action="alert.acknowledge", target=alert.rule.name,
                 details={"subject": alert.subject, "alert_id": alert.pk}), transaction.atomic():
        now = timezone.now()
        alert.acknowledged_by, alert.acknowledged_at = actor, now
        alert.save(update_fields=["acknowledged_by", "acknowledged_at"])
        AlertEvent.objects.create(alert=alert, kind=AlertEvent.ACKNOWLEDGED, value=alert.value, at=now,
                                  by=actor.username)
        notify_on_commit("alerts.changed", {"cluster": alert.rule.cluster_id})
    return alert


# --- evaluation ------------------------------------------------------------------------------

@dataclass
class _Round:
    """What one evaluation round changes, written in a handful of bulk statements at its end."""

    now: dt.datetime
    silences: list
    new_alerts: list = field(default_factory=list)
    fired: dict = field(default_factory=dict)                 # pk -> Alert that was pending before this round
    ended: dict = field(default_factory=dict)                 # pk -> Alert
    events: list = field(default_factory=list)                # (alert, kind, value, notify)
    changes: dict = field(default_factory=lambda: {"pending": 0, "firing": 0, "resolved": 0, "cleared": 0})


def alerts_evaluate(*, cluster: Cluster, observation, now: dt.datetime | None = None) -> dict[str, int]:
    """One round over the cluster's enabled rules; returns counts of what changed.

    An open alert's value is written when its state changes (the page shows the value it
    fired with); the rule's current worst value is written every round, with its sparkline."""
    now = now or timezone.now()
    rules = list(AlertRule.objects.filter(cluster=cluster, enabled=True).prefetch_related("receivers"))
    if not rules:
        return {}
    targets = evaluation.Targets()
    found = {rule.pk: evaluation.breaches(rule, observation, now.timestamp(), targets) for rule in rules}
    by_pk = {rule.pk: rule for rule in rules}
    open_alerts: dict[tuple[int, str], Alert] = {}
    for alert in Alert.objects.filter(rule__in=rules, open=True):
        alert.rule = by_pk[alert.rule_id]          # the rule with its receivers already fetched
        open_alerts[alert.rule_id, alert.subject] = alert
    work = _Round(now=now, silences=list(Silence.objects.filter(rule__in=rules, until__gt=now)))
    by_rule: dict[int, list[Alert]] = {}
    for (rule_id, _), alert in open_alerts.items():
        by_rule.setdefault(rule_id, []).append(alert)
    points = []
    for rule in rules:
        breaching = found[rule.pk]
        still_open = {a.subject: a for a in by_rule.get(rule.pk, ())}
        for subject, value in breaching.items():
            subject = subject[:SUBJECT_CHARS]      # group ids may be longer than the column
            _breach(work, rule, still_open.pop(subject, None), subject, value)
        for alert in still_open.values():
            _end(work, alert)
        rule.last_value, rule.last_evaluated_at = evaluation.worst(rule, breaching), now
        points.append(RuleValue(rule=rule, at=now, value=rule.last_value))
    with transaction.atomic():
        _write(work, rules, points, cluster)
    return work.changes


def _breach(work: _Round, rule, alert, subject: str, value: float) -> None:
    if alert is None:
        alert = Alert(rule=rule, subject=subject, state=Alert.PENDING, value=value, pending_since=work.now)
        work.new_alerts.append(alert)
        work.events.append((alert, AlertEvent.PENDING, value, False))
        work.changes["pending"] += 1
    if alert.state == Alert.PENDING and (work.now - alert.pending_since).total_seconds() >= rule.for_seconds:
        alert.state, alert.fired_at, alert.value = Alert.FIRING, work.now, value
        rule.last_fired_at = work.now
        work.events.append((alert, AlertEvent.FIRING, value, True))
        work.changes["firing"] += 1
        if alert.pk:
            work.fired[alert.pk] = alert


def _end(work: _Round, alert) -> None:
    firing = alert.state == Alert.FIRING
    alert.state, alert.open, alert.resolved_at = Alert.RESOLVED, False, work.now
    work.ended[alert.pk] = alert
    work.events.append((alert, AlertEvent.RESOLVED if firing else AlertEvent.CLEARED, alert.value, firing))
    work.changes["resolved" if firing else "cleared"] += 1


def _write(work: _Round, rules: list[AlertRule], points: list[RuleValue], cluster: Cluster) -> None:
    # Django's bulk_update writes one CASE per field and row: seconds for a few thousand alerts.
    # A round's changes share their state and time, so each kind is one UPDATE (values: executemany).
    Alert.objects.bulk_create(work.new_alerts, batch_size=500)           # sets their pks (RETURNING)
    _in_chunks(Alert.objects.all(), list(work.fired), state=Alert.FIRING, fired_at=work.now)
    _update_many(Alert, ["value"], [(a.value, a.pk) for a in work.fired.values()])
    _in_chunks(Alert.objects.all(), list(work.ended), state=Alert.RESOLVED, open=False, resolved_at=work.now)
    events = [AlertEvent(alert=alert, kind=kind, value=value, at=work.now,
                         silenced=notify and _silenced(work.silences, alert))
              for alert, kind, value, notify in work.events]
    AlertEvent.objects.bulk_create(events, batch_size=500)
    notifications = [Notification(event=event, receiver=receiver, next_attempt_at=work.now)
                     for event, (alert, _, _, notify) in zip(events, work.events) if notify and not event.silenced
                     for receiver in alert.rule.receivers.all()]
    Notification.objects.bulk_create(notifications, batch_size=500)
    RuleValue.objects.bulk_create(points, batch_size=500)
    # The sparkline keeps SPARKLINE_POINTS rounds: older points of the cluster's rules go, in one statement.
    horizon = work.now - dt.timedelta(seconds=settings.ALERTS_EVALUATION_SECONDS * SPARKLINE_POINTS)
    RuleValue.objects.filter(rule__cluster=cluster, at__lt=horizon).delete()
    adapt = connection.ops.adapt_datetimefield_value
    _update_many(AlertRule, ["last_value", "last_evaluated_at", "last_fired_at"],
                 [(r.last_value, adapt(r.last_evaluated_at), adapt(r.last_fired_at), r.pk) for r in rules])
    if notifications:
        ids = [n.pk for n in notifications]
        transaction.on_commit(lambda: delivery.queue_deliveries(notification_ids=ids))
    if any(work.changes.values()):
        notify_on_commit("alerts.changed", {"cluster": cluster.pk})


def _in_chunks(queryset, pks: list[int], **values) -> None:
    for i in range(0, len(pks), 500):
        queryset.filter(pk__in=pks[i:i + 500]).update(**values)


def _update_many(model, fields: list[str], rows: list[tuple]) -> None:
    """UPDATE model SET fields... WHERE id = ... for each row (values then pk), one executemany."""
    if not rows:
        return
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(model._meta.get_field(f).column)} = %s" for f in fields)
    with connection.cursor() as cursor:
        cursor.executemany(f"UPDATE {quote(model._meta.db_table)} SET {assignments} WHERE {quote('id')} = %s", rows)


def _silenced(silences, alert) -> bool:
    return any(s.rule_id == alert.rule_id and s.subject in ("", alert.subject) for s in silences)
