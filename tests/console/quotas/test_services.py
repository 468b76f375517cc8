"""Quota services against the real engine: the change happens, the audit log says so, the
event goes out after commit; Kafka's rules and the engine's refusals change nothing."""
import pytest

from console.accounts.models import AuditLogEntry
from console.errors import InvalidInput
from console.kafka_gateway import GatewayError
from console.quotas import services
from tests.console.quotas.conftest import quotas_on

pytestmark = pytest.mark.usefixtures("no_quotas_left")
RATE = "controller_mutation_rate"
ALICE = (("user", "alice"),)


def test_quota_set_changes_and_remove_is_audited_with_old_and_new_values(cluster, users, events,
                                                                          django_capture_on_commit_callbacks):
    operator = users["operator"]
    with django_capture_on_commit_callbacks(execute=True):
        assert services.quota_set(cluster=cluster, actor=operator, entity=ALICE, key=RATE, value=5) is None
        assert services.quota_set(cluster=cluster, actor=operator, entity=ALICE, key=RATE, value=7.5) == 5.0
    assert quotas_on(cluster) == {ALICE: {RATE: 7.5}}
    with django_capture_on_commit_callbacks(execute=True):
        assert services.quota_remove(cluster=cluster, actor=operator, entity=ALICE, key=RATE) == 7.5
    assert quotas_on(cluster) == {}
    entries = list(AuditLogEntry.objects.order_by("id"))
    assert [(e.action, e.target, e.result) for e in entries] == [
        ("quota.set", "user 'alice'", "ok"), ("quota.set", "user 'alice'", "ok"),
        ("quota.remove", "user 'alice'", "ok")]
    assert entries[1].details == {"entity": [{"entity_type": "user", "entity_name": "alice"}], "key": RATE,
                                  "value": 7.5, "old": 5.0}
    assert entries[2].details["old"] == 7.5
    assert [e for e, _ in events] == ["quota.set", "quota.set", "quota.removed"]
    assert events[0][1] == {"cluster": cluster.pk, "entity": "user 'alice'", "key": RATE}


def test_a_key_the_engine_does_not_enforce_is_refused_with_kafkas_code_and_audited(cluster, users, events,
                                                                                    django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(GatewayError) as refused:
            services.quota_set(cluster=cluster, actor=users["operator"], entity=(("ip", "10.0.0.1"),),
                               key="connection_creation_rate", value=3000000000)
    assert refused.value.kafka_code == "INVALID_REQUEST (42)"
    assert "an integer" in str(refused.value) and str(refused.value).endswith(".")
    assert quotas_on(cluster) == {} and events == []
    entry = AuditLogEntry.objects.get(action="quota.set")
    assert entry.result == "failed" and entry.details["kafka_code"] == "INVALID_REQUEST (42)"
    assert entry.details["key"] == "connection_creation_rate" and entry.details["value"] == 3000000000


def test_byte_rate_and_request_quotas_are_set_on_our_engine(cluster, users, django_capture_on_commit_callbacks):
    """The engine enforces producer_byte_rate and consumer_byte_rate (KIP-13) and request_percentage
    (KIP-124), so it stores them."""
    with django_capture_on_commit_callbacks(execute=True):
        services.quota_set(cluster=cluster, actor=users["operator"], entity=ALICE, key="producer_byte_rate",
                           value=1048576)
        services.quota_set(cluster=cluster, actor=users["operator"], entity=ALICE, key="consumer_byte_rate",
                           value=2097152)
        services.quota_set(cluster=cluster, actor=users["operator"], entity=ALICE, key="request_percentage",
                           value=50)
    assert quotas_on(cluster) == {ALICE: {"producer_byte_rate": 1048576.0, "consumer_byte_rate": 2097152.0,
                                          "request_percentage": 50.0}}
    assert AuditLogEntry.objects.filter(action="quota.set", result="ok").count() == 3


@pytest.mark.parametrize("entity, key, value, reason", [
    ((("ip", "10.0.0.1"), ("user", "alice")), RATE, 1, "cannot be combined"),
    ((), RATE, 1, "Name at least one entity"),
    (ALICE, "bytes_per_fortnight", 1, "is not a Kafka client quota"),
    (ALICE, "connection_creation_rate", 1, "not a quota of users and client ids"),
    ((("ip", "10.0.0.1"),), RATE, 1, "not a quota of an IP address"),
    ((("ip", "not-an-ip"),), "connection_creation_rate", 1, "not an IPv4 or IPv6 address"),
    (ALICE, RATE, -1, "greater than 0"),
    (ALICE, RATE, float("nan"), "greater than 0"),
    (ALICE, "producer_byte_rate", 10.5, "whole number"),
    ((("user", "x" * 513),), RATE, 1, "at most 512 characters"),
    ((("client-id", "a\nb"),), RATE, 1, "control characters"),
])
def test_kafkas_rules_are_checked_before_the_cluster_is_asked(cluster, users, entity, key, value, reason):
    with pytest.raises(InvalidInput, match=reason):
        services.quota_set(cluster=cluster, actor=users["operator"], entity=entity, key=key, value=value)
    assert quotas_on(cluster) == {}
    entry = AuditLogEntry.objects.get(action="quota.set")
    assert entry.result == "failed" and reason in entry.details["error"]


def test_removing_a_key_the_entity_does_not_set_is_refused(cluster, users):
    with pytest.raises(InvalidInput, match="user 'alice' has no controller_mutation_rate quota to remove"):
        services.quota_remove(cluster=cluster, actor=users["operator"], entity=ALICE, key=RATE)
    assert AuditLogEntry.objects.get(action="quota.remove").result == "failed"
