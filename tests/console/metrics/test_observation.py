"""An observation of our engine reads each broker's uncleanable partitions from the broker
config the engine keeps for them, and a rule fires on them: on a real engine whose compacted
topic holds a corrupt batch its cleaner gives up on (tests/support/planted_batches.py)."""
from __future__ import annotations

import pytest

from console.alerts import services
from console.alerts.models import Alert, AlertRule
from console.metrics.selectors import observation_now
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db


def test_a_broker_whose_cleaner_gave_up_on_a_partition_fires_the_rule(poisoned_cluster, poisoned_engine):
    def reported():
        observation = observation_now(cluster=poisoned_cluster)
        return observation.uncleanable.get(0) and observation
    observation = wait_until(reported, timeout=60, message="the cleaner to give the partition up")
    assert observation.uncleanable == {0: (f"{poisoned_engine.topic}-0",)}
    rule = AlertRule.objects.create(cluster=poisoned_cluster, name="cleaner", kind=AlertRule.UNCLEANABLE)
    services.alerts_evaluate(cluster=poisoned_cluster, observation=observation)
    alert = Alert.objects.get(rule=rule)
    assert (alert.subject, alert.state, alert.value) == ("broker 0", Alert.FIRING, 1.0)


def test_every_broker_of_a_healthy_engine_reports_none(cluster):
    assert observation_now(cluster=cluster).uncleanable == {0: (), 1: (), 2: ()}
