"""One client's huge request does not stall the other brokers of the process: while a request
naming fifty thousand topics or partitions is decoded, handled and answered by broker 0,
another client keeps getting ApiVersions answers from broker 1 (they share one event loop).
Before, the decoding alone held the loop for seconds and the other client got nothing."""
import struct
import time
import uuid

import kafka.errors as Errors
import pytest
from kafka.protocol.admin import (CreateTopicsRequest, CreateTopicsResponse, DescribeConfigsRequest,
                                  DescribeConfigsResponse)
from kafka.protocol.consumer import (FetchRequest, FetchResponse, ListOffsetsRequest, ListOffsetsResponse,
                                     OffsetFetchRequest, OffsetFetchResponse)
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse, MetadataRequest, MetadataResponse

from tests.engine.cluster.test_big_metadata_operations import Pinger
from tests.engine.protocol.test_bad_input import create_topic
from tests.support.in_process_engine import InProcessEngine
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

NAMES = 50_000
# Answers the other client must get while the big request is worked on. At a ping every 10 ms
# and seconds of work, a loop that keeps serving gives hundreds; one that is held, a handful
# (those while the request's bytes arrive).
ANSWERS_MEANWHILE = 10


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    with InProcessEngine(tmp_path_factory.mktemp("big-requests"), brokers=2, admin=False) as engine:
        yield engine


def metadata(names: list[str]):
    T = MetadataRequest.MetadataRequestTopic
    return MetadataRequest(topics=[T(name=n, topic_id=None) for n in names], allow_auto_topic_creation=False,
                           include_topic_authorized_operations=False), 12, MetadataResponse


def list_offsets(names: list[str]):
    T = ListOffsetsRequest.ListOffsetsTopic
    return ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[T(name="big", partitions=[
        T.ListOffsetsPartition(partition_index=i, current_leader_epoch=-1, timestamp=-1)
        for i in range(len(names))])]), 7, ListOffsetsResponse


def fetch(names: list[str]):
    F = FetchRequest.FetchTopic
    return FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
                        session_id=0, session_epoch=-1, forgotten_topics_data=[], rack_id="", topics=[
                            F(topic=n, partitions=[F.FetchPartition(partition=0, current_leader_epoch=-1,
                                                                    fetch_offset=0, log_start_offset=-1,
                                                                    partition_max_bytes=1024)]) for n in names]), \
        12, FetchResponse


def create_topics(names: list[str]):
    """Illegal names: every topic is validated and refused (INVALID_TOPIC_EXCEPTION)."""
    T = CreateTopicsRequest.CreatableTopic
    return CreateTopicsRequest(topics=[T(name=f"{n}!", num_partitions=1, replication_factor=1, assignments=[],
                                         configs=[]) for n in names], timeout_ms=60000, validate_only=False), \
        7, CreateTopicsResponse


def offset_fetch(names: list[str]):
    """To the group's coordinator: a partition of each of the topics."""
    T = OffsetFetchRequest.OffsetFetchRequestTopic
    return OffsetFetchRequest(group_id=GROUP, topics=[T(name=n, partition_indexes=[0]) for n in names],
                              require_stable=False), 7, OffsetFetchResponse


def describe_configs(names: list[str]):
    """Every config of an existing topic, 2,000 times over."""
    R = DescribeConfigsRequest.DescribeConfigsResource
    return DescribeConfigsRequest(resources=[R(resource_type=2, resource_name=TOPIC, configuration_keys=None)
                                             for _ in range(2000)],
                                  include_synonyms=True, include_documentation=False), 4, DescribeConfigsResponse


GROUP, TOPIC = "big-group", "big-topic"


def coordinator_of(port: int, group: str) -> int:
    """The group's coordinator, once __consumer_offsets is there and loaded."""
    def found():
        client = RawClient(port)
        try:
            answer = client.request(FindCoordinatorRequest(key=group, key_type=0), 3, FindCoordinatorResponse)
            return answer.node_id + 1 if answer.error_code == 0 else None      # +1: broker 0 is an answer too
        finally:
            client.close()
    return wait_until(found, message="a coordinator for the group") - 1


@pytest.mark.parametrize("build", [metadata, list_offsets, fetch, offset_fetch, describe_configs, create_topics])
def test_another_broker_answers_while_a_huge_request_is_worked_on(running, build):
    names = [f"no-such-topic-{uuid.uuid4().hex[:6]}-{i}" for i in range(NAMES)]
    request, version, response_class = build(names)
    request.with_header(correlation_id=7, client_id="big")
    frame = request.encode(version=version, header=True, framed=True)
    worker = 0
    if build is offset_fetch:
        worker = coordinator_of(running.engine.ports[0], GROUP)
    if build is describe_configs:
        assert create_topic_on(running.engine.ports[0], TOPIC) in (0, Errors.TopicAlreadyExistsError.errno)
    pinger = Pinger(running.engine.ports[1 - worker])
    client = RawClient(running.engine.ports[worker], timeout=600)
    pinger.start()
    try:
        while not pinger.answered:
            time.sleep(0.01)
        started = time.monotonic()
        client.send_bytes(frame)
        answer = client.read_frame()
        finished = time.monotonic()
        assert answer is not None and struct.unpack_from(">i", answer)[0] == 7     # answered, not closed
        meanwhile = pinger.answers_between(started, finished)
        assert meanwhile >= ANSWERS_MEANWHILE, (
            f"{meanwhile} answers from broker 1 in the {finished - started:.1f} s broker 0 took over "
            f"{len(frame) >> 20} MiB of {type(request).__name__}")
    finally:
        pinger.stopping.set()
        pinger.join(60)
        client.close()


def create_topic_on(port: int, name: str) -> int:
    client = RawClient(port)
    try:
        return create_topic(client, name)
    finally:
        client.close()
