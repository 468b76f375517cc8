"""Reads for the Alerts page, its JSON and the navigation badge."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from console.alerts.models import Alert, AlertEvent, AlertRule, Notification, Receiver, RuleValue, Silence
from console.clusters.models import Cluster
from console.errors import NotFound

HISTORY_ROWS = 100


@dataclass(frozen=True)
class RuleRow:
    rule: AlertRule
    values: tuple[float, ...]            # the sparkline, oldest first
    open_alerts: int
    firing: int                          # firing and not silenced
    silenced: int                        # firing, under an active silence


@dataclass(frozen=True)
class FiringCounts:
    """The navigation badge's numbers: a silenced alert is not counted as firing (nobody is to
    act on it until its silence ends), but is counted apart, so that the badge's HTML changes
    when one resolves or its silence ends."""

    firing: int
    silenced: int


def _silences_covering(*, now) -> QuerySet:
    """The active silences of an alert in an outer query: its rule's, for every subject or its own
    (as services' notifications read them)."""
    return Silence.objects.filter(rule_id=OuterRef("rule_id"), until__gt=now).filter(
        Q(subject="") | Q(subject=OuterRef("subject")))


def _open_alerts(*, now) -> QuerySet:
    """Open alerts, each with `silenced_until`: the latest end of the silences covering it, or None."""
    return Alert.objects.filter(open=True).annotate(
        silenced_until=Subquery(_silences_covering(now=now).order_by("-until").values("until")[:1]))


def firing_counts(*, cluster_id: int) -> FiringCounts:
    firing = Alert.objects.filter(rule__cluster_id=cluster_id, state=Alert.FIRING, open=True).annotate(
        silenced=Exists(_silences_covering(now=timezone.now())))
    silenced = firing.filter(silenced=True).count()
    return FiringCounts(firing=firing.count() - silenced, silenced=silenced)


def firing_count(*, cluster_id: int) -> int:
    """Alerts firing that no silence covers: what someone has to look at."""
    return firing_counts(cluster_id=cluster_id).firing


def rule_rows(*, cluster: Cluster) -> list[RuleRow]:
    rules = list(AlertRule.objects.filter(cluster=cluster).prefetch_related("receivers"))
    values: dict[int, list[float]] = {r.pk: [] for r in rules}
    for rule_id, value in RuleValue.objects.filter(rule__in=rules).order_by("at").values_list("rule_id", "value"):
        values[rule_id].append(value)
    open_alerts = list(_open_alerts(now=timezone.now()).filter(rule__in=rules)
                       .values_list("rule_id", "state", "silenced_until"))

    def firing(rule_id: int, *, silenced: bool) -> int:
        return sum(1 for rid, state, until in open_alerts
                   if rid == rule_id and state == Alert.FIRING and (until is not None) == silenced)

    return [RuleRow(rule=r, values=tuple(values[r.pk]),
                    open_alerts=sum(1 for rid, _, _ in open_alerts if rid == r.pk),
                    firing=firing(r.pk, silenced=False), silenced=firing(r.pk, silenced=True))
            for r in rules]


def alerts_open(*, cluster: Cluster) -> list[Alert]:
    """Pending and firing alerts, each with `silenced_until` (None when no silence covers it)."""
    return list(_open_alerts(now=timezone.now()).filter(rule__cluster=cluster)
                .select_related("rule", "acknowledged_by").order_by("state", "-pending_since"))


def history(*, cluster: Cluster, limit: int = HISTORY_ROWS) -> list[AlertEvent]:
    return list(AlertEvent.objects.filter(alert__rule__cluster=cluster)
                .select_related("alert__rule").order_by("-at", "-pk")[:limit])


def silences_active(*, cluster: Cluster) -> list[Silence]:
    return list(Silence.objects.filter(rule__cluster=cluster, until__gt=timezone.now()).select_related("rule"))


def receivers_all() -> list[Receiver]:
    return list(Receiver.objects.all())


def notifications_recent(*, cluster: Cluster, limit: int = 50) -> list[Notification]:
    return list(Notification.objects.filter(event__alert__rule__cluster=cluster)
                .select_related("receiver", "event__alert__rule").order_by("-pk")[:limit])


def rule_get(*, cluster: Cluster, rule_id: int) -> AlertRule:
    try:
        return AlertRule.objects.get(cluster=cluster, pk=rule_id)
    except AlertRule.DoesNotExist:
        raise NotFound(f"No alert rule {rule_id} on cluster {cluster.name}.") from None


def alert_get(*, cluster: Cluster, alert_id: int) -> Alert:
    try:
        return Alert.objects.select_related("rule__cluster").get(rule__cluster=cluster, pk=alert_id)
    except Alert.DoesNotExist:
        raise NotFound(f"No alert {alert_id} on cluster {cluster.name}.") from None


def receiver_get(*, receiver_id: int) -> Receiver:
    try:
        return Receiver.objects.get(pk=receiver_id)
    except Receiver.DoesNotExist:
        raise NotFound(f"No receiver {receiver_id}.") from None


def silence_get(*, cluster: Cluster, silence_id: int) -> Silence:
    try:
        return Silence.objects.select_related("rule__cluster").get(rule__cluster=cluster, pk=silence_id)
    except Silence.DoesNotExist:
        raise NotFound(f"No silence {silence_id} on cluster {cluster.name}.") from None
