"""`engine serve --metrics-port P`: broker i's metrics on P+i, under the JMX exporter's names,
counting what real clients did; promtool accepts them."""
from __future__ import annotations

import urllib.request

import kafka.errors as Errors
import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.protocol.consumer import FetchRequest, FetchResponse, OffsetCommitRequest, OffsetCommitResponse
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse, MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from prometheus_client.parser import text_string_to_metric_families

from tests.support.engine_process import EngineProcess, free_port_range
from tests.support.promtool import check_metrics
from tests.support.raw_client import RawClient
from tests.support.record_batches import records, seal
from tests.support.waiting import wait_until

TOPIC = "metered"
RECORDS = 25
SESSIONS = "kafka_server_fetchsessioncache_numincrementalfetchsessions"
PARTITIONS_CACHED = "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached"
FOLLOWER_SESSIONS = 3 * 2       # each of 3 brokers follows the 2 others


@pytest.fixture(scope="module")
def metered_engine(tmp_path_factory):
    port = free_port_range(3)
    engine = EngineProcess(tmp_path_factory.mktemp("metrics") / "data", brokers=3,
                           extra_args=["--metrics-port", str(port)]).start()
    engine.metrics_port = port
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


def scrape(engine, broker_id: int) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{engine.metrics_port + broker_id}/metrics", timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=")
        return answer.read()


def samples(exposition: bytes) -> dict[tuple[str, tuple], float]:
    found = {}
    for family in text_string_to_metric_families(exposition.decode()):
        for s in family.samples:
            found[s.name, tuple(sorted(s.labels.items()))] = s.value
    return found


def total(engine, name: str, **labels) -> float:
    wanted = tuple(sorted(labels.items()))
    return sum(samples(scrape(engine, b)).get((name, wanted), 0.0) for b in range(3))


def test_produce_and_fetch_are_counted_per_topic_on_the_leaders(metered_engine):
    admin = KafkaAdminClient(bootstrap_servers=metered_engine.bootstrap)
    admin.create_topics([NewTopic(TOPIC, num_partitions=3, replication_factor=3)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=metered_engine.bootstrap, acks="all")
    for i in range(RECORDS):
        producer.send(TOPIC, value=b"x" * 100, partition=i % 3)
    producer.flush()
    producer.close()
    # Each broker follows each other broker in a session of its own: 6 before any consumer's.
    wait_until(lambda: total(metered_engine, SESSIONS) == FOLLOWER_SESSIONS, timeout=30,
               message="the followers' fetch sessions")
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=metered_engine.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=200, enable_auto_commit=False)
    read = []
    wait_until(lambda: read.extend(consumer) or len(read) >= RECORDS, timeout=30)
    consumer.close()

    assert total(metered_engine, "kafka_server_brokertopicmetrics_messagesin_total", topic=TOPIC) == RECORDS
    bytes_in = total(metered_engine, "kafka_server_brokertopicmetrics_bytesin_total", topic=TOPIC)
    assert RECORDS * 100 < bytes_in < RECORDS * 100 + 3 * 4096     # the batches as sent
    # Consumers' fetches only (followers replicate the same bytes and are not counted).
    assert total(metered_engine, "kafka_server_brokertopicmetrics_bytesout_total", topic=TOPIC) == bytes_in
    # The broker-wide meter (no topic label) includes the topic's.
    assert total(metered_engine, "kafka_server_brokertopicmetrics_messagesin_total") >= RECORDS
    # kafka-python fetched through incremental fetch sessions (KIP-227) too, which the leaders keep.
    assert total(metered_engine, SESSIONS) >= FOLLOWER_SESSIONS + 1
    assert total(metered_engine, PARTITIONS_CACHED) >= 2 * 3 + 3


