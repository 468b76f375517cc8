"""The Alerts page and its actions over HTTP: roles, CSRF, server-side validation (RE2 regexes,
thresholds, webhook URLs), the JSON API, and the badge's first count in the navigation."""
from __future__ import annotations

import pytest
from django.test import Client

from console.accounts.models import AuditLogEntry
from console.alerts import services
from console.alerts.models import Alert, AlertRule, Receiver, Silence
from tests.console.alerts.conftest import firing, make_rule, observe, silence
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit
from tests.support.partition_io import send_values

pytestmark = pytest.mark.django_db

RULE = {"name": "billing behind", "kind": "group_lag", "target_type": "prefix", "target": "billing-",
        "threshold": "1000", "for_seconds": "60", "enabled": "on"}


def test_viewers_read_the_page_and_cannot_change_rules(cluster, viewer_client):
    page = viewer_client.get(f"/clusters/{cluster.pk}/alerts/")
    assert page.status_code == 200 and b"Add a rule" not in page.content
    assert viewer_client.post(f"/clusters/{cluster.pk}/alerts/rules/add", RULE).status_code == 403
    assert not AlertRule.objects.exists()


def test_an_operator_creates_a_rule_with_csrf_and_it_is_audited(cluster, users):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["operator"])
    assert client.post(f"/clusters/{cluster.pk}/alerts/rules/add", RULE).status_code == 403     # no CSRF token
    form = client.get(f"/clusters/{cluster.pk}/alerts/rules/add")
    token = form.cookies["csrftoken"].value
    answer = client.post(f"/clusters/{cluster.pk}/alerts/rules/add", {**RULE, "csrfmiddlewaretoken": token})
    assert answer.status_code == 302
    rule = AlertRule.objects.get()
    assert (rule.target_type, rule.target, rule.threshold, rule.for_seconds) == ("prefix", "billing-", 1000, 60)
    entry = AuditLogEntry.objects.get(action="alert_rule.create")
    assert (entry.actor_name, entry.target) == ("operator", "billing behind")


@pytest.mark.parametrize("fields, field, message", [
    ({"target_type": "regex", "target": "billing-(("}, "target", "not a regular expression RE2 accepts"),
    ({"target_type": "regex", "target": r"(a)\1"}, "target", "not a regular expression RE2 accepts"),
    ({"target_type": "exact", "target": ""}, "target", "Give the name"),
    ({"kind": "broker_down", "target_type": "prefix"}, "target_type", "whole cluster"),
    ({"kind": "log_dir_usage", "target_type": "all", "threshold": "85"}, "threshold", "between 0 and 1"),
    ({"kind": "group_status", "threshold": ""}, "statuses", "Choose the statuses"),
    ({"threshold": "-1"}, "threshold", "greater than or equal to 0"),
    ({"name": "bad\x07name"}, "name", "control characters"),
])
def test_bad_rules_are_refused_with_a_sentence(cluster, operator_client, fields, field, message):
    answer = operator_client.post(f"/clusters/{cluster.pk}/alerts/rules/add", {**RULE, **fields})
    assert answer.status_code == 400
    assert message in " ".join(answer.context["form"].errors[field])
    assert not AlertRule.objects.exists()


def test_webhook_receivers_keep_secrets_as_placeholders(cluster, operator_client):
    bad = operator_client.post(f"/clusters/{cluster.pk}/alerts/receivers/add",
                               {"name": "x", "kind": "slack", "url": "https://hooks.example/{SECRET_KEY}"})
    assert bad.status_code == 400 and "CONSOLE_SECRET_" in " ".join(bad.context["form"].errors["url"])
    good = operator_client.post(f"/clusters/{cluster.pk}/alerts/receivers/add",
                                {"name": "slack", "kind": "slack",
                                 "url": "https://hooks.example/services/{CONSOLE_SECRET_SLACK}"})
    assert good.status_code == 302
    assert Receiver.objects.get().url == "https://hooks.example/services/{CONSOLE_SECRET_SLACK}"
    mail = operator_client.post(f"/clusters/{cluster.pk}/alerts/receivers/add",
                                {"name": "mail", "kind": "email", "emails": "ops@example.com, not-an-address"})
    assert mail.status_code == 400


def test_firing_alerts_show_in_the_badge_page_and_json_and_can_be_silenced_and_acknowledged(
        cluster, operator_client, viewer_client, unique_topic):
    topic = make_topic(cluster, unique_topic())
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 10)
    group = f"{topic}-g"
    commit(cluster, group, {(topic, 0): 1})
    rule = make_rule(cluster, name="lagging", kind=AlertRule.GROUP_LAG, target_type=AlertRule.EXACT, target=group,
                     threshold=5)
    services.alerts_evaluate(cluster=cluster, observation=observe(cluster))
    services.alerts_evaluate(cluster=cluster, observation=observe(cluster))
    page = viewer_client.get(f"/clusters/{cluster.pk}/topics/").content.decode()
    assert 'data-firing="1"' in page                                  # the badge, on any cluster page
    alerts_page = viewer_client.get(f"/clusters/{cluster.pk}/alerts/").content.decode()
    assert 'data-state="firing"' in alerts_page and "<polyline" in alerts_page
    data = viewer_client.get(f"/api/clusters/{cluster.pk}/alerts").json()
    assert data["firing"] == 1 and data["rules"][0]["values"] == [9.0, 9.0]
    assert [e["kind"] for e in data["history"]] == ["firing", "pending"]

    alert = Alert.objects.get()
    assert viewer_client.post(f"/clusters/{cluster.pk}/alerts/{alert.pk}/acknowledge").status_code == 403
    assert operator_client.post(f"/clusters/{cluster.pk}/alerts/{alert.pk}/acknowledge").status_code == 302
    alert.refresh_from_db()
    assert alert.acknowledged_by.username == "operator"
    answer = operator_client.post(f"/clusters/{cluster.pk}/alerts/silences/add",
                                  {"rule": rule.pk, "subject": "", "hours": "2", "reason": "maintenance"})
    assert answer.status_code == 302
    assert Silence.objects.get().reason == "maintenance"
    page = viewer_client.get(f"/clusters/{cluster.pk}/topics/").content.decode()
    assert 'data-firing="0" data-silenced="1"' in page                 # silenced: no longer counted as firing
    assert viewer_client.get(f"/api/clusters/{cluster.pk}/alerts").json()["alerts"][0]["silenced_until"]
    assert {"alert.acknowledge", "alert_rule.silence"} <= set(AuditLogEntry.objects.values_list("action", flat=True))


