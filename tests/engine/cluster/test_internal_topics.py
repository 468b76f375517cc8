"""Every admin API over the internal topics, through kafka-python's and confluent-kafka's admin
clients: what may change them (configs that keep them compacted, reassignments, elections) and
what is refused with a readable error (partition counts, cleanup policies that would delete,
DeleteRecords, deletion, creation). A group's committed offsets and a transactional id's
coordinator survive all of it."""
from types import SimpleNamespace

import kafka.errors as Errors
import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewPartitions
from confluent_kafka.admin import ConfigResource as ConfigResource_
from kafka import TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.structs import OffsetAndMetadata

from engine.cluster import internal_topics
from tests.engine.cluster.helpers import partition_state
from tests.support.engine_process import EngineProcess
from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

OFFSETS, TXN, SHARE_STATE = "__consumer_offsets", "__transaction_state", "__share_group_state"
COUNT = 5
CONFIGS = {"offsets.topic.num.partitions": str(COUNT), "transaction.state.log.num.partitions": str(COUNT),
           "offsets.topic.replication.factor": "2", "transaction.state.log.replication.factor": "2",
           "transaction.state.log.min.isr": "1", "group.initial.rebalance.delay.ms": "0"}
GROUP, TOPIC, TRANSACTIONAL_ID = "keeper", "kept", "txn-keeper"
COMMITTED = {TopicPartition(TOPIC, 0): 7, TopicPartition(TOPIC, 1): 11}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    engine = EngineProcess(tmp_path_factory.mktemp("internal") / "data", brokers=3, admin=False,
                           configs=CONFIGS).start()
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, request_timeout_ms=30000)
    admin.create_topics({TOPIC: {"num_partitions": 2, "replication_factor": 2}})
    producer = Producer({"bootstrap.servers": engine.bootstrap, "transactional.id": TRANSACTIONAL_ID, "log_level": 2})
    producer.init_transactions(30)          # creates __transaction_state
    producer.begin_transaction()
    for i in range(20):
        producer.produce(TOPIC, f"v{i}".encode(), partition=i % 2)
    producer.commit_transaction(30)
    wait_until(lambda: committed(engine.bootstrap) is not None, message="the group's coordinator")
    admin.alter_group_offsets(GROUP, {tp: OffsetAndMetadata(offset, "", -1) for tp, offset in COMMITTED.items()})
    assert committed(engine.bootstrap) == COMMITTED
    yield SimpleNamespace(engine=engine, admin=admin, confluent=AdminClient({"bootstrap.servers": engine.bootstrap}))
    admin.close()
    engine.kill()


def committed(bootstrap: str) -> dict | None:
    """The group's committed offsets, asked with a new admin client (kafka-python's keeps the
    coordinator it found, even after NOT_COORDINATOR); None while it has no coordinator."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        found = admin.list_group_offsets({GROUP: None})[GROUP]
    except (Errors.CoordinatorNotAvailableError, Errors.NodeNotReadyError, Errors.NotCoordinatorError,
            Errors.CoordinatorLoadInProgressError):     # moving, or loading on its new broker
        return None
    finally:
        admin.close()
    return {tp: meta.offset for tp, meta in found.items()}


def topic_configs(admin, name: str) -> dict[str, str]:
    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name)], config_filter="all")
    return {key: data["value"] for key, data in described["topic"][name].items()}


def partition_count(admin, name: str) -> int:
    return len(admin.describe_topics([name])[0]["partitions"])


def transactional_round_trip(bootstrap: str) -> None:
    """The transactional id still finds its coordinator and its epoch goes on."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": TRANSACTIONAL_ID, "log_level": 2})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(TOPIC, b"again", partition=0)
    producer.commit_transaction(30)


@pytest.mark.parametrize("name", [OFFSETS, TXN])
def test_create_partitions_on_an_internal_topic_is_refused_and_nothing_moves(cluster, name):
    answer = cluster.admin.create_partitions({name: 57}, raise_errors=False).results[0]
    assert answer.error_code == Errors.InvalidRequestError.errno
    assert answer.error_message.startswith(f"Cannot change the partition count of internal topic {name}: ")
    assert f"one of {COUNT} partitions" in answer.error_message
    future = cluster.confluent.create_partitions([NewPartitions(name, 6)], validate_only=True)[name]
    with pytest.raises(KafkaException, match="Cannot change the partition count of internal topic"):
        future.result(30)
    assert partition_count(cluster.admin, name) == COUNT
    assert committed(cluster.engine.bootstrap) == COMMITTED
    transactional_round_trip(cluster.engine.bootstrap)


def incremental(admin, name: str, configs: dict) -> str:
    """kafka-python's IncrementalAlterConfigs: 'OK' or the error as it prints it."""
    resource = ConfigResource(ConfigResourceType.TOPIC, name, configs=configs)
    return admin.alter_configs([resource], incremental=True, raise_on_unknown=False)["topic"][name]


