"""An observation of our engine reads each broker's uncleanable partitions from the broker
config the engine keeps for them; a rule fires on a count above its threshold; a cluster
without that config (Apache Kafka) has none to report."""
from __future__ import annotations

from dataclasses import replace

import pytest

from console.alerts.evaluation import breaches
from console.alerts.models import AlertRule
from console.metrics.selectors import observation_now


@pytest.mark.django_db
def test_every_broker_says_which_partitions_its_cleaner_gave_up_on(cluster):
    observation = observation_now(cluster=cluster)
    assert observation.uncleanable == {0: (), 1: (), 2: ()}
    rule = AlertRule(cluster=cluster, name="cleaner", kind=AlertRule.UNCLEANABLE, threshold=0)
    assert breaches(rule, observation, 0.0) == {}
    # The same broker config naming two partitions (as after two failed cleanings):
    troubled = replace(observation, uncleanable={**observation.uncleanable, 1: ("orders-0", "orders-3")})
    assert breaches(rule, troubled, 0.0) == {"broker 1": 2.0}
