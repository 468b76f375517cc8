"""Big metadata operations do not freeze the engine: growing a topic to
3,000 partitions and deleting them leaves other connections served while the work runs,
a deletion writes the checkpoints once, not once per replica, a cluster-wide partition
limit refuses what would pass it with POLICY_VIOLATION and a readable message, and a broker
that stops while a big topic is prepared leads none of it."""

import kafka.errors as Errors
import pytest
from kafka.protocol.admin import (CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest,
                                  CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse)

from engine.protocol import registry
from engine.storage import checkpoint
from engine.storage.log_manager import LogManager
from tests.engine.protocol.test_bad_input import build_batch, create_topic
from tests.support.in_process_engine import InProcessEngine
from tests.support.loop_watch import LoopWatch
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

PARTITIONS = 3000


@pytest.fixture
def in_process_engine(tmp_path):
    with InProcessEngine(tmp_path, brokers=1, admin=False,
                         configs={"max.partitions": str(PARTITIONS + 10)}) as running:
        yield running.engine


def produce_to(client: RawClient, topic: str, partition: int) -> int:
    from kafka.protocol.producer import ProduceRequest, ProduceResponse
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=partition, records=bytes(build_batch([b"x"])))])])
    return client.request(request, 9, ProduceResponse).responses[0].partition_responses[0].error_code


def test_thousands_of_partitions_come_and_go_with_one_checkpoint_write(in_process_engine, monkeypatch):
    client = RawClient(in_process_engine.ports[0], timeout=120)
    try:
        assert create_topic(client, "big") == 0
        T = CreatePartitionsRequest.CreatePartitionsTopic
        grown = client.request(CreatePartitionsRequest(topics=[T(name="big", count=PARTITIONS, assignments=None)],
                                                       timeout_ms=60000, validate_only=False), 1,
                               CreatePartitionsResponse)
        assert grown.results[0].error_code == 0
        wait_until(lambda: produce_to(client, "big", PARTITIONS - 1) == 0, timeout=120,
                   message="the last new partition to take a record")

        writes = []
        real_write = checkpoint.OffsetCheckpointFile.write
        monkeypatch.setattr(checkpoint.OffsetCheckpointFile, "write",
                            lambda self, offsets: writes.append(self.path.name) or real_write(self, offsets))
        deleted = client.request(DeleteTopicsRequest(topic_names=["big"], timeout_ms=60000), 4, DeleteTopicsResponse)
        assert deleted.responses[0].error_code == 0
        assert len(writes) <= 4          # the two checkpoint files once (and a periodic round at most)
        log_dir = in_process_engine.data_dir / "broker-0"
        wait_until(lambda: not any(p.name.startswith("big-") for p in log_dir.iterdir()), timeout=120,
                   message="the deleted partitions' dirs to go")
    finally:
        client.close()


def test_the_cluster_wide_partition_limit_refuses_with_a_readable_message(in_process_engine):
    client = RawClient(in_process_engine.ports[0])
    try:
        assert create_topic(client, "small") == 0
        T = CreatePartitionsRequest.CreatePartitionsTopic
        answer = client.request(CreatePartitionsRequest(topics=[T(name="small", count=2**31 - 1, assignments=None)],
                                                        timeout_ms=10000, validate_only=False), 1,
                                CreatePartitionsResponse).results[0]
        assert answer.error_code == Errors.PolicyViolationError.errno
        assert "over its limit of 3010 (max.partitions)" in answer.error_message
    finally:
        client.close()


def test_sigterm_while_thousands_of_replicas_are_being_opened_stops_cleanly(engine_factory):
    """The background task applying a big change is cancelled by a clean stop, and the next
    start opens every partition of the committed metadata."""
    engine = engine_factory(brokers=1, admin=False)
    client = RawClient(engine.ports[0], timeout=120)
    try:
        assert create_topic(client, "big") == 0
        T = CreatePartitionsRequest.CreatePartitionsTopic
        grown = client.request(CreatePartitionsRequest(topics=[T(name="big", count=PARTITIONS, assignments=None)],
                                                       timeout_ms=60000, validate_only=False), 1,
                               CreatePartitionsResponse)
        assert grown.results[0].error_code == 0
    finally:
        client.close()
    assert engine.terminate(timeout=120) == 0
    engine.start(timeout=300)           # opening 3,000 logs at start: a generous bound for a loaded machine
    client = RawClient(engine.ports[0], timeout=120)
    try:
        assert produce_to(client, "big", PARTITIONS - 1) == 0
    finally:
        client.close()


