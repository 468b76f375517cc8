"""Reads for the Alerts page and the navigation badge: a silenced alert is not counted as
firing, and its row says until when it is silenced."""
from __future__ import annotations

import pytest

from console.alerts import selectors
from console.alerts.models import Alert, AlertRule
from tests.console.alerts.conftest import firing, make_rule, silence

pytestmark = pytest.mark.django_db


def test_silenced_alerts_are_counted_apart_from_the_firing_ones(offline):
    lag = make_rule(offline, name="lag", kind=AlertRule.GROUP_LAG, threshold=5)
    status = make_rule(offline, name="status", kind=AlertRule.GROUP_LAG, threshold=5)
    for subject in ("billing", "orders", "audit"):
        firing(lag, subject)
    firing(status, "billing")
    firing(status, "pending-one", state=Alert.PENDING)
    assert selectors.firing_counts(cluster_id=offline.pk) == selectors.FiringCounts(firing=4, silenced=0)

    silence(lag, subject="billing")                        # one subject of one rule
    silence(lag, subject="orders", hours=-1)               # ended: covers nothing
    silence(status, subject="")                            # every subject of the rule
    assert selectors.firing_counts(cluster_id=offline.pk) == selectors.FiringCounts(firing=2, silenced=2)
    assert selectors.firing_count(cluster_id=offline.pk) == 2

    rows = {r.rule.name: r for r in selectors.rule_rows(cluster=offline)}
    assert (rows["lag"].firing, rows["lag"].silenced, rows["lag"].open_alerts) == (2, 1, 3)
    assert (rows["status"].firing, rows["status"].silenced, rows["status"].open_alerts) == (0, 1, 2)


def test_an_open_alert_carries_the_end_of_the_longest_silence_covering_it(offline):
    rule = make_rule(offline, name="lag", kind=AlertRule.GROUP_LAG, threshold=5)
    firing(rule, "billing")
    firing(rule, "orders")
    short, long = silence(rule, subject="billing", hours=1), silence(rule, subject="", hours=3)
    other = make_rule(offline, name="other", kind=AlertRule.GROUP_LAG, threshold=5)
    firing(other, "billing")
    silence(other, subject="orders")                        # another subject: not this alert's
    until = {(a.rule.name, a.subject): a.silenced_until for a in selectors.alerts_open(cluster=offline)}
    assert until == {("lag", "billing"): long.until, ("lag", "orders"): long.until, ("other", "billing"): None}
    assert short.until < long.until

