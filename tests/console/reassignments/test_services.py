"""Plan services on real engines: racks from Metadata, every scenario's input checks."""
import pytest

from console.clusters.services import cluster_create
from console.errors import InvalidInput
from console.reassignments import services
from tests.console.conftest import make_topic
from tests.support.engine_process import EngineProcess


@pytest.fixture
def racked(db, tmp_path):
    engine = EngineProcess(tmp_path / "racked", brokers=4,
                           extra_args=["--rack", "0=a", "--rack", "1=a", "--rack", "2=b", "--rack", "3=b"]).start()
    yield cluster_create(name="racked", bootstrap_servers=engine.bootstrap)
    engine.kill()


def test_a_rebalance_spreads_each_partition_over_the_racks_of_broker_rack(racked, users, unique_topic):
    topic = make_topic(racked, unique_topic(), assignments={p: [p % 2, 1 - p % 2] for p in range(4)})  # all rack a
    job = services.plan_generate(cluster=racked, actor=users["operator"], name="racks", scenario="rebalance",
                                 topics=[topic])
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    after = {m.partition: m.replicas_after for m in job.moves.all()}
    assert len(after) == 4
    assert all({racks[b] for b in replicas} == {"a", "b"} for replicas in after.values())


def test_scenarios_check_their_input(four_brokers, users, unique_topic):
    topic = make_topic(four_brokers, unique_topic(), assignments={0: [0, 1]})
    plan = dict(cluster=four_brokers, actor=users["operator"], name="x", topics=[topic])
    with pytest.raises(InvalidInput, match="Choose the brokers"):
        services.plan_generate(scenario="decommission", **plan)
    with pytest.raises(InvalidInput, match="new replication factor"):
        services.plan_generate(scenario="rf", **plan)
    with pytest.raises(InvalidInput, match="Unknown scenario"):
        services.plan_generate(scenario="shuffle", **plan)
    job = services.plan_generate(scenario="decommission", brokers=[0, 1], **plan)
    assert set(job.moves.get().replicas_after) == {2, 3}
    job = services.plan_generate(scenario="rf", replication_factor=3, **plan)
    assert len(job.moves.get().replicas_after) == 3
    job = services.plan_generate(scenario="restrict", brokers=[2, 3], **plan)
    assert set(job.moves.get().replicas_after) == {2, 3}
