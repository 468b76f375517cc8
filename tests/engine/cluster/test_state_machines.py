
import pytest

from engine.cluster import state_machines as SM
from engine.cluster.controller import Controller
from engine.config import BrokerConfig


def test_legal_and_illegal_moves():
    SM.check_partition_move(SM.PartitionState.OFFLINE, SM.PartitionState.ONLINE)
    with pytest.raises(SM.IllegalStateChange):
        SM.check_partition_move(SM.PartitionState.NON_EXISTENT, SM.PartitionState.ONLINE)
    assert SM.replica_path(SM.ReplicaState.ONLINE, SM.ReplicaState.NON_EXISTENT) == [
        SM.ReplicaState.DELETION_STARTED, SM.ReplicaState.DELETION_SUCCESSFUL, SM.ReplicaState.NON_EXISTENT]
    with pytest.raises(SM.IllegalStateChange):
        SM.check_replica_move(SM.ReplicaState.DELETION_SUCCESSFUL, SM.ReplicaState.ONLINE)


def test_controller_walks_partitions_and_replicas_through_their_states(tmp_path, caplog):
    controller = Controller(tmp_path, BrokerConfig())
    for node in range(3):
        controller.register_broker(node, "127.0.0.1", 9092 + node)
    caplog.set_level("DEBUG", logger="engine.cluster.controller")
    topic = controller.create_topic("t", 1, 2)
    leader = topic.partitions[0].leader
    controller.fence_broker(leader)
    other = topic.partitions[0].leader
    controller.fence_broker(other)
    assert SM.partition_state(topic.partitions[0], controller.live_brokers()) is SM.PartitionState.OFFLINE
    controller.unfence_broker(other)
    assert SM.partition_state(topic.partitions[0], controller.live_brokers()) is SM.PartitionState.ONLINE
    controller.delete_topic("t")
    moves = [r.getMessage() for r in caplog.records if r.getMessage().startswith("State change")]
    assert any("NonExistentPartition -> NewPartition -> OnlinePartition" in m for m in moves)
    assert any("OnlinePartition -> OfflinePartition" in m for m in moves)
    assert any("OfflinePartition -> OnlinePartition" in m for m in moves)
    assert any("ReplicaDeletionStarted -> ReplicaDeletionSuccessful -> NonExistentReplica" in m for m in moves)


def test_brokers_ignore_metadata_from_an_older_controller_epoch(tmp_path):
    from engine.broker.broker import Broker
    controller = Controller(tmp_path / "meta", BrokerConfig())
    controller.register_broker(0, "127.0.0.1", 9092)
    broker = Broker(0, "127.0.0.1", 9092, tmp_path / "b0", controller)
    broker.running = True
    broker._checkpointed_hw = {}
    broker.on_metadata_change(set(), [], controller_epoch=5)
    controller.create_topic("t", 1, 1)          # the broker is not listening yet: told by hand below
    broker.on_metadata_change({"t"}, [], controller_epoch=4)   # a stale controller: ignored
    assert broker.partitions == {}
    broker.on_metadata_change({"t"}, [], controller_epoch=5)
    assert list(broker.partitions) == [("t", 0)] and broker.partitions[("t", 0)].is_leader
    broker.log_manager.shutdown()


def test_auto_rebalance_returns_leadership_to_preferred_replicas(tmp_path):
    controller = Controller(tmp_path, BrokerConfig())
    for node in range(3):
        controller.register_broker(node, "127.0.0.1", 9092 + node)
    topic = controller.create_topic("t", 6, 3)
    preferred = {p: s.replicas[0] for p, s in topic.partitions.items()}
    controller.fence_broker(0)
    controller.unfence_broker(0)
    assert any(s.leader != preferred[p] for p, s in topic.partitions.items())
    # Broker 0 is not back in the ISRs yet (its follower has not caught up): nothing moves.
    assert controller.rebalance_leaders() == 0
    for p, state in topic.partitions.items():
        controller.alter_isr("t", p, leader_id=state.leader, leader_epoch=state.leader_epoch,
                             partition_epoch=state.partition_epoch, isr=sorted(set(state.isr) | {0}))
    assert controller.rebalance_leaders() > 0
    assert {p: s.leader for p, s in topic.partitions.items()} == preferred
