"""One evaluation round at a time, on real observations of a real engine: pending, firing,
resolved, de-duplication, `for:`, silences, acknowledgement, and the outbox rows."""
from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from console.accounts.models import AuditLogEntry
from console.alerts import services
from console.alerts.models import Alert, AlertEvent, AlertRule, Notification, RuleValue
from console.errors import InvalidInput
from tests.console.alerts.conftest import make_rule, observe
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit
from tests.support.partition_io import send_values

pytestmark = pytest.mark.django_db


@pytest.fixture
def lagging(cluster, unique_topic):
    """A topic of 10 records and a group that committed 3 of them: lag 7."""
    topic = make_topic(cluster, unique_topic())
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 10)
    group = f"{topic}-group"
    commit(cluster, group, {(topic, 0): 3})
    return topic, group


def kinds(alert) -> list[str]:
    return list(alert.events.order_by("at", "pk").values_list("kind", flat=True))


def test_a_lag_rule_fires_notifies_once_and_resolves(cluster, lagging, webhook_row):
    topic, group = lagging
    rule = make_rule(cluster, kind=AlertRule.GROUP_LAG, target_type=AlertRule.EXACT, target=group, threshold=5,
                     receivers=[webhook_row])
    assert services.alerts_evaluate(cluster=cluster, observation=observe(cluster))["firing"] == 1
    alert = Alert.objects.get(rule=rule)
    assert (alert.subject, alert.state, alert.value) == (group, Alert.FIRING, 7.0)
    # Still breaching: the same alert, no new event, no new notification (de-duplication).
    services.alerts_evaluate(cluster=cluster, observation=observe(cluster))
    assert Alert.objects.filter(rule=rule).count() == 1
    assert Notification.objects.count() == 1
    commit(cluster, group, {(topic, 0): 10})
    assert services.alerts_evaluate(cluster=cluster, observation=observe(cluster))["resolved"] == 1
    alert.refresh_from_db()
    assert (alert.state, alert.open) == (Alert.RESOLVED, False)
    assert kinds(alert) == ["pending", "firing", "resolved"]
    assert sorted(Notification.objects.values_list("event__kind", flat=True)) == ["firing", "resolved"]
    rule.refresh_from_db()
    assert rule.last_fired_at is not None and rule.last_value == 0
    assert list(RuleValue.objects.filter(rule=rule).values_list("value", flat=True)) == [7.0, 7.0, 0.0]


def test_for_holds_an_alert_pending_and_a_cleared_one_tells_nobody(cluster, lagging, webhook_row):
    topic, group = lagging
    rule = make_rule(cluster, kind=AlertRule.GROUP_LAG, target_type=AlertRule.PREFIX, target=group[:-3],
                     threshold=5, for_seconds=60, receivers=[webhook_row])
    start = timezone.now()
    observation = observe(cluster)
    services.alerts_evaluate(cluster=cluster, observation=observation, now=start)
    assert Alert.objects.get(rule=rule).state == Alert.PENDING
    services.alerts_evaluate(cluster=cluster, observation=observation, now=start + dt.timedelta(seconds=30))
    assert Alert.objects.get(rule=rule).state == Alert.PENDING
    commit(cluster, group, {(topic, 0): 10})
    services.alerts_evaluate(cluster=cluster, observation=observe(cluster), now=start + dt.timedelta(seconds=40))
    alert = Alert.objects.get(rule=rule)
    assert kinds(alert) == ["pending", "cleared"] and not alert.open
    assert not Notification.objects.exists()


def test_the_alert_fires_once_it_held_for_its_duration(cluster, lagging):
    _, group = lagging
    rule = make_rule(cluster, kind=AlertRule.GROUP_LAG, target_type=AlertRule.REGEX, target=r".*-group",
                     threshold=5, for_seconds=60)
    start = timezone.now()
    observation = observe(cluster)
    services.alerts_evaluate(cluster=cluster, observation=observation, now=start)
    services.alerts_evaluate(cluster=cluster, observation=observation, now=start + dt.timedelta(seconds=61))
    alert = Alert.objects.get(rule=rule, subject=group)
    assert alert.state == Alert.FIRING and alert.fired_at == start + dt.timedelta(seconds=61)


def test_a_silenced_alert_fires_in_the_history_but_tells_nobody(cluster, lagging, webhook_row, users):
    _, group = lagging
    rule = make_rule(cluster, kind=AlertRule.GROUP_LAG, target_type=AlertRule.EXACT, target=group, threshold=5,
                     receivers=[webhook_row])
    services.silence_create(actor=users["operator"], rule=rule, subject=group,
                            until=timezone.now() + dt.timedelta(hours=1), reason="deploying")
    services.alerts_evaluate(cluster=cluster, observation=observe(cluster))
    firing = AlertEvent.objects.get(alert__rule=rule, kind=AlertEvent.FIRING)
    assert firing.silenced and not Notification.objects.exists()
    entry = AuditLogEntry.objects.get(action="alert_rule.silence")
    assert (entry.actor_name, entry.target, entry.details["reason"]) == ("operator", rule.name, "deploying")


