"""One DeleteTopics request naming hundreds of topics, on a real engine: exactly those go
(their metadata, their log dirs and the offsets groups committed on them), an unknown name
among them is refused alone, the topics left keep their records and their groups' committed
offsets, and a restart finds the same state."""
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient
import kafka.errors as Errors
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse

from tests.support.raw_client import RawClient
from tests.support.waiting import wait_until

DOOMED = [f"doomed-{i:03d}" for i in range(300)]
PARTITIONS = {name: 4 if i % 10 == 0 else 1 for i, name in enumerate(DOOMED)}    # 390 partitions in all
KEPT = {"kept": 3, "doomed-kept": 1}             # a name that shares the doomed topics' prefix stays too
UNKNOWN = "never-created"
GROUP = "kept-readers"


def create_topics(port: int, partitions: dict[str, int]) -> None:
    T = CreateTopicsRequest.CreatableTopic
    client = RawClient(port, timeout=120)
    try:
        answer = client.request(CreateTopicsRequest(
            topics=[T(name=n, num_partitions=p, replication_factor=1, assignments=[], configs=[])
                    for n, p in partitions.items()], timeout_ms=60000, validate_only=False), 5, CreateTopicsResponse)
    finally:
        client.close()
    assert {t.name: t.error_code for t in answer.topics} == dict.fromkeys(partitions, 0)


def delete_topics(port: int, names: list[str]) -> list[int]:
    client = RawClient(port, timeout=120)
    try:
        answer = client.request(DeleteTopicsRequest(topic_names=names, timeout_ms=60000), 4, DeleteTopicsResponse)
    finally:
        client.close()
    assert [r.name for r in answer.responses] == names
    return [r.error_code for r in answer.responses]


def produce_kept(bootstrap: str) -> dict[tuple[str, int], list[bytes]]:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    sent = {}
    for topic, count in KEPT.items():
        for partition in range(count):
            values = [f"{topic}/{partition}/{i}".encode() for i in range(5)]
            for value in values:
                producer.produce(topic, value, partition=partition)
            sent[(topic, partition)] = values
    assert producer.flush(30) == 0
    return sent


def committed_offsets(bootstrap: str) -> dict[tuple[str, int], int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    try:
        wanted = [TopicPartition(t, p) for t, count in KEPT.items() for p in range(count)]
        return {(tp.topic, tp.partition): tp.offset for tp in consumer.committed(wanted, timeout=30)}
    finally:
        consumer.close()


def commit_offsets(bootstrap: str, offsets: dict[tuple[str, int], int]) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def read_all(bootstrap: str, topic: str, partition: int, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        values = []
        wait_until(lambda: (values.extend(m.value() for m in consumer.consume(count, 1) if not m.error())
                            or len(values) >= count), timeout=30, message=f"the records of {topic}-{partition}")
        return values
    finally:
        consumer.close()


def topic_names(bootstrap: str) -> set[str]:
    return {t for t in AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=30).topics
            if not t.startswith("__")}


def doomed_dirs(engine) -> list[str]:
    """Log dirs of the deleted partitions, renamed aside or not (`<topic>-<p>[.<id>-delete|-stray]`)."""
    names = {f"{topic}-{p}" for topic, count in PARTITIONS.items() for p in range(count)}
    return [d.name for d in (engine.data_dir / "broker-0").iterdir() if d.name.split(".")[0] in names]


def topics_with_offsets(bootstrap: str) -> set[str]:
    """The topics the group has committed offsets on (OffsetFetch for all of them)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        return {tp.topic for tp in admin.list_group_offsets(GROUP)[GROUP]}
    finally:
        admin.close()


def check_kept(engine, sent: dict[tuple[str, int], list[bytes]], offsets: dict[tuple[str, int], int]) -> None:
    assert topic_names(engine.bootstrap) == set(KEPT)
    assert not doomed_dirs(engine)
    for (topic, partition), values in sent.items():
        assert read_all(engine.bootstrap, topic, partition, len(values)) == values
    assert committed_offsets(engine.bootstrap) == offsets
    assert topics_with_offsets(engine.bootstrap) == set(KEPT)


def test_deleting_hundreds_of_topics_in_one_request_removes_exactly_those(engine_factory):
    engine = engine_factory(brokers=1, admin=False)
    create_topics(engine.ports[0], {**KEPT, **PARTITIONS})
    sent = produce_kept(engine.bootstrap)
    offsets = {key: 2 + key[1] for key in sent}
    commit_offsets(engine.bootstrap, {**offsets, ("doomed-000", 3): 1, ("doomed-005", 0): 1})
    assert topics_with_offsets(engine.bootstrap) == {*KEPT, "doomed-000", "doomed-005"}
    wait_until(lambda: len(doomed_dirs(engine)) == sum(PARTITIONS.values()), timeout=60,
               message="every doomed partition's log to be opened")

    unknown = Errors.UnknownTopicOrPartitionError.errno
    named = DOOMED[:150] + [UNKNOWN] + DOOMED[150:] + [DOOMED[7]]     # the last one twice: gone by then
    assert delete_topics(engine.ports[0], named) == [0] * 150 + [unknown] + [0] * 150 + [unknown]
    wait_until(lambda: not doomed_dirs(engine), timeout=60, message="the deleted partitions' log dirs to go")
    wait_until(lambda: topics_with_offsets(engine.bootstrap) == set(KEPT), timeout=30,
               message="the offsets committed on deleted topics to go")
    check_kept(engine, sent, offsets)

    assert engine.terminate(timeout=60) == 0
    engine.start(timeout=120)
    check_kept(engine, sent, offsets)
    assert delete_topics(engine.ports[0], DOOMED[:2]) == [unknown, unknown]