def test_followers_replicate_through_their_fetch_sessions(metered_engine):
    """Followers fetch in incremental sessions (engine/broker/fetch_session_handler.py): one per
    follower and leader, holding the partitions it follows there. Records produced after the
    sessions opened reach every replica through them: acks=all is answered, and no follower
    falls out of the ISR."""
    cached = total(metered_engine, PARTITIONS_CACHED)        # before the topic: its followers may be quick
    admin = KafkaAdminClient(bootstrap_servers=metered_engine.bootstrap)
    admin.create_topics([NewTopic("in-sessions", num_partitions=6, replication_factor=3)])
    admin.close()
    wait_until(lambda: total(metered_engine, SESSIONS) >= FOLLOWER_SESSIONS
               and total(metered_engine, PARTITIONS_CACHED) >= cached + 2 * 6, timeout=30,
               message="the new topic's partitions in the followers' sessions")
    producer = KafkaProducer(bootstrap_servers=metered_engine.bootstrap, acks="all", request_timeout_ms=20_000)
    try:
        for round_ in range(5):
            sent = [producer.send("in-sessions", value=b"r%d" % round_, partition=p) for p in range(6)]
            for future in sent:
                future.get(timeout=20)
    finally:
        producer.close()
    assert total(metered_engine, "kafka_server_replicamanager_underreplicatedpartitions") == 0
    assert total(metered_engine, "kafka_server_replicamanager_isrshrinks_total") == 0


def test_requests_errors_and_latency_per_api(metered_engine):
    producer = KafkaProducer(bootstrap_servers=metered_engine.bootstrap)
    producer.send("requests-topic", b"v").get(timeout=30)
    producer.close()
    found = {}
    for b in range(3):
        for key, value in samples(scrape(metered_engine, b)).items():
            found[key] = found.get(key, 0) + value
    produce_requests = sum(v for (name, labels), v in found.items()
                           if name == "kafka_network_requestmetrics_requests_total" and ("request", "Produce") in labels)
    assert produce_requests >= 1
    assert found["kafka_network_requestmetrics_errors_total", (("error", "NONE"), ("request", "Produce"))] >= 1
    assert found["kafka_network_requestmetrics_totaltimems_count", (("request", "Produce"),)] >= 1
    p99 = found["kafka_network_requestmetrics_totaltimems", (("quantile", "0.99"), ("request", "Metadata"))]
    assert p99 > 0
    assert found["kafka_network_requestmetrics_requestqueuetimems_count", (("request", "Metadata"),)] >= 1


ERRORS = "kafka_network_requestmetrics_errors_total"
UNKNOWN = Errors.UnknownTopicOrPartitionError
NOT_LEADER = Errors.NotLeaderForPartitionError


def errors_counted(engine, broker_id: int, request: str) -> dict[str, float]:
    """{error name: count} of one broker's ErrorsPerSec series for `request`."""
    return {dict(labels)["error"]: value for (name, labels), value in samples(scrape(engine, broker_id)).items()
            if name == ERRORS and ("request", request) in labels}


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {error: after[error] - before.get(error, 0) for error in after if after[error] != before.get(error, 0)}


def test_a_produce_counts_the_error_of_each_partition(metered_engine):
    """A Produce answer has no top-level error: each partition's code is counted, as Kafka's
    ProduceResponse.errorCounts, NONE included."""
    topic = "errors-per-partition"
    admin = KafkaAdminClient(bootstrap_servers=metered_engine.bootstrap)
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
    admin.close()
    client = RawClient(metered_engine.ports[0])
    try:
        def leaders():
            answer = client.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                                                    allow_auto_topic_creation=False), 12, MetadataResponse)
            return {p.partition_index: p.leader_id for p in answer.topics[0].partitions if p.leader_id >= 0}
        wait_until(lambda: len(leaders()) == 3, timeout=30)
        led = leaders()
    finally:
        client.close()
    broker = led[0]
    mine = sorted(p for p, leader in led.items() if leader == broker)
    batch = bytes(seal(records([b"v"]), 1))
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=i, records=batch) for i in range(3)]),
        P(name="no-such-topic", partition_data=[P.PartitionProduceData(index=i, records=batch) for i in range(4)])])

    before = errors_counted(metered_engine, broker, "Produce")
    client = RawClient(metered_engine.ports[broker])
    try:
        answer = client.request(request, 9, ProduceResponse)
    finally:
        client.close()
    codes = sorted(p.error_code for t in answer.responses for p in t.partition_responses)
    assert codes == sorted([0] * len(mine) + [NOT_LEADER.errno] * (3 - len(mine)) + [UNKNOWN.errno] * 4)
    expected = {"NONE": len(mine), "UNKNOWN_TOPIC_OR_PARTITION": 4}
    if len(mine) < 3:
        expected["NOT_LEADER_OR_FOLLOWER"] = 3 - len(mine)   # Kafka's name, not kafka-python's
    assert delta(before, errors_counted(metered_engine, broker, "Produce")) == expected


