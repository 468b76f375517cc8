"""Kafka's order for the client quota that applies: each of the eight entities wins over the
ones after it, for one key at a time, and a default gives each name its own share."""
from kafka_rules.client_quotas import applying_entity, candidates, resolve

ORDER = [
    (("client-id", "app"), ("user", "alice")),
    (("client-id", None), ("user", "alice")),
    (("user", "alice"),),
    (("client-id", "app"), ("user", None)),
    (("client-id", None), ("user", None)),
    (("user", None),),
    (("client-id", "app"),),
    (("client-id", None),),
]


def test_each_entity_wins_over_every_one_after_it():
    assert [entity for entity, _ in candidates("alice", "app")] == ORDER
    for i, entity in enumerate(ORDER):
        quotas = {e: {"producer_byte_rate": float(j + 1)} for j, e in enumerate(ORDER) if j >= i}
        assert applying_entity(quotas, "producer_byte_rate", "alice", "app") == (entity, float(i + 1))


def test_the_key_is_resolved_on_its_own_and_other_clients_fall_through():
    quotas = {(("user", "alice"),): {"producer_byte_rate": 10.0},
              (("client-id", None),): {"consumer_byte_rate": 20.0, "producer_byte_rate": 30.0}}
    assert applying_entity(quotas, "consumer_byte_rate", "alice", "app") == ((("client-id", None),), 20.0)
    assert applying_entity(quotas, "producer_byte_rate", "bob", "app") == ((("client-id", None),), 30.0)
    assert applying_entity(quotas, "controller_mutation_rate", "alice", "app") is None


def test_who_shares_the_rate_follows_kafkas_metric_tags():
    assert resolve({(("user", None),): {"k": 1.0}}, "k", "alice", "app") == (1.0, ("alice", ""))
    assert resolve({(("client-id", "app"),): {"k": 1.0}}, "k", "alice", "app") == (1.0, ("", "app"))
    assert resolve({}, "k", "alice", "app") is None
