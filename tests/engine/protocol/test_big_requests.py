"""One client's huge request does not stall the other brokers of the process: while broker 0
handles a request naming fifty thousand topics or partitions, another client gets ApiVersions
answers from broker 1 (they share one event loop). The handler's slice turns wait for those
answers (tests/support/loop_watch.py), so the proof holds at any speed: a handler that did its
work in one turn of the loop would let no answer through."""
import struct
import uuid

import kafka.errors as Errors
import pytest
from kafka.protocol.admin import (AlterConfigsRequest, AlterConfigsResponse, AlterPartitionReassignmentsRequest,
                                  AlterPartitionReassignmentsResponse, CreatePartitionsRequest,
                                  CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
                                  DeleteRecordsRequest, DeleteRecordsResponse, DescribeConfigsRequest,
                                  DescribeConfigsResponse, DescribeLogDirsRequest, DescribeLogDirsResponse,
                                  ElectLeadersRequest, ElectLeadersResponse, IncrementalAlterConfigsRequest,
                                  IncrementalAlterConfigsResponse, ListPartitionReassignmentsRequest,
                                  ListPartitionReassignmentsResponse)
from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest, AlterClientQuotasResponse
from kafka.protocol.admin.users import AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse
from kafka.protocol.consumer import (FetchRequest, FetchResponse, ListOffsetsRequest, ListOffsetsResponse,
                                     OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
                                     OffsetFetchResponse)
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.protocol.producer.transaction import TxnOffsetCommitRequest, TxnOffsetCommitResponse
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse, MetadataRequest, MetadataResponse

from engine.protocol import registry
from tests.engine.protocol.test_bad_input import build_batch, create_topic
from tests.support.in_process_engine import InProcessEngine
from tests.support.loop_watch import LoopWatch
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

NAMES = 50_000


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


def create_topics_manual(names: list[str]):
    """One topic with a manual assignment of fifty thousand partitions, the last naming an
    unknown broker: every partition is checked, and the topic refused (INVALID_REPLICA_ASSIGNMENT)."""
    T = CreateTopicsRequest.CreatableTopic
    A = T.CreatableReplicaAssignment
    return CreateTopicsRequest(topics=[T(name=f"manual-{uuid.uuid4().hex[:8]}", num_partitions=-1,
                                         replication_factor=-1, configs=[], assignments=[
                                             A(partition_index=i, broker_ids=[i % 2] if i < len(names) - 1 else [99])
                                             for i in range(len(names))])], timeout_ms=60000, validate_only=False), \
        7, CreateTopicsResponse


def create_topics_automatic(names: list[str]):
    """validate_only: one topic of fifty thousand partitions placed by Kafka's rule, nothing created."""
    T = CreateTopicsRequest.CreatableTopic
    return CreateTopicsRequest(topics=[T(name=f"automatic-{uuid.uuid4().hex[:8]}", num_partitions=len(names),
                                         replication_factor=2, assignments=[], configs=[])],
                               timeout_ms=60000, validate_only=True), 7, CreateTopicsResponse


def create_partitions_manual(names: list[str]):
    """An existing topic grown by fifty thousand manually assigned partitions, the last naming an
    unknown broker: every new partition is checked, and the growth refused."""
    T = CreatePartitionsRequest.CreatePartitionsTopic
    return CreatePartitionsRequest(topics=[T(name=TOPIC, count=1 + len(names), assignments=[
        T.CreatePartitionsAssignment(broker_ids=[i % 2] if i < len(names) - 1 else [99])
        for i in range(len(names))])], timeout_ms=30000, validate_only=False), 3, CreatePartitionsResponse


def describe_log_dirs(names: list[str]):
    T = DescribeLogDirsRequest.DescribableLogDirTopic
    return DescribeLogDirsRequest(topics=[T(topic=n, partitions=[0]) for n in names]), 4, DescribeLogDirsResponse