def test_an_offset_commit_counts_each_unknown_partition(metered_engine):
    group = "errors-per-partition-group"
    client = RawClient(metered_engine.ports[0])
    try:
        def coordinator():
            found = client.request(FindCoordinatorRequest(key=group, key_type=0), 3, FindCoordinatorResponse)
            return found.node_id if found.error_code == 0 else None
        wait_until(lambda: coordinator() is not None, timeout=30)
        broker = coordinator()
    finally:
        client.close()
    T = OffsetCommitRequest.OffsetCommitRequestTopic
    request = OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                                  group_instance_id=None, topics=[T(name="no-such-topic", partitions=[
                                      T.OffsetCommitRequestPartition(partition_index=i, committed_offset=5,
                                                                     committed_leader_epoch=-1, committed_metadata="")
                                      for i in range(5)])])
    before = errors_counted(metered_engine, broker, "OffsetCommit")
    client = RawClient(metered_engine.ports[broker])
    try:
        answer = client.request(request, 8, OffsetCommitResponse)
    finally:
        client.close()
    assert [p.error_code for p in answer.topics[0].partitions] == [UNKNOWN.errno] * 5
    assert delta(before, errors_counted(metered_engine, broker, "OffsetCommit")) == {UNKNOWN.message: 5}


def test_a_fetch_counts_its_top_level_and_each_partition(metered_engine):
    """The Fetch answer is sent zero-copy: its frame is what is counted (Kafka's
    FetchResponse.errorCounts: the top level, then each partition)."""
    F = FetchRequest.FetchTopic
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
                           session_id=0, session_epoch=-1, topics=[F(topic="no-such-topic", partitions=[
                               F.FetchPartition(partition=i, current_leader_epoch=-1, fetch_offset=0,
                                                last_fetched_epoch=-1, log_start_offset=-1,
                                                partition_max_bytes=1 << 20) for i in range(6)])],
                           forgotten_topics_data=[], rack_id="")
    broker = 1
    before = errors_counted(metered_engine, broker, "Fetch")
    client = RawClient(metered_engine.ports[broker])
    try:
        answer = client.request(request, 12, FetchResponse)
    finally:
        client.close()
    assert answer.error_code == 0
    assert [p.error_code for p in answer.responses[0].partitions] == [UNKNOWN.errno] * 6
    counted = delta(before, errors_counted(metered_engine, broker, "Fetch"))
    # Followers' fetches from this broker answer NONE meanwhile: only the unknown partitions are exact.
    assert counted[UNKNOWN.message] == 6 and counted["NONE"] >= 1


def test_a_failed_acks_0_produce_closes_the_connection_and_counts_its_errors(metered_engine):
    """Kafka answers an acks=0 Produce with nothing, and closes the connection when a partition
    failed, so the client looks its leaders up again; one that succeeded keeps the connection."""
    batch = bytes(seal(records([b"v"]), 1))
    P = ProduceRequest.TopicProduceData

    def acks_0(topic: str, partitions: int) -> ProduceRequest:
        return ProduceRequest(transactional_id=None, acks=0, timeout_ms=10000, topic_data=[
            P(name=topic, partition_data=[P.PartitionProduceData(index=i, records=batch) for i in range(partitions)])])
    admin = KafkaAdminClient(bootstrap_servers=metered_engine.bootstrap)
    admin.create_topics([NewTopic("acks-zero", num_partitions=1, replication_factor=3)])
    admin.close()
    # A broker id may be 0, so the condition is a list holding it.
    [leader] = wait_until(lambda: [found] if (found := leader_of(metered_engine, "acks-zero")) is not None else None,
                          timeout=30)
    client = RawClient(metered_engine.ports[leader])
    try:
        send_unanswered(client, acks_0("acks-zero", 1))
        assert client.request(MetadataRequest(topics=[], allow_auto_topic_creation=False), 12,
                              MetadataResponse) is not None           # still open: nothing failed
        before = errors_counted(metered_engine, leader, "Produce")
        send_unanswered(client, acks_0("no-such-topic", 3))
        assert client.read_frame() is None                            # closed, unanswered
    finally:
        client.close()
    assert delta(before, errors_counted(metered_engine, leader, "Produce")) == {UNKNOWN.message: 3}