def test_acknowledging_is_recorded_and_audited(cluster, lagging, users):
    _, group = lagging
    rule = make_rule(cluster, kind=AlertRule.GROUP_LAG, target_type=AlertRule.EXACT, target=group, threshold=5)
    services.alerts_evaluate(cluster=cluster, observation=observe(cluster))
    alert = services.alert_acknowledge(actor=users["operator"], alert=Alert.objects.get(rule=rule))
    assert alert.acknowledged_by == users["operator"]
    assert kinds(alert)[-1] == AlertEvent.ACKNOWLEDGED
    assert AuditLogEntry.objects.filter(action="alert.acknowledge", actor_name="operator").exists()
    alert.open = False
    with pytest.raises(InvalidInput):
        services.alert_acknowledge(actor=users["operator"], alert=alert)


def test_burrow_status_and_time_lag_rules_on_successive_observations(cluster, lagging):
    topic, group = lagging
    stopped = make_rule(cluster, name="stopped", kind=AlertRule.GROUP_STATUS, target_type=AlertRule.EXACT,
                        target=group, statuses="STOP,STALL")
    behind = make_rule(cluster, name="behind", kind=AlertRule.GROUP_TIME_LAG, target_type=AlertRule.EXACT,
                       target=group, threshold=0)
    slow = make_rule(cluster, name="slow", kind=AlertRule.CATCH_UP, target_type=AlertRule.EXACT, target=group,
                     threshold=3600)
    services.alerts_evaluate(cluster=cluster, observation=observe(cluster))
    assert not Alert.objects.filter(rule=stopped).exists()          # one observation: too early to judge
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 5)
    services.alerts_evaluate(cluster=cluster, observation=observe(cluster))
    assert Alert.objects.get(rule=stopped).value == 4.0              # STOP: no members, no commit, lag grew
    assert Alert.objects.get(rule=behind).value > 0
    assert Alert.objects.get(rule=slow).value == float("inf")        # not gaining


def test_under_replicated_offline_and_broker_down_rules(private_cluster, unique_topic):
    from console.brokers.services import broker_start, broker_stop
    from console.accounts.services import user_create

    operator = user_create(username="op", password="op-password-1", role="operator")
    topic = make_topic(private_cluster, unique_topic(), assignments={0: [2, 1]})
    make_topic(private_cluster, unique_topic(), assignments={0: [2]})
    under = make_rule(private_cluster, name="urp", kind=AlertRule.UNDER_REPLICATED, threshold=0,
                      target_type=AlertRule.EXACT, target=topic)
    offline = make_rule(private_cluster, name="offline", kind=AlertRule.OFFLINE, threshold=0)
    down = make_rule(private_cluster, name="down", kind=AlertRule.BROKER_DOWN)
    broker_stop(cluster=private_cluster, actor=operator, broker_id=2)
    try:
        services.alerts_evaluate(cluster=private_cluster, observation=observe(private_cluster))
        assert Alert.objects.get(rule=under).subject == topic
        assert Alert.objects.get(rule=offline).value == 1.0
        assert Alert.objects.get(rule=down).subject == "broker 2"
    finally:
        broker_start(cluster=private_cluster, actor=operator, broker_id=2)


def test_rule_changes_are_audited(cluster, users):
    rule = services.rule_save(actor=users["operator"], cluster=cluster, rule=None, receivers=[], fields={
        "name": "lag", "kind": AlertRule.GROUP_LAG, "target_type": AlertRule.ALL, "target": "", "threshold": 100.0,
        "statuses": "", "for_seconds": 30, "enabled": True})
    services.rule_save(actor=users["operator"], cluster=cluster, rule=rule, receivers=[],
                       fields={"threshold": 200.0})
    services.rule_delete(actor=users["operator"], rule=rule)
    assert list(AuditLogEntry.objects.order_by("pk").values_list("action", flat=True)) == [
        "alert_rule.create", "alert_rule.update", "alert_rule.delete"]


def test_switching_a_rule_off_ends_its_alerts_without_telling_anyone(cluster, lagging, webhook_row, users):
    _, group = lagging
    rule = make_rule(cluster, kind=AlertRule.GROUP_LAG, target_type=AlertRule.EXACT, target=group, threshold=5,
                     receivers=[webhook_row])
    services.alerts_evaluate(cluster=cluster, observation=observe(cluster))
    assert Notification.objects.count() == 1                        # the firing
    services.rule_save(actor=users["operator"], cluster=cluster, rule=rule, receivers=[webhook_row],
                       fields={"enabled": False})
    alert = Alert.objects.get(rule=rule)
    assert not alert.open and kinds(alert)[-1] == AlertEvent.CLEARED
    assert Notification.objects.count() == 1
    assert AuditLogEntry.objects.get(action="alert_rule.update").details["alerts_ended"] == 1
