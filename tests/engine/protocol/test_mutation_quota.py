"""The controller mutation quota (KIP-599) over the wire: once a client has created more
partitions than `controller_mutation_rate` allows, its next topic is refused with
THROTTLING_QUOTA_EXCEEDED and throttle_time_ms; a client of an older version is accepted and
told to back off."""
import kafka.errors as Errors
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse

from tests.support.raw_client import RawClient


def create(client: RawClient, name: str, partitions: int, version: int):
    T = CreateTopicsRequest.CreatableTopic
    request = CreateTopicsRequest(topics=[T(name=name, num_partitions=partitions, replication_factor=1,
                                            assignments=[], configs=[])], timeout_ms=10000, validate_only=False)
    return client.request(request, version, CreateTopicsResponse)


def test_a_client_over_its_mutation_rate_is_throttled(engine_factory):
    engine = engine_factory(brokers=1, admin=False, configs={"controller_mutation_rate": "0.5"})  # burst 5.5
    client = RawClient(engine.ports[0])
    try:
        first = create(client, "q-first", 20, 7)
        assert first.topics[0].error_code == 0 and first.throttle_time_ms == 0
        refused = create(client, "q-second", 1, 7)
        assert refused.topics[0].error_code == Errors.ThrottlingQuotaExceededError.errno
        assert "controller_mutation_rate" in refused.topics[0].error_message
        assert refused.throttle_time_ms > 0
        old_client = create(client, "q-third", 1, 5)         # v5 does not know the error
        assert old_client.topics[0].error_code == 0 and old_client.throttle_time_ms > 0
    finally:
        client.close()
