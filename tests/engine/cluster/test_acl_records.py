"""ACLs in the controller: Kafka's rules for CreateAcls and DeleteAcls, and the metadata journal
keeping them across a restart (the journal replayed, and the snapshot of a clean shutdown)."""
import kafka.errors as Errors
import pytest

from engine.cluster import acl_records
from engine.cluster.controller import Controller
from engine.cluster.journal import MetadataCorruptError, MetadataJournal
from engine.config import BrokerConfig
from kafka_rules.acls import (ALLOW, ANY, CLUSTER, DENY, DESCRIBE, LITERAL, MATCH, PREFIXED, READ, TOPIC, USER,
                              WRITE, AclBinding, AclFilter)

READ_ORDERS = AclBinding(TOPIC, "orders", LITERAL, "User:alice", "*", READ, ALLOW)
WRITE_PREFIX = AclBinding(TOPIC, "ord", PREFIXED, "User:bob", "*", WRITE, ALLOW)


def bindings(controller) -> set[AclBinding]:
    return set(controller.image.acls.by_id.values())


def test_acls_survive_a_crash_and_a_clean_shutdown(tmp_path):
    controller = Controller(tmp_path, BrokerConfig())
    assert controller.create_acls([READ_ORDERS, WRITE_PREFIX]) == [None, None]
    controller._journal.close()                     # no snapshot: the next start replays the journal
    replayed = Controller(tmp_path, BrokerConfig())
    assert bindings(replayed) == {READ_ORDERS, WRITE_PREFIX}
    (removed,) = replayed.delete_acls([AclFilter(principal="User:bob")])
    assert removed == [WRITE_PREFIX]
    replayed.shutdown()                             # a snapshot of the image, then a new journal
    restarted = Controller(tmp_path, BrokerConfig())
    assert bindings(restarted) == {READ_ORDERS}
    assert list(restarted.image.acls.prefixes_of(TOPIC, "orders")) == []


def test_creating_an_existing_binding_succeeds_and_stores_it_once(tmp_path):
    controller = Controller(tmp_path, BrokerConfig())
    assert controller.create_acls([READ_ORDERS, READ_ORDERS]) == [None, None]
    assert controller.create_acls([READ_ORDERS]) == [None]
    assert len(controller.image.acls) == 1


@pytest.mark.parametrize("binding, message", [
    (AclBinding(ANY, "orders", LITERAL, "User:a", "*", READ, ALLOW), "Invalid resourceType ANY"),
    (AclBinding(99, "orders", LITERAL, "User:a", "*", READ, ALLOW), "Invalid resourceType UNKNOWN"),
    (AclBinding(TOPIC, "orders", MATCH, "User:a", "*", READ, ALLOW), "Invalid patternType MATCH"),
    (AclBinding(TOPIC, "orders", 0, "User:a", "*", READ, ALLOW), "Invalid patternType UNKNOWN"),
    (AclBinding(TOPIC, "orders", LITERAL, "User:a", "*", ANY, ALLOW), "Invalid operation ANY"),
    (AclBinding(TOPIC, "orders", LITERAL, "User:a", "*", READ, ANY), "Invalid permissionType ANY"),
    (AclBinding(TOPIC, "", LITERAL, "User:a", "*", READ, ALLOW), "Resource name should not be empty"),
    (AclBinding(CLUSTER, "other", LITERAL, "User:a", "*", DESCRIBE, ALLOW), "only valid name for the CLUSTER"),
    (AclBinding(TOPIC, "orders", LITERAL, "alice", "*", READ, ALLOW), "principalType:principalName"),
    (AclBinding(USER, "User:b", PREFIXED, "User:a", "*", READ, DENY), "DENY ACL on USER"),
    (AclBinding(USER, "*", LITERAL, "User:a", "*", READ, DENY), "DENY ACL on USER"),
])
def test_bindings_kafka_refuses_get_invalid_request_and_the_rest_go_through(tmp_path, binding, message):
    controller = Controller(tmp_path, BrokerConfig())
    refused, accepted = controller.create_acls([binding, READ_ORDERS])
    assert refused.error is Errors.InvalidRequestError and message in refused.message
    assert accepted is None and bindings(controller) == {READ_ORDERS}


def test_delete_filters_remove_each_match_once_and_an_unknown_filter_fails_alone(tmp_path):
    controller = Controller(tmp_path, BrokerConfig())
    controller.create_acls([READ_ORDERS, WRITE_PREFIX])
    by_name, unknown, everything = controller.delete_acls([
        AclFilter(TOPIC, "orders", MATCH), AclFilter(operation=0), AclFilter()])
    assert set(by_name) == {READ_ORDERS, WRITE_PREFIX}      # MATCH: the literal name and the prefix "ord"
    assert unknown.error is Errors.InvalidRequestError
    assert set(everything) == {READ_ORDERS, WRITE_PREFIX}
    assert bindings(controller) == set()
    Controller(tmp_path, BrokerConfig())          # the two filters' removals replay: each id removed once


def test_a_journal_record_that_cannot_apply_stops_the_start(tmp_path):
    controller = Controller(tmp_path, BrokerConfig())
    controller._journal.close()
    journal = MetadataJournal(tmp_path)
    journal.append([acl_records.entry_record("00000000-0000-0000-0000-000000000001", READ_ORDERS),
                    acl_records.remove_record("00000000-0000-0000-0000-000000000002")])
    journal.close()
    with pytest.raises(MetadataCorruptError, match="no ACL with id"):
        Controller(tmp_path, BrokerConfig())
