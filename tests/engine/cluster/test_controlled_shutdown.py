"""SIGTERM to the engine: each broker hands its leaderships over before it stops, and at the
next start the preferred replicas take them back once they are in sync. A partition whose
leadership has nowhere to go (RF 1) keeps its leader and leader epoch: no record at shutdown,
no election at the next start."""
from engine.cluster.controller import Controller
from engine.config import BrokerConfig
from tests.engine.cluster.helpers import create_topic, partition_state, wait_until


def test_sigterm_moves_leadership_and_restart_restores_preferred_leaders(engine_factory, topic_name, tmp_path):
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=3, data_dir=data_dir)
    create_topic(engine.bootstrap, topic_name, 6, 3)
    create_topic(engine.bootstrap, f"{topic_name}-rf1", 6, 1)
    preferred = {p: replicas[0] for p, (_, replicas, _) in partition_state(engine.bootstrap, topic_name).items()}
    assert sorted(set(preferred.values())) == [0, 1, 2]
    assert engine.terminate() == 0

    # The metadata written at shutdown: brokers 0 and 1 handed everything to broker 2, the last to stop.
    stored = Controller(data_dir / "__cluster_metadata", BrokerConfig())
    assert {state.leader for state in stored.image.topics[topic_name].partitions.values()} == {2}
    stranded = stored.image.topics[f"{topic_name}-rf1"].partitions.values()
    assert {s.leader for s in stranded} == {0, 1, 2}
    assert all(s.leader == s.replicas[0] and s.leader_epoch == 0 and s.isr == s.replicas for s in stranded)
    stored.shutdown()

    engine.start()
    wait_until(lambda: {p: leader for p, (leader, _, _) in partition_state(engine.bootstrap, topic_name).items()}
               == preferred, timeout=60, message="preferred leaders restored")
