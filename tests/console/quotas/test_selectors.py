"""Quota reads against the real engine: the list's order, Kafka's type filter and the name
search; the preview asks the cluster (validate_only) and changes nothing."""
import pytest

from console.kafka_gateway import GatewayError
from console.quotas import selectors
from tests.console.quotas.conftest import quotas_on, set_quota

pytestmark = pytest.mark.usefixtures("no_quotas_left")
RATE = "controller_mutation_rate"


def labels(view) -> list[str]:
    return [row.label for row in view.rows]


def test_the_list_orders_users_then_client_ids_defaults_before_names(cluster):
    for entity in [(("client-id", "b-app"),), (("client-id", None),), (("user", "zed"),), (("user", "amy"),),
                   (("user", None),), (("client-id", "a-app"), ("user", "amy")), (("client-id", None), ("user", None))]:
        set_quota(cluster, entity, RATE, 1000000)
    view = selectors.quota_list(cluster=cluster)
    assert view.supported and view.error is None
    assert labels(view) == ["default user", "default user, default client-id", "user 'amy'",
                            "user 'amy', client-id 'a-app'", "user 'zed'", "default client-id", "client-id 'b-app'"]
    row = view.rows[3]
    assert (row.user.name, row.client_id.name, row.ip) == ("amy", "a-app", None)
    assert row.values[0].display == "1,000,000 mutations/s"
    assert row.fields == {"user": "amy", "client_id": "a-app"}
    assert view.rows[1].fields == {"user_default": "on", "client_id_default": "on"}

    assert labels(selectors.quota_list(cluster=cluster, entity_type="client-id", search="APP")) == [
        "user 'amy', client-id 'a-app'", "client-id 'b-app'"]
    assert labels(selectors.quota_list(cluster=cluster, entity_type="nonsense", search="zed")) == ["user 'zed'"]


def test_the_preview_names_old_and_new_values_and_changes_nothing(cluster):
    set_quota(cluster, (("user", "amy"),), RATE, 2)
    preview = selectors.quota_preview(cluster=cluster, entity=(("user", "amy"),), key=RATE, value=3)
    assert (preview.label, preview.old_display, preview.new_display, preview.unchanged) == (
        "user 'amy'", "2 mutations/s", "3 mutations/s", False)
    assert selectors.quota_preview(cluster=cluster, entity=(("user", "amy"),), key=RATE, value=2).unchanged
    with pytest.raises(GatewayError, match="an integer"):
        selectors.quota_preview(cluster=cluster, entity=(("ip", "10.0.0.1"),), key="connection_creation_rate", value=3000000000)
    assert quotas_on(cluster) == {(("user", "amy"),): {RATE: 2.0}}


def test_a_clients_quotas_come_from_the_first_entity_in_kafkas_order(cluster):
    set_quota(cluster, (("user", "alice"),), "producer_byte_rate", 1048576)
    set_quota(cluster, (("client-id", None),), "producer_byte_rate", 2048)
    set_quota(cluster, (("client-id", None),), RATE, 5)
    alice = {q.key: q for q in selectors.quota_resolution(cluster=cluster, user="alice", client_id="app").quotas}
    assert (alice["producer_byte_rate"].source, alice["producer_byte_rate"].display) == (
        "user 'alice'", "1 MiB/s (1,048,576 bytes/s)")
    assert (alice[RATE].source, alice[RATE].display) == ("default client-id", "5 mutations/s")
    assert (alice["consumer_byte_rate"].source, alice["consumer_byte_rate"].display) == (None, None)
    assert "connection_creation_rate" not in alice         # an IP quota: not a user's or client id's
    anonymous = selectors.quota_resolution(cluster=cluster, user="", client_id="")
    assert anonymous.user == "ANONYMOUS"
    assert {q.key: q.source for q in anonymous.quotas}["producer_byte_rate"] == "default client-id"
