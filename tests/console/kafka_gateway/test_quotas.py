"""The client quota calls against the real engine: Kafka's filters (a name, the default, any
name; strict or not), validate_only, set and remove in one entry, and refusals with Kafka's code."""
import pytest

from console.clusters.gateway import cluster_gateway
from console.kafka_gateway import GatewayError
from console.kafka_gateway.quotas import ClientQuota, QuotaFilter
from tests.console.quotas.conftest import no_quotas_left  # noqa: F401 - a fixture: no quota before or after

pytestmark = pytest.mark.usefixtures("no_quotas_left")
RATE = "controller_mutation_rate"
ALICE, DEFAULT_CLIENT = (("user", "alice"),), (("client-id", None),)
ALICE_INGEST = (("client-id", "ingest"), ("user", "alice"))


def test_describe_filters_as_kafka_does(cluster):
    with cluster_gateway(cluster) as gw:
        assert gw.quotas.supported()
        gw.quotas.alter(ALICE, set_values={RATE: 2})
        gw.quotas.alter(DEFAULT_CLIENT, set_values={RATE: 3.5})
        # Parts given in any order name the same entity.
        gw.quotas.alter((("user", "alice"), ("client-id", "ingest")), set_values={RATE: 4})
        assert gw.quotas.describe() == [ClientQuota(DEFAULT_CLIENT, ((RATE, 3.5),)),
                                        ClientQuota(ALICE_INGEST, ((RATE, 4.0),)),
                                        ClientQuota(ALICE, ((RATE, 2.0),))]

        def entities(filters, strict=False):
            return [q.entity for q in gw.quotas.describe(filters, strict=strict)]
        assert entities([QuotaFilter("user", name="alice")]) == [ALICE_INGEST, ALICE]
        assert entities([QuotaFilter("user", name="alice")], strict=True) == [ALICE]
        assert entities([QuotaFilter("client-id", default=True)]) == [DEFAULT_CLIENT]
        assert entities([QuotaFilter("client-id")]) == [DEFAULT_CLIENT, ALICE_INGEST]
        assert gw.quotas.entity_values(ALICE_INGEST) == {RATE: 4.0}
        assert gw.quotas.entity_values((("user", "bob"),)) == {}


def test_validate_only_changes_nothing_and_remove_takes_the_key_away(cluster):
    with cluster_gateway(cluster) as gw:
        gw.quotas.alter(ALICE, set_values={RATE: 2}, validate_only=True)
        assert gw.quotas.describe() == []
        gw.quotas.alter(ALICE, set_values={RATE: 2})
        gw.quotas.alter(ALICE, remove=[RATE])
        assert gw.quotas.describe() == []


@pytest.mark.parametrize("call", [
    lambda q: q.alter(ALICE, set_values={"connection_creation_rate": 5}),            # an IP entity's key only
    lambda q: q.alter((("ip", "10.0.0.1"),), set_values={"connection_creation_rate": 3e9}, validate_only=True),
    lambda q: q.alter((("ip", "10.0.0.1"), ("user", "alice")), set_values={"connection_creation_rate": 5}),
])
def test_refusals_read_as_sentences_with_kafkas_code(cluster, call):
    with cluster_gateway(cluster) as gw:
        with pytest.raises(GatewayError) as refused:
            call(gw.quotas)
        assert gw.quotas.describe() == []
    assert refused.value.kafka_code == "INVALID_REQUEST (42)"
    # The engine's reason, never kafka-python's "request being malformed by the client library".
    assert str(refused.value).startswith("The cluster refused it with INVALID_REQUEST (42): ")
    assert "malformed" not in str(refused.value) and str(refused.value).endswith(".")