def test_the_json_api_wants_a_login(cluster):
    assert Client().get(f"/api/clusters/{cluster.pk}/alerts").status_code == 401


def test_a_second_rule_or_receiver_of_the_same_name_is_refused_with_a_sentence(cluster, operator_client):
    assert operator_client.post(f"/clusters/{cluster.pk}/alerts/rules/add", RULE).status_code == 302
    again = operator_client.post(f"/clusters/{cluster.pk}/alerts/rules/add", RULE)
    assert again.status_code == 400
    assert "already has a rule named 'billing behind'" in " ".join(again.context["form"].non_field_errors())
    hook = {"name": "hook", "kind": "webhook", "url": "https://example.com/hook"}
    assert operator_client.post(f"/clusters/{cluster.pk}/alerts/receivers/add", hook).status_code == 302
    assert operator_client.post(f"/clusters/{cluster.pk}/alerts/receivers/add", hook).status_code == 400
    failed = AuditLogEntry.objects.filter(action="alert_rule.create", result=AuditLogEntry.FAILED)
    assert failed.count() == 1


def test_removing_a_receiver_needs_an_operator_and_is_audited(cluster, operator_client, viewer_client):
    receiver = Receiver.objects.create(name="hook", kind=Receiver.WEBHOOK, url="https://example.com/{CONSOLE_SECRET_X}")
    page = viewer_client.get(f"/clusters/{cluster.pk}/alerts/").content.decode()
    assert 'data-receiver="hook"' in page and "{CONSOLE_SECRET_X}" in page        # the placeholder, not a secret
    url = f"/clusters/{cluster.pk}/alerts/receivers/{receiver.pk}/delete"
    assert viewer_client.post(url).status_code == 403
    asked = operator_client.post(url)                         # no confirmation: a page that asks
    assert asked.status_code == 200 and b"Rules that use it stop telling it" in asked.content
    assert Receiver.objects.exists()
    assert operator_client.post(url, {"confirmed": "yes"}).status_code == 302
    assert not Receiver.objects.exists()
    assert AuditLogEntry.objects.get(action="alert_receiver.delete").target == "hook"


def test_the_page_badge_and_json_show_a_silenced_alert_as_silenced(offline, viewer_client):
    rule = make_rule(offline, name="billing behind", kind=AlertRule.GROUP_LAG, threshold=5, for_seconds=90)
    alert = firing(rule, "billing")
    quiet = firing(rule, "orders")
    orders = silence(rule, subject="orders")
    page = viewer_client.get(f"/clusters/{offline.pk}/alerts/").content.decode()
    assert 'data-firing="1" data-silenced="1">1</span>' in page            # the navigation badge

    row = page[page.index(f'data-alert="{quiet.pk}"'):]
    row = row[:row.index("</tr>")]
    assert f'data-silenced-until="{orders.until.isoformat()}"' in row and "silenced until <time" in row
    assert "status-stop" not in row                               # not shown as needing someone
    loud = page[page.index(f'data-alert="{alert.pk}"'):]
    assert "silenced until" not in loud[:loud.index("</tr>")] and "status-stop" in loud[:loud.index("</tr>")]
    rule_row = page[page.index('data-rule="billing behind"'):]
    rule_row = rule_row[:rule_row.index("</tr>")]
    assert "1 firing" in rule_row and "1 silenced" in rule_row and "1 min 30 s" in rule_row
    # The console's own time filters: local time with its offset, the age written by units.js.
    assert "data-when" in row and "minutes" not in page and "+0000" not in page

    silence(rule, subject="billing")
    page = viewer_client.get(f"/clusters/{offline.pk}/alerts/").content.decode()
    assert 'data-firing="0" data-silenced="2" title="2 firing alerts, silenced"' in page   # the navigation badge
    data = viewer_client.get(f"/api/clusters/{offline.pk}/alerts").json()
    assert (data["firing"], data["silenced"], data["rules"][0]["firing"], data["rules"][0]["silenced"]) == (0, 2, 0, 2)
    assert all(a["silenced_until"] for a in data["alerts"])


def test_the_rule_forms_for_field_says_what_it_does(offline, operator_client):
    page = operator_client.get(f"/clusters/{offline.pk}/alerts/rules/add").content.decode()
    assert "like the for: clause of a Prometheus alerting rule; 0 fires at once." in page
    assert "Prometheus&#x27;s for:." not in page