def list_partition_reassignments(names: list[str]):
    T = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
    return ListPartitionReassignmentsRequest(timeout_ms=30000, topics=[T(name=n, partition_indexes=[0])
                                                                       for n in names]), \
        0, ListPartitionReassignmentsResponse


def offset_fetch(names: list[str]):
    """To the group's coordinator: a partition of each of the topics."""
    T = OffsetFetchRequest.OffsetFetchRequestTopic
    return OffsetFetchRequest(group_id=GROUP, topics=[T(name=n, partition_indexes=[0]) for n in names],
                              require_stable=False), 7, OffsetFetchResponse


def produce(names: list[str]):
    P = ProduceRequest.TopicProduceData
    batch = bytes(build_batch([b"x"]))
    return ProduceRequest(transactional_id=None, acks=1, timeout_ms=30000, topic_data=[
        P(name=n, partition_data=[P.PartitionProduceData(index=0, records=batch)]) for n in names]), \
        9, ProduceResponse


def offset_commit(names: list[str]):
    """To the group's coordinator, as a standalone consumer (generation -1)."""
    T = OffsetCommitRequest.OffsetCommitRequestTopic
    return OffsetCommitRequest(group_id=GROUP, generation_id_or_member_epoch=-1, member_id="",
                               group_instance_id=None, retention_time_ms=-1, topics=[T(name=n, partitions=[
                                   T.OffsetCommitRequestPartition(partition_index=0, committed_offset=1,
                                                                  committed_leader_epoch=-1,
                                                                  committed_metadata="")]) for n in names]), \
        8, OffsetCommitResponse


def txn_offset_commit(names: list[str]):
    T = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    return TxnOffsetCommitRequest(transactional_id="big-txn", group_id=GROUP, producer_id=1, producer_epoch=0,
                                  generation_id=-1, member_id="", group_instance_id=None, topics=[
                                      T(name=n, partitions=[T.TxnOffsetCommitRequestPartition(
                                          partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                                          committed_metadata="")]) for n in names]), 3, TxnOffsetCommitResponse


def delete_records(names: list[str]):
    T = DeleteRecordsRequest.DeleteRecordsTopic
    return DeleteRecordsRequest(topics=[T(name=n, partitions=[T.DeleteRecordsPartition(partition_index=0, offset=0)])
                                        for n in names], timeout_ms=30000), 2, DeleteRecordsResponse


def elect_leaders(names: list[str]):
    T = ElectLeadersRequest.TopicPartitions
    return ElectLeadersRequest(election_type=0, topic_partitions=[T(topic=n, partitions=[0]) for n in names],
                               timeout_ms=30000), 1, ElectLeadersResponse


def alter_partition_reassignments(names: list[str]):
    T = AlterPartitionReassignmentsRequest.ReassignableTopic
    return AlterPartitionReassignmentsRequest(timeout_ms=30000, topics=[T(name=n, partitions=[
        T.ReassignablePartition(partition_index=0, replicas=[0])]) for n in names]), \
        0, AlterPartitionReassignmentsResponse


def describe_configs(names: list[str]):
    """Every config of an existing topic, 2,000 times over."""
    R = DescribeConfigsRequest.DescribeConfigsResource
    return DescribeConfigsRequest(resources=[R(resource_type=2, resource_name=TOPIC, configuration_keys=None)
                                             for _ in range(2000)],
                                  include_synonyms=True, include_documentation=False), 4, DescribeConfigsResponse


def incremental_alter_configs(names: list[str]):
    """2,000 changes of an existing topic's config, each its own resource (and metadata commit)."""
    R = IncrementalAlterConfigsRequest.AlterConfigsResource
    return IncrementalAlterConfigsRequest(validate_only=False, resources=[R(
        resource_type=2, resource_name=TOPIC, configs=[R.AlterableConfig(
            name="retention.ms", config_operation=0, value=str(86_400_000 + i))]) for i in range(2000)]), \
        1, IncrementalAlterConfigsResponse


