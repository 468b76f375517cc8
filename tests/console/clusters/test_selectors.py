from django.utils import timezone

from console.clusters.models import KnownBroker
from console.clusters.selectors import cluster_overview
from tests.console.conftest import make_topic


def test_overview_counts(cluster, engine_cluster, unique_topic):
    make_topic(cluster, unique_topic(), assignments={0: [0, 1], 1: [1, 2]})
    overview = cluster_overview(cluster=cluster)
    assert overview.cluster.id == cluster.pk and overview.cluster_id
    assert overview.controller_id in (0, 1, 2)
    assert [(b.broker_id, b.port, b.is_up) for b in overview.brokers] == [
        (i, port, True) for i, port in enumerate(engine_cluster.ports)]
    assert [b.is_controller for b in overview.brokers].count(True) == 1
    assert (overview.brokers_up, overview.brokers_down) == (3, 0)
    assert overview.topics >= 1 and overview.partitions >= 2
    assert overview.offline_partitions == 0


def test_a_broker_known_before_but_absent_from_metadata_is_down(cluster):
    KnownBroker.objects.create(cluster=cluster, broker_id=9, host="10.0.0.9", port=9092, last_seen=timezone.now())
    overview = cluster_overview(cluster=cluster)
    assert (overview.brokers_up, overview.brokers_down) == (3, 1)
    down = overview.brokers[-1]
    assert (down.broker_id, down.host, down.port, down.is_up) == (9, "10.0.0.9", 9092, False)
