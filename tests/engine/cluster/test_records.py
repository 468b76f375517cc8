"""Metadata records checked as a batch before the controller journals them: a record the image
would refuse never reaches the journal, so the next start still loads it."""
import sys
import uuid

import kafka.errors as Errors
import pytest

from engine.cluster import acl_records, records as R
from engine.cluster.controller import Controller
from engine.cluster.metadata import MetadataImage
from engine.config import BrokerConfig
from engine.errors import ApiError
from kafka_rules.acls import ALLOW, LITERAL, READ, TOPIC, AclBinding


def a_topic(name: str = "orders") -> tuple[uuid.UUID, dict]:
    topic_id = uuid.uuid4()
    return topic_id, R.topic_record(name, topic_id, {})


def test_a_batch_may_refer_to_what_its_earlier_records_create_or_remove():
    image = MetadataImage()
    topic_id, topic = a_topic()
    new_id, again = a_topic()
    R.check_batch(image, [topic, R.partition_record(topic_id, 0, [1], 1, 0, [1]),
                          R.config_record("topic", "orders", "retention.ms", 1000)])
    R.apply(image, topic)
    R.check_batch(image, [R.remove_topic_record(topic_id), again, R.partition_record(new_id, 0, [1], 1, 0, [1])])
    with pytest.raises(R.MetadataRecordError, match="unknown topic id"):
        R.check_batch(image, [R.remove_topic_record(topic_id), R.partition_record(topic_id, 0, [1], 1, 0, [1])])
    with pytest.raises(R.MetadataRecordError, match="config for unknown topic"):
        R.check_batch(image, [R.remove_topic_record(topic_id), R.config_record("topic", "orders", "x", 1)])


def test_a_batch_sees_its_own_acls():
    image = MetadataImage()
    binding = AclBinding(TOPIC, "orders", LITERAL, "User:alice", "*", READ, ALLOW)
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    with pytest.raises(R.MetadataRecordError, match="already present"):
        R.check_batch(image, [acl_records.entry_record(first, binding), acl_records.entry_record(second, binding)])
    R.check_batch(image, [acl_records.entry_record(first, binding), acl_records.remove_record(first),
                          acl_records.entry_record(second, binding)])
    with pytest.raises(R.MetadataRecordError, match="no ACL"):
        R.check_batch(image, [acl_records.entry_record(first, binding), acl_records.remove_record(first),
                              acl_records.remove_record(first)])


def traced_lines(run) -> int:
    """How many lines of Python `run` executes: a count of work that no load on the machine changes."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        count += event == "line"
        return tracer
    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return count


def acl_entries(count: int) -> list[dict]:
    bindings = [AclBinding(TOPIC, f"t{n}", LITERAL, "User:alice", "*", READ, ALLOW) for n in range(count)]
    return acl_records.create(MetadataImage().acls, bindings)[1]


def test_a_batch_of_many_acls_is_checked_in_linear_time():
    """A CreateAcls may carry tens of thousands of bindings, and the check runs on the event
    loop: looking each binding up among the batch's others took 4 s for 8,000 and would take
    a minute for 30,000, while every connection of the process waited. Twice the bindings is
    twice the work, not four times."""
    small, large = acl_entries(1_000), acl_entries(2_000)
    work = [traced_lines(lambda records=records: R.check_batch(MetadataImage(), records)) for records in (small, large)]
    assert work[1] < 2.5 * work[0], work
    image, last = MetadataImage(), acl_records.binding_of(large[-1])
    with pytest.raises(R.MetadataRecordError, match="already present"):
        R.check_batch(image, [*large, acl_records.entry_record(str(uuid.uuid4()), last)])
    R.check_batch(image, [*large, acl_records.remove_record(large[-1]["id"]),
                          acl_records.entry_record(str(uuid.uuid4()), last)])


@pytest.mark.parametrize("record, reason", [
    ({"type": "no_such_type"}, "unknown record type"),
    ({"type": "cluster"}, "needs cluster_id"),
    ({"type": "controller", "controller_id": 1, "controller_epoch": -3}, "controller_epoch must be"),
    (R.client_quota_record([["host", "h"]], "producer_byte_rate", 10.0), "bad client quota entity"),
    (R.config_record("broker", "1", 7, "x"), "must be strings"),
])
def test_a_record_the_image_would_refuse_is_named_with_its_reason(record, reason):
    with pytest.raises(R.MetadataRecordError, match=reason) as refused:
        R.check_batch(MetadataImage(), [record])
    assert "would not apply" in str(refused.value)


def test_a_refused_commit_writes_nothing_and_the_journal_still_loads(tmp_path):
    controller = Controller(tmp_path, BrokerConfig())
    controller.register_broker(1, "127.0.0.1", 9092)
    controller.create_topic("orders", 1, 1)
    version = controller.image.version
    good = R.config_record("topic", "orders", "retention.ms", 1000)
    bad = R.client_quota_record([["host", "h"]], "producer_byte_rate", 10.0)
    with pytest.raises(ApiError) as refused:
        controller._commit([good, bad])
    assert refused.value.error is Errors.UnknownError
    assert controller.image.version == version
    assert "retention.ms" not in controller.image.topics["orders"].configs
    controller._journal.close()                     # no snapshot: the next start replays the journal
    restarted = Controller(tmp_path, BrokerConfig())
    assert set(restarted.image.topics) == {"orders"}
    assert restarted.image.topics["orders"].configs == {}
