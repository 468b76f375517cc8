"""A CreateTopics batch validated over several turns of the event loop: what another request
did meanwhile is checked once more before the one commit."""
import kafka.errors as Errors

from engine.cluster.controller import Controller
from engine.config import BrokerConfig


def controller(tmp_path, **configs) -> Controller:
    made = Controller(tmp_path, BrokerConfig(static=configs))
    made.register_broker(0, "127.0.0.1", 9092)
    made.unfence_broker(0)
    return made


def test_a_name_taken_meanwhile_is_withdrawn_from_the_batch_not_created_twice(tmp_path):
    cluster = controller(tmp_path)
    batch = cluster.new_topics()
    batch.add("orders", 1, 1)
    batch.add("payments", 1, 1)
    cluster.create_topic("orders", 3, 1)               # another request, between two slices
    withdrawn = batch.withdraw_taken()
    assert {name: exc.code for name, exc in withdrawn.items()} == {"orders": Errors.TopicAlreadyExistsError.errno}
    batch.commit()
    assert len(cluster.image.topics["orders"].partitions) == 3      # the other request's topic, untouched
    assert "payments" in cluster.image.topics


def test_a_batch_that_would_now_pass_the_partition_limit_is_withdrawn_whole(tmp_path):
    cluster = controller(tmp_path, **{"max.partitions": "10"})
    batch = cluster.new_topics()
    batch.add("a", 4, 1)
    batch.add("b", 4, 1)
    cluster.create_topic("c", 5, 1)
    withdrawn = batch.withdraw_taken()
    assert {exc.code for exc in withdrawn.values()} == {Errors.PolicyViolationError.errno} and set(withdrawn) == {"a", "b"}
    assert "over its limit of 10 (max.partitions)" in withdrawn["a"].message
    batch.commit()
    assert set(cluster.image.topics) == {"c"}