def legacy(confluent, name: str, configs: dict) -> None:
    """confluent-kafka's AlterConfigs: replaces every override of the topic with `configs`."""
    confluent.alter_configs([ConfigResource_("topic", name, set_config=configs)])[
        ConfigResource_("topic", name)].result(30)


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated")     # the legacy API, on purpose
def test_configs_may_change_but_the_internal_topics_stay_compacted(cluster):
    assert incremental(cluster.admin, OFFSETS, {"segment.bytes": "52428800"}) == "OK"
    for policy in ("delete", "compact,delete"):
        answer = incremental(cluster.admin, OFFSETS, {"cleanup.policy": policy})
        assert answer.startswith("[Error 40] InvalidConfigurationError: Internal topic __consumer_offsets must stay "
                                 f"compacted: cleanup.policy={','.join(sorted(policy.split(',')))} would let "
                                 "retention delete its committed offsets"), answer
    reset = cluster.admin.reset_configs([ConfigResource(ConfigResourceType.TOPIC, TXN, configs={"cleanup.policy": None})])
    assert "must stay compacted" in reset["topic"][TXN]            # its default is the broker's: delete
    # The legacy AlterConfigs replaces every override: without cleanup.policy it would reset it.
    with pytest.raises(KafkaException, match="must stay compacted: cleanup.policy=delete"):
        legacy(cluster.confluent, TXN, {"segment.bytes": "52428800"})
    legacy(cluster.confluent, TXN, {"segment.bytes": "52428800", "cleanup.policy": "compact"})
    for name in (OFFSETS, TXN):
        values = topic_configs(cluster.admin, name)
        assert values["cleanup.policy"] == "compact" and values["segment.bytes"] == "52428800"
    assert committed(cluster.engine.bootstrap) == COMMITTED


def test_delete_records_of_an_internal_topic_is_kafkas_invalid_topic(cluster):
    with pytest.raises(Errors.InvalidTopicError):
        cluster.admin.delete_records({TopicPartition(OFFSETS, 0): 0})
    assert committed(cluster.engine.bootstrap) == COMMITTED


def test_internal_topics_cannot_be_deleted_or_created(cluster):
    deleted = cluster.admin.delete_topics([OFFSETS, TXN], raise_errors=False)
    assert {r["name"]: (r["error_code"], r["error_message"]) for r in deleted["topics"]} == {
        name: (Errors.InvalidRequestError.errno, f"{name} is an internal topic and cannot be deleted")
        for name in (OFFSETS, TXN)}
    created = cluster.admin.create_topics({TXN: {"num_partitions": 1}}, raise_errors=False)
    assert created["topics"][0]["error_code"] == Errors.InvalidRequestError.errno
    assert partition_count(cluster.admin, TXN) == COUNT


def test_reassignment_and_election_move_an_offsets_partition_and_keep_the_offsets(cluster):
    bootstrap, index = cluster.engine.bootstrap, internal_topics_index(GROUP)
    _, replicas, _ = partition_state(bootstrap, OFFSETS)[index]
    target = [next(b for b in range(3) if b not in replicas), replicas[0]]
    cluster.admin.alter_partition_reassignments({TopicPartition(OFFSETS, index): target})
    wait_until(lambda: partition_state(bootstrap, OFFSETS)[index][1] == target, timeout=60,
               message="the reassignment to complete")
    cluster.admin.elect_leaders(0, {OFFSETS: [index]}, raise_errors=False)
    wait_until(lambda: partition_state(bootstrap, OFFSETS)[index][0] == target[0], timeout=60,
               message="the preferred replica to lead")
    assert wait_until(lambda: committed(cluster.engine.bootstrap), timeout=60, message="the new coordinator") == COMMITTED


def internal_topics_index(group: str) -> int:
    from engine.coordinator.group_store import partition_for
    return partition_for(group, COUNT)


def auto_creating_metadata(topic: str) -> MetadataRequest:
    """A Metadata request for `topic` that asks the broker to create it, as a client's first use does."""
    return MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=True)


def test_metadata_auto_creation_makes_the_transaction_log_with_its_own_settings(engine_factory):
    """Not num.partitions and the broker's cleanup policy: transaction.state.log.* as on first use."""
    engine = engine_factory(brokers=1, admin=False, configs={"transaction.state.log.num.partitions": "4",
                                                             "transaction.state.log.replication.factor": "1"})
    client = RawClient(engine.ports[0])
    try:
        request = auto_creating_metadata(TXN)
        first = client.request(request, 9, MetadataResponse).topics[0]
        assert first.error_code == Errors.LeaderNotAvailableError.errno          # created, as Kafka answers
        again = wait_until(lambda: (t := client.request(request, 9, MetadataResponse).topics[0]).error_code == 0
                           and t, message="the transaction log to have leaders")
        assert len(again.partitions) == 4 and again.is_internal
    finally:
        client.close()
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap)
    try:
        assert topic_configs(admin, TXN)["cleanup.policy"] == "compact"
    finally:
        admin.close()