def test_the_controller_and_the_brokers_answer_other_requests_between_slices_of_a_big_change(
        in_process_engine, monkeypatch):
    """The controller prepares thousands of new partitions in slices (CreateTopics,
    CreatePartitions), and the broker deletes thousands of logs in slices, so another
    connection's requests are answered while the change is applied: its slice turns wait for
    them (tests/support/loop_watch.py). In one turn of the event loop, none would be."""
    port = in_process_engine.ports[0]
    client = RawClient(port, timeout=120, client_id="big")
    try:
        watch = LoopWatch(monkeypatch)
        with watch.pings(port), registry.intercept(19, watch.watched(registry.lookup(19).handler, client_id="big")):
            T = CreateTopicsRequest.CreatableTopic
            created = client.request(CreateTopicsRequest(topics=[T(
                name="wide", num_partitions=PARTITIONS // 2, replication_factor=1, assignments=[], configs=[])],
                timeout_ms=60000, validate_only=False), 5, CreateTopicsResponse)
        assert created.topics[0].error_code == 0
        watch.assert_served_meanwhile(f"CreateTopics of {PARTITIONS // 2} partitions")

        watch = LoopWatch(monkeypatch)
        with watch.pings(port), registry.intercept(37, watch.watched(registry.lookup(37).handler, client_id="big")):
            P = CreatePartitionsRequest.CreatePartitionsTopic
            grown = client.request(CreatePartitionsRequest(topics=[P(name="wide", count=PARTITIONS, assignments=None)],
                                                           timeout_ms=60000, validate_only=False), 1,
                                   CreatePartitionsResponse)
        assert grown.results[0].error_code == 0
        watch.assert_served_meanwhile(f"CreatePartitions to {PARTITIONS} partitions")
        wait_until(lambda: produce_to(client, "wide", PARTITIONS - 1) == 0, timeout=120,
                   message="the last new partition to take a record")

        # The deletion runs in a background task: watched from its first renaming of logs
        # aside to its last.
        watch = LoopWatch(monkeypatch)
        real_delete_logs = LogManager.delete_logs
        calls = []

        def delete_logs(self, keys, **kwargs):
            if not calls:
                watch.watch_current_task()
            calls.append(len(keys))
            watch.events.append("end")
            return real_delete_logs(self, keys, **kwargs)
        monkeypatch.setattr(LogManager, "delete_logs", delete_logs)
        with watch.pings(port):
            deleted = client.request(DeleteTopicsRequest(topic_names=["wide"], timeout_ms=60000), 4,
                                     DeleteTopicsResponse)
            assert deleted.responses[0].error_code == 0
            log_dir = in_process_engine.data_dir / "broker-0"
            wait_until(lambda: not any(p.name.startswith("wide-") and p.name[5:].isdigit()
                                       for p in log_dir.iterdir()), timeout=120,
                       message="the deleted partitions' dirs to be renamed aside")
        assert sum(calls) == PARTITIONS and len(calls) > 1
        watch.assert_served_meanwhile(f"the deletion of {PARTITIONS} logs")
    finally:
        client.close()


def test_a_broker_that_stops_while_a_big_topic_is_prepared_leads_none_of_its_partitions(tmp_path, monkeypatch):
    """A topic of 1,500 partitions is prepared over many turns of the loop with the brokers live
    at its start; broker 2 stops (the controller fences it) after a third of them were built.
    Once the topic is in the image, broker 2 leads none of its partitions and is in no ISR."""
    with InProcessEngine(tmp_path, brokers=3, admin=False) as running:
        controller = running.engine.controller
        built = []
        real_record = controller.new_partition_record

        def record(topic_id, partition, replicas, live):
            built.append(2 in live)
            if len(built) == 500:
                controller.fence_broker(2)
            return real_record(topic_id, partition, replicas, live)

        monkeypatch.setattr(controller, "new_partition_record", record)
        topic = running.call(controller.create_topic_sliced("big", 1500, 3))
        assert len(built) == 1500 and all(built)      # every record built as if broker 2 were live
        partitions = list(controller.image.topics[topic.name].partitions.values())
        assert len(partitions) == 1500
        assert [p.partition for p in partitions if p.leader == 2 or 2 in p.isr] == []
        assert all(p.leader in (0, 1) for p in partitions)

        async def unfence():
            controller.unfence_broker(2)
        running.call(unfence())
