"""Stopping and starting brokers of a private engine; stats and the overview follow."""
import pytest

from console.accounts.models import AuditLogEntry
from console.brokers import services
from console.brokers.selectors import broker_list
from console.clusters.selectors import cluster_overview
from console.errors import InvalidInput, NotFound
from console.topics.selectors import topic_list
from console.topics.services import topic_elect_preferred_leaders
from tests.conftest import TEST_ADMIN_TOKEN_ENV
from tests.console.conftest import make_topic, wait_for_partitions

CRAFTED = {0: [0, 1], 1: [1, 2], 2: [2, 0], 3: [0, 1], 4: [1, 2], 5: [2, 0]}


def stats_of(cluster, name):
    return topic_list(cluster=cluster, search=name).topics[0].stats


def test_skew_after_a_broker_stops_and_the_election_after_it_returns(private_cluster, users, unique_topic):
    name = make_topic(private_cluster, unique_topic(), assignments=CRAFTED)
    before = stats_of(private_cluster, name)
    assert (before.preferred_replicas_percent, before.brokers_leader_skewed_percent,
            before.under_replicated_percent) == (100, 0, 0)

    stopped = services.broker_stop(cluster=private_cluster, actor=users["operator"], broker_id=2)
    assert (stopped.node_id, stopped.running) == (2, False)
    wait_for_partitions(private_cluster, name, lambda ps: all(2 not in p.isr and p.leader != 2 for p in ps),
                        "broker 2 out of every ISR")
    # Values computed by hand in tests/console/topics/test_stats.py::test_skew_after_a_broker_stops.
    after = stats_of(private_cluster, name)
    assert after.brokers == 2
    assert after.brokers_skewed_percent == 0
    assert after.brokers_leader_skewed_percent == 50
    assert after.preferred_replicas_percent == 66
    assert after.under_replicated_percent == 66
    assert after.brokers_spread_percent == 100
    overview = cluster_overview(cluster=private_cluster)
    assert (overview.brokers_up, overview.brokers_down) == (2, 1)
    assert [b.broker_id for b in overview.brokers if not b.is_up] == [2]
    assert overview.under_replicated_partitions == 4 and overview.offline_partitions == 0
    down = {b.broker_id: b for b in broker_list(cluster=private_cluster).brokers}[2]
    assert (down.is_up, down.partitions, down.leaders, down.log_dir_size) == (False, 4, 0, None)

    services.broker_start(cluster=private_cluster, actor=users["operator"], broker_id=2)
    wait_for_partitions(private_cluster, name, lambda ps: all(len(p.isr) == 2 for p in ps), "ISRs full again")
    rejoined = stats_of(private_cluster, name)
    assert (rejoined.under_replicated_percent, rejoined.preferred_replicas_percent) == (0, 66)

    outcome = topic_elect_preferred_leaders(cluster=private_cluster, actor=users["operator"], name=name)
    assert outcome.result.elected == ((name, 2), (name, 5)) and outcome.result.failed == ()
    assert outcome.already_preferred == 4
    final = stats_of(private_cluster, name)
    assert (final.preferred_replicas_percent, final.brokers_leader_skewed_percent) == (100, 0)
    assert list(AuditLogEntry.objects.filter(action__startswith="broker.").order_by("id").values_list(
        "action", "target", "result")) == [("broker.stop", "2", "ok"), ("broker.start", "2", "ok")]


def test_stop_refuses_unknown_brokers_and_the_last_live_one(engine_factory, db, users):
    from tests.console.conftest import engine_cluster_row

    engine = engine_factory(brokers=1)
    single = engine_cluster_row("single", engine)
    with pytest.raises(NotFound, match="no broker 5"):
        services.broker_stop(cluster=single, actor=users["operator"], broker_id=5)
    with pytest.raises(InvalidInput, match="last live broker"):
        services.broker_stop(cluster=single, actor=users["operator"], broker_id=0)
    assert engine.alive()
    assert AuditLogEntry.objects.filter(action="broker.stop", result="failed").count() == 2
