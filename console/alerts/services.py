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

from django.db import transaction
from django.utils import timezone

from console.accounts.services import audited
from console.alerts import evaluation
from console.alerts.models import Alert, AlertEvent, AlertRule, Notification, Receiver, RuleValue, Silence
from console.clusters.models import Cluster
from console.errors import InvalidInput
from console.events import notify_on_commit

SPARKLINE_POINTS = 60


# --- rules, receivers, silences, acknowledgements --------------------------------------------

def rule_save(*, actor, cluster: Cluster, rule: AlertRule | None, fields: dict,
              receivers: Iterable[Receiver]) -> AlertRule:
    """Create (rule None) or change a rule from validated form fields."""
    creating = rule is None
    action = "alert_rule.create" if creating else "alert_rule.update"
    with audited(actor=actor, cluster=cluster, action=action, target=fields.get("name", ""),
                 details={k: v for k, v in fields.items()}) as details, transaction.atomic():
        rule = rule or AlertRule(cluster=cluster)
        for name, value in fields.items():
            setattr(rule, name, value)
        rule.save()
        rule.receivers.set(receivers)
        details["receivers"] = [r.name for r in rule.receivers.all()]
        details["rule_id"] = rule.pk
        notify_on_commit("alerts.changed", {"cluster": cluster.pk})
    return rule


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
        return Receiver.objects.create(**fields)


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

def alerts_evaluate(*, cluster: Cluster, observation, now: dt.datetime | None = None) -> dict[str, int]:
    """One round over the cluster's enabled rules; returns counts of what changed."""
    now = now or timezone.now()
    rules = list(AlertRule.objects.filter(cluster=cluster, enabled=True).prefetch_related("receivers"))
    if not rules:
        return {}
    found = {rule.pk: evaluation.breaches(rule, observation, now.timestamp()) for rule in rules}
    open_alerts: dict[tuple[int, str], Alert] = {
        (a.rule_id, a.subject): a for a in Alert.objects.filter(rule__in=rules, open=True)}
    silences = list(Silence.objects.filter(rule__in=rules, until__gt=now))
    changes = {"pending": 0, "firing": 0, "resolved": 0, "cleared": 0}
    with transaction.atomic():
        for rule in rules:
            breaching = found[rule.pk]
            for subject, value in breaching.items():
                _breach(rule, open_alerts.pop((rule.pk, subject), None), subject, value, now, silences, changes)
            for key in [k for k in open_alerts if k[0] == rule.pk]:
                _end(rule, open_alerts.pop(key), now, silences, changes)
            _record_value(rule, evaluation.worst(rule, breaching), now)
        if any(changes.values()):
            notify_on_commit("alerts.changed", {"cluster": cluster.pk})
    return changes


def _breach(rule, alert, subject, value, now, silences, changes) -> None:
    if alert is None:
        alert = Alert.objects.create(rule=rule, subject=subject, state=Alert.PENDING, value=value, pending_since=now)
        _event(alert, AlertEvent.PENDING, value, now, silences=(), notify=False)
        changes["pending"] += 1
    if alert.state == Alert.PENDING and (now - alert.pending_since).total_seconds() >= rule.for_seconds:
        alert.state, alert.fired_at = Alert.FIRING, now
        rule.last_fired_at = now
        _event(alert, AlertEvent.FIRING, value, now, silences=silences, notify=True)
        changes["firing"] += 1
    alert.value = value
    alert.save(update_fields=["state", "fired_at", "value"])


def _end(rule, alert, now, silences, changes) -> None:
    firing = alert.state == Alert.FIRING
    alert.state, alert.open, alert.resolved_at = Alert.RESOLVED, False, now
    alert.save(update_fields=["state", "open", "resolved_at"])
    _event(alert, AlertEvent.RESOLVED if firing else AlertEvent.CLEARED, alert.value, now, silences=silences,
           notify=firing)
    changes["resolved" if firing else "cleared"] += 1


def _event(alert, kind, value, now, *, silences, notify: bool) -> AlertEvent:
    silenced = notify and any(s.rule_id == alert.rule_id and s.subject in ("", alert.subject) for s in silences)
    event = AlertEvent.objects.create(alert=alert, kind=kind, value=value, at=now, silenced=silenced)
    if notify and not silenced:
        receivers = list(alert.rule.receivers.all())
        Notification.objects.bulk_create([Notification(event=event, receiver=r, next_attempt_at=now)
                                          for r in receivers])
        if receivers:
            from console.alerts.tasks import queue_deliveries
            transaction.on_commit(lambda: queue_deliveries(event_id=event.pk))
    return event


def _record_value(rule, value: float, now) -> None:
    RuleValue.objects.create(rule=rule, at=now, value=value)
    rule.last_value, rule.last_evaluated_at = value, now
    rule.save(update_fields=["last_value", "last_evaluated_at", "last_fired_at"])
    old = RuleValue.objects.filter(rule=rule).order_by("-at").values_list("pk", flat=True)[SPARKLINE_POINTS:]
    stale = list(old)
    if stale:
        RuleValue.objects.filter(pk__in=stale).delete()

