"""The controller mutation quota (KIP-599) over the wire: once a client has created more
partitions than `controller_mutation_rate` allows, its next topic is refused with
THROTTLING_QUOTA_EXCEEDED and throttle_time_ms, and its connection is muted for that long; a
client of an older version is accepted and told to back off."""
import time

import kafka.errors as Errors
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from tests.support.raw_client import RawClient


def create(client: RawClient, name: str, partitions: int, version: int):
    T = CreateTopicsRequest.CreatableTopic
    request = CreateTopicsRequest(topics=[T(name=name, num_partitions=partitions, replication_factor=1,
                                            assignments=[], configs=[])], timeout_ms=10000, validate_only=False)
    return client.request(request, version, CreateTopicsResponse)


def test_a_client_over_its_mutation_rate_is_throttled_and_its_connection_muted(engine_factory):
    engine = engine_factory(brokers=1, admin=False, configs={"controller_mutation_rate": "1"})  # burst 11
    client, old = RawClient(engine.ports[0], timeout=60), RawClient(engine.ports[0], timeout=60)
    try:
        first = create(client, "q-first", 15, 7)
        assert first.topics[0].error_code == 0 and first.throttle_time_ms == 0
        refused = create(client, "q-second", 1, 7)
        answered = time.monotonic()
        assert refused.topics[0].error_code == Errors.ThrottlingQuotaExceededError.errno
        assert "controller_mutation_rate" in refused.topics[0].error_message
        assert refused.throttle_time_ms > 1000                 # the bucket is 4 partitions below empty
        old_client = create(old, "q-third", 1, 5)              # v5 does not know the error
        assert old_client.topics[0].error_code == 0 and old_client.throttle_time_ms > 0
        # KIP-219: the refused client's connection reads nothing more until its throttle time has
        # passed, whatever the client does with throttle_time_ms.
        assert client.request(ApiVersionsRequest(), 0, ApiVersionsResponse).error_code == 0
        assert time.monotonic() - answered >= refused.throttle_time_ms / 1000 - 0.2
    finally:
        client.close()
        old.close()
