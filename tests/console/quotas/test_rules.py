"""Kafka's quota rules and units, as the console applies them before asking a cluster."""
import pytest

from console.errors import InvalidInput
from console.quotas.rules import entity_check, entity_label, key_check, parse_value, value_check, value_display


@pytest.mark.parametrize("key, value, shown", [
    ("producer_byte_rate", 1048576, "1 MiB/s (1,048,576 bytes/s)"),
    ("consumer_byte_rate", 1536, "1.5 KiB/s (1,536 bytes/s)"),
    ("consumer_byte_rate", 512, "512 bytes/s"),
    ("producer_byte_rate", 2**63 - 1, "unlimited"),                  # Kafka's Long.MAX_VALUE: no quota
    ("request_percentage", 1.7976931348623157e308, "unlimited"),      # Double.MAX_VALUE
    ("request_percentage", 250, "250%"),
    ("controller_mutation_rate", 12.5, "12.5 mutations/s"),
    ("connection_creation_rate", 30, "30 connections/s"),
    ("some_future_key", 3, "3"),
])
def test_values_read_in_their_units(key, value, shown):
    assert value_display(key, value) == shown


def test_entities_are_named_user_first_and_sorted_by_type():
    entity = entity_check((("user", None), ("client-id", "app")))
    assert entity == (("client-id", "app"), ("user", None))
    assert entity_label(entity) == "default user, client-id 'app'"
    assert entity_check((("ip", "::1"),)) == (("ip", "::1"),)
    assert entity_check((("ip", None),)) == (("ip", None),)


@pytest.mark.parametrize("entity, message", [
    ((("user", "a"), ("user", "b")), "at most one of each type"),
    ((("group", "a"),), "at most one of each type"),
    ((("ip", None), ("client-id", None)), "cannot be combined"),
    ((("user", " "),), "Give the user a name"),
    ((("ip", "example.com"),), "not an IPv4 or IPv6 address"),
])
def test_entities_kafka_does_not_allow_are_refused(entity, message):
    with pytest.raises(InvalidInput, match=message):
        entity_check(entity)


def test_keys_and_values_follow_kafkas_types():
    assert key_check((("ip", None),), "connection_creation_rate").unit == "connections/s"
    assert value_check("request_percentage", 0.5) == 0.5
    assert value_check("producer_byte_rate", 1024) == 1024.0
    for key, value, message in [("producer_byte_rate", 0.5, "whole number"),
                                ("connection_creation_rate", 1.25, "whole number"),
                                ("controller_mutation_rate", 0, "greater than 0"),
                                ("controller_mutation_rate", float("inf"), "greater than 0"),
                                ("controller_mutation_rate", 1e19, "at most")]:
        with pytest.raises(InvalidInput, match=message):
            value_check(key, value)


def test_what_the_page_says_the_engine_enforces_is_what_the_engine_enforces():
    """The quota form's last column, checked against the engine's own list of keys it takes."""
    from engine.cluster.client_quotas import SUPPORTED_KEYS
    from console.quotas.rules import KEYS
    assert {k for k, q in KEYS.items() if q.engine_enforces} == set(SUPPORTED_KEYS)
    assert all(("INVALID_REQUEST (42)" in q.engine) != q.engine_enforces for q in KEYS.values())


def test_byte_rates_are_typed_as_sizes():
    assert parse_value("producer_byte_rate", "10MiB") == 10 * 1024 * 1024
    assert parse_value("producer_byte_rate", "512KB/s") == 512_000
    assert parse_value("producer_byte_rate", "2048") == 2048
    assert parse_value("controller_mutation_rate", "12.5") == 12.5
    with pytest.raises(InvalidInput, match="“ten” is not a size such as 10MiB"):
        parse_value("consumer_byte_rate", "ten")
    with pytest.raises(InvalidInput, match="“10MiB” is not a number"):
        parse_value("request_percentage", "10MiB")