def alter_configs(names: list[str]):
    """The legacy AlterConfigs, 2,000 times over an existing topic."""
    R = AlterConfigsRequest.AlterConfigsResource
    return AlterConfigsRequest(validate_only=False, resources=[R(
        resource_type=2, resource_name=TOPIC, configs=[R.AlterableConfig(name="retention.ms",
                                                                         value=str(86_400_000 + i))])
        for i in range(2000)]), 2, AlterConfigsResponse


def create_partitions(names: list[str]):
    T = CreatePartitionsRequest.CreatePartitionsTopic
    return CreatePartitionsRequest(topics=[T(name=n, count=2, assignments=None) for n in names], timeout_ms=30000,
                                   validate_only=False), 3, CreatePartitionsResponse


def alter_user_scram_credentials(names: list[str]):
    """A SCRAM credential for each of fifty thousand users."""
    U = AlterUserScramCredentialsRequest.ScramCredentialUpsertion
    return AlterUserScramCredentialsRequest(deletions=[], upsertions=[
        U(name=n, mechanism=1, iterations=4096, salt=b"salt", salted_password=b"x" * 32) for n in names]), \
        0, AlterUserScramCredentialsResponse


def alter_client_quotas(names: list[str]):
    """A producer byte rate for each of fifty thousand client ids."""
    E = AlterClientQuotasRequest.EntryData
    return AlterClientQuotasRequest(entries=[
        E(entity=[E.EntityData(entity_type="client-id", entity_name=n)],
          ops=[E.OpData(key="producer_byte_rate", value=1048576.0, remove=False)]) for n in names],
        validate_only=False), 1, AlterClientQuotasResponse


GROUP, TOPIC = "big-group", "big-topic"
# Requests of one big entry: their handlers' tick after each topic reaches a waiting turn
# whether or not the entry's own work was sliced.
ONE_ENTRY = (create_topics_manual, create_topics_automatic, create_partitions_manual)


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


@pytest.mark.parametrize("build", [metadata, list_offsets, fetch, offset_fetch, describe_configs, create_topics,
                                   produce, offset_commit, txn_offset_commit, delete_records, elect_leaders,
                                   alter_partition_reassignments, incremental_alter_configs, alter_configs,
                                   create_partitions, alter_user_scram_credentials, alter_client_quotas,
                                   create_topics_manual, create_topics_automatic, create_partitions_manual,
                                   describe_log_dirs, list_partition_reassignments])
def test_another_broker_answers_while_a_huge_request_is_worked_on(running, build, monkeypatch):
    names = [f"no-such-topic-{uuid.uuid4().hex[:6]}-{i}" for i in range(NAMES)]
    request, version, _ = build(names)
    request.with_header(correlation_id=7, client_id="big")
    frame = request.encode(version=version, header=True, framed=True)
    worker = 0
    if build in (offset_fetch, offset_commit, txn_offset_commit):
        worker = coordinator_of(running.engine.ports[0], GROUP)
    if build in (describe_configs, incremental_alter_configs, alter_configs, create_partitions_manual):
        assert create_topic_on(running.engine.ports[0], TOPIC) in (0, Errors.TopicAlreadyExistsError.errno)
    watch = LoopWatch(monkeypatch)
    key = type(request).API_KEY
    client = RawClient(running.engine.ports[worker], timeout=600)
    try:
        with watch.pings(running.engine.ports[1 - worker]), \
                registry.intercept(key, watch.watched(registry.lookup(key).handler, client_id="big")):
            client.send_bytes(frame)
            answer = client.read_frame()
        assert answer is not None and struct.unpack_from(">i", answer)[0] == 7     # answered, not closed
        watch.assert_served_meanwhile(f"broker {worker}'s handler of {len(frame) >> 10} KiB of "
                                      f"{type(request).__name__}", min_waits=2 if build in ONE_ENTRY else 1)
    finally:
        client.close()


def create_topic_on(port: int, name: str) -> int:
    client = RawClient(port)
    try:
        return create_topic(client, name)
    finally:
        client.close()