def send_unanswered(client: RawClient, request: ProduceRequest) -> None:
    client.correlation_id += 1
    request.with_header(correlation_id=client.correlation_id, client_id="t")
    client.send_bytes(request.encode(version=9, header=True, framed=True))


def leader_of(engine, topic: str) -> int | None:
    client = RawClient(engine.ports[0])
    try:
        answer = client.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                                                allow_auto_topic_creation=False), 12, MetadataResponse)
    finally:
        client.close()
    leaders = [p.leader_id for t in answer.topics for p in t.partitions if p.leader_id >= 0]
    return leaders[0] if leaders else None


def test_a_metadata_request_counts_each_topic(metered_engine):
    names = [f"no-such-topic-{i}" for i in range(3)]
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=n) for n in names],
                              allow_auto_topic_creation=False)
    before = errors_counted(metered_engine, 2, "Metadata")
    client = RawClient(metered_engine.ports[2])
    try:
        answer = client.request(request, 12, MetadataResponse)
    finally:
        client.close()
    assert [t.error_code for t in answer.topics] == [UNKNOWN.errno] * 3
    assert delta(before, errors_counted(metered_engine, 2, "Metadata"))[UNKNOWN.message] == 3


def test_replica_and_controller_gauges_follow_a_stopped_broker(metered_engine, tmp_path):
    admin = KafkaAdminClient(bootstrap_servers=metered_engine.bootstrap)
    admin.create_topics([NewTopic("replicated", num_partitions=6, replication_factor=3)])
    admin.close()
    assert total(metered_engine, "kafka_controller_kafkacontroller_activecontrollercount") == 1
    assert total(metered_engine, "kafka_server_replicamanager_underreplicatedpartitions") == 0
    stopped = 2
    urllib.request.urlopen(urllib.request.Request(f"{metered_engine.admin_url}/brokers/{stopped}/stop", method="POST",
                                                  headers={"X-Engine-Admin-Token": metered_engine.admin_token}),
                           timeout=60).read()
    try:
        live = [b for b in range(3) if b != stopped]

        def under_replicated() -> float:
            return sum(samples(scrape(metered_engine, b)).get(
                ("kafka_server_replicamanager_underreplicatedpartitions", ()), 0) for b in live)
        wait_until(lambda: under_replicated() >= 6, timeout=30)
        with pytest.raises(OSError):           # a stopped broker's endpoint is gone, as a dead JVM's
            scrape(metered_engine, stopped)
        shrinks = sum(samples(scrape(metered_engine, b))[("kafka_server_replicamanager_isrshrinks_total", ())]
                      for b in live)
        assert shrinks == 0      # a controlled shutdown moves the ISR through the controller, not a shrink
    finally:
        urllib.request.urlopen(urllib.request.Request(f"{metered_engine.admin_url}/brokers/{stopped}/start",
                                                      method="POST",
                                                      headers={"X-Engine-Admin-Token": metered_engine.admin_token}),
                               timeout=60).read()
    wait_until(lambda: total(metered_engine, "kafka_server_replicamanager_underreplicatedpartitions") == 0, timeout=60)
    assert total(metered_engine, "kafka_server_replicamanager_isrexpands_total") >= 6


def test_promtool_accepts_every_broker_endpoint(metered_engine):
    for b in range(3):
        result = check_metrics(scrape(metered_engine, b))
        assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()


def test_other_paths_are_not_found(metered_engine):
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"http://127.0.0.1:{metered_engine.metrics_port}/admin", timeout=10)
    assert refused.value.code == 404


def test_families_asked_by_name(metered_engine):
    name = "kafka_log_logcleanermanager_uncleanable_partitions_count"
    with urllib.request.urlopen(f"http://127.0.0.1:{metered_engine.metrics_port + 1}/metrics?name[]={name}",
                                timeout=10) as answer:
        found = samples(answer.read())
    assert found == {(name, (("logdirectory", str(metered_engine.data_dir / "broker-1")),)): 0.0}