def test_a_partition_count_changed_between_starts_is_reported_once(caplog):
    topic = SimpleNamespace(partitions=dict.fromkeys(range(COUNT)))
    image = SimpleNamespace(topics={OFFSETS: topic})
    config = SimpleNamespace(get={"offsets.topic.num.partitions": COUNT + 2}.get)
    internal_topics.report_count_mismatch(OFFSETS, image, config)
    internal_topics.report_count_mismatch(OFFSETS, image, config)
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors == [f"{OFFSETS} has {COUNT} partitions but offsets.topic.num.partitions is {COUNT + 2}: each "
                      f"group maps to one of {COUNT + 2} partitions, so some have no coordinator and others are "
                      f"looked for in a partition without their committed offsets; set "
                      f"offsets.topic.num.partitions={COUNT} again"]


def test_a_topic_named_like_an_internal_one_but_for_dots_is_refused(engine_factory):
    """'__consumer.offsets' would collide with `__consumer_offsets`, which the brokers create on
    first use only: once it existed, no group could ever find a coordinator."""
    engine = engine_factory(brokers=1, admin=False, configs={"offsets.topic.num.partitions": "2",
                                                             "offsets.topic.replication.factor": "1"})
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, request_timeout_ms=30000)
    try:
        names = ("__consumer.offsets", "__transaction.state", "__share.group.state")
        created = admin.create_topics({name: {"num_partitions": 1} for name in names}, raise_errors=False)
        assert {t["name"]: (t["error_code"], t["error_message"]) for t in created["topics"]} == {
            name: (Errors.InvalidTopicError.errno, f"Topic '{name}' collides with internal topic: {internal}")
            for name, internal in zip(names, (OFFSETS, TXN, SHARE_STATE))}
        admin.create_topics({TOPIC: {"num_partitions": 1}})
        wanted = {TopicPartition(TOPIC, 0): OffsetAndMetadata(3, "", -1)}

        def commit():
            try:
                admin.alter_group_offsets(GROUP, wanted)
            except (Errors.CoordinatorNotAvailableError, Errors.NotCoordinatorError,
                    Errors.CoordinatorLoadInProgressError):
                return False
            return True
        wait_until(commit, message="the group's coordinator")
        assert committed(engine.bootstrap) == {TopicPartition(TOPIC, 0): 3}
    finally:
        admin.close()


def test_the_share_state_topic_is_internal_to_every_admin_api(engine_factory):
    """As Kafka's Topic.INTERNAL_TOPICS: no client appends to `__share_group_state`, deletes it
    or its records, or changes its partition count (a share partition's key would map to a
    partition without its state); auto-creation makes it with the share coordinator's settings."""
    share_state = SHARE_STATE
    engine = engine_factory(brokers=1, admin=False, configs={"share.coordinator.state.topic.num.partitions": "3",
                                                             "share.coordinator.state.topic.replication.factor": "1"})
    client = RawClient(engine.ports[0])
    try:
        request = auto_creating_metadata(share_state)
        wait_until(lambda: client.request(request, 9, MetadataResponse).topics[0].error_code == 0,
                   message="the share state topic to have leaders")
    finally:
        client.close()
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, request_timeout_ms=30000)
    try:
        assert partition_count(admin, share_state) == 3
        configs = topic_configs(admin, share_state)
        assert (configs["cleanup.policy"], configs["retention.ms"]) == ("delete", "-1")
        producer = Producer({"bootstrap.servers": engine.bootstrap, "retries": 0, "log_level": 2})
        errors = []
        producer.produce(share_state, b"forged", partition=0, on_delivery=lambda err, _: errors.append(err))
        assert producer.flush(30) == 0
        assert [e.code() for e in errors] == [KafkaError.TOPIC_EXCEPTION]
        grown = admin.create_partitions({share_state: 10}, raise_errors=False).results[0]
        assert grown.error_code == Errors.InvalidRequestError.errno
        assert grown.error_message.startswith(f"Cannot change the partition count of internal topic {share_state}")
        with pytest.raises(Errors.InvalidTopicError):
            admin.delete_records({TopicPartition(share_state, 0): -1})
        deleted = admin.delete_topics([share_state], raise_errors=False)["topics"][0]
        assert (deleted["error_code"], deleted["error_message"]) == (
            Errors.InvalidRequestError.errno, f"{share_state} is an internal topic and cannot be deleted")
        created = admin.create_topics({share_state: {"num_partitions": 1}}, raise_errors=False)["topics"][0]
        assert created["error_code"] == Errors.InvalidRequestError.errno
        assert partition_count(admin, share_state) == 3
    finally:
        admin.close()
