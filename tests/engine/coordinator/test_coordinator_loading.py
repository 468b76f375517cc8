"""A coordinator answers COORDINATOR_LOAD_IN_PROGRESS for a group whose offsets partition it
leads by the metadata but has not loaded yet, and NOT_COORDINATOR when another broker leads
it."""
import uuid

import kafka.errors as Errors
import pytest

from engine.cluster.metadata import BrokerRegistration, PartitionState, TopicState
from engine.coordinator.coordinator import GroupCoordinator
from engine.coordinator.group_store import OFFSETS_TOPIC
from engine.errors import ApiError
from tests.engine.coordinator.conftest import FakeBroker


def coordinator_led_by(tmp_path, leader: int) -> GroupCoordinator:
    broker = FakeBroker(tmp_path)
    broker.image.brokers = {n: BrokerRegistration(n, "127.0.0.1", 1 + n) for n in (0, 1)}
    broker.image.topics[OFFSETS_TOPIC] = TopicState(OFFSETS_TOPIC, uuid.uuid4(), partitions={
        0: PartitionState(0, [0, 1], leader, isr=[0, 1])})
    return GroupCoordinator(broker)     # the partition is not loaded: on_partitions_changed never ran


@pytest.mark.parametrize("leader, error", [(0, Errors.CoordinatorLoadInProgressError),
                                           (1, Errors.NotCoordinatorError)])
def test_a_group_not_loaded_here_is_loading_or_elsewhere(tmp_path, leader, error):
    coordinator = coordinator_led_by(tmp_path, leader)
    with pytest.raises(ApiError) as raised:
        coordinator.heartbeat(group_id="g", generation_id=1, member_id="m", group_instance_id=None)
    assert raised.value.code == error.errno


def test_once_loaded_the_group_is_served(tmp_path):
    coordinator = coordinator_led_by(tmp_path, 0)
    coordinator._broker.lead_offsets_partition()
    coordinator.on_partitions_changed()
    try:
        assert coordinator.fetch_offsets("g", None) == []
    finally:
        for partition in coordinator._broker.partitions.values():
            partition.log.close()
