"""The election at engine start: the ISR member with the longest recovered log leads, and
shorter members leave the ISR until they catch up (KIP-966's idea)."""
from engine.cluster.controller import Controller
from engine.cluster.replication_control import ReplicaLog
from engine.config import BrokerConfig


def cluster(tmp_path) -> tuple[Controller, object]:
    controller = Controller(tmp_path, BrokerConfig())
    for node in range(3):
        controller.register_broker(node, "127.0.0.1", 9092 + node)
    topic = controller.create_topic("t", 1, 3)
    return controller, topic.partitions[0]


def test_a_leader_that_lost_data_hands_over_to_the_longest_log(tmp_path, caplog):
    controller, state = cluster(tmp_path)
    leader, *followers = state.replicas
    epoch = state.leader_epoch
    reports = {leader: {("t", 0): ReplicaLog(last_epoch=0, log_end_offset=40, checkpointed_hw=90)},
               followers[0]: {("t", 0): ReplicaLog(0, 100, 90)},
               followers[1]: {("t", 0): ReplicaLog(0, 97, 90)}}
    assert controller.elect_longest_logs(reports) == 1
    state = controller.image.partition("t", 0)
    assert state.leader == followers[0] and state.leader_epoch == epoch + 1
    assert state.isr == [followers[0]]      # shorter members re-fetch before rejoining
    assert f"replicas [{leader}] lost acknowledged data" in caplog.text


def test_the_newest_epoch_beats_a_longer_divergent_tail(tmp_path):
    controller, state = cluster(tmp_path)
    leader, first, second = state.replicas
    reports = {leader: {("t", 0): ReplicaLog(3, 50, 0)}, first: {("t", 0): ReplicaLog(4, 45, 0)},
               second: {}}   # its partition dir is gone: it holds nothing
    controller.elect_longest_logs(reports)
    state = controller.image.partition("t", 0)
    assert state.leader == first and state.isr == [first]


def test_a_clean_restart_changes_nothing(tmp_path):
    controller, state = cluster(tmp_path)
    before = (state.leader, list(state.isr), state.leader_epoch, state.partition_epoch)
    same = ReplicaLog(0, 100, 100)
    assert controller.elect_longest_logs({r: {("t", 0): same} for r in state.replicas}) == 0
    state = controller.image.partition("t", 0)
    assert (state.leader, state.isr, state.leader_epoch, state.partition_epoch) == before
