"""Client quotas (KIP-546) for the controller mutation quota (KIP-599): AlterClientQuotas and
DescribeClientQuotas set and show `controller_mutation_rate` per client id, per user and as
defaults; the value is kept in the metadata journal across a restart, and each client is
throttled by its own quota (kafka-python's admin client, identified by its client_id)."""
import socket
import time

import kafka.errors as Errors
import pytest
from kafka import KafkaAdminClient
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.metadata import ApiVersionsRequest
from kafka.protocol.admin.client_quotas import (AlterClientQuotasRequest, AlterClientQuotasResponse,
                                                DescribeClientQuotasRequest, DescribeClientQuotasResponse)

from tests.support.raw_client import RawClient

KEY = "controller_mutation_rate"
Entry = AlterClientQuotasRequest.EntryData
Component = DescribeClientQuotasRequest.ComponentData


def alter(client: RawClient, changes, validate_only: bool = False):
    """changes: [(entity {type: name}, {key: value, or None to remove})]."""
    request = AlterClientQuotasRequest(entries=[
        Entry(entity=[Entry.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
              ops=[Entry.OpData(key=k, value=v or 0.0, remove=v is None) for k, v in ops.items()])
        for entity, ops in changes], validate_only=validate_only)
    return [(e.error_code, e.error_message) for e in client.request(request, 1, AlterClientQuotasResponse).entries]


def describe(client: RawClient, components=(), strict: bool = False):
    """{entity as a sorted tuple of (type, name): {key: value}}, or the error code."""
    request = DescribeClientQuotasRequest(components=[Component(entity_type=t, match_type=m, match=n)
                                                      for t, m, n in components], strict=strict)
    response = client.request(request, 1, DescribeClientQuotasResponse)
    if response.error_code:
        assert response.entries is None
        return response.error_code
    return {tuple(sorted((e.entity_type, e.entity_name) for e in entry.entity)): {v.key: v.value for v in entry.values}
            for entry in response.entries}


def create(client: RawClient, name: str, partitions: int, version: int = 7) -> tuple[int, int]:
    T = CreateTopicsRequest.CreatableTopic
    response = client.request(CreateTopicsRequest(topics=[T(name=name, num_partitions=partitions, replication_factor=1,
                                                            assignments=[], configs=[])],
                                                  timeout_ms=10000, validate_only=False), version, CreateTopicsResponse)
    return response.topics[0].error_code, response.throttle_time_ms


@pytest.fixture
def engine(engine_factory):
    return engine_factory(brokers=1, admin=False)


def test_quotas_are_set_described_removed_and_survive_a_restart(engine):
    client = RawClient(engine.ports[0])
    try:
        assert alter(client, [({"client-id": "slow"}, {KEY: 2.0}),
                              ({"client-id": None}, {KEY: 100.0}),
                              ({"user": "alice", "client-id": "slow"}, {KEY: 7.0})]) == [(0, None)] * 3
        slow, default, alice_slow = (("client-id", "slow"),), (("client-id", None),), \
            (("client-id", "slow"), ("user", "alice"))
        assert describe(client) == {slow: {KEY: 2.0}, default: {KEY: 100.0}, alice_slow: {KEY: 7.0}}
        assert describe(client, [("client-id", 0, "slow")]) == {slow: {KEY: 2.0}, alice_slow: {KEY: 7.0}}
        assert describe(client, [("client-id", 0, "slow")], strict=True) == {slow: {KEY: 2.0}}
        assert describe(client, [("client-id", 1, None)]) == {default: {KEY: 100.0}}
        assert describe(client, [("user", 2, None)]) == {alice_slow: {KEY: 7.0}}
        assert alter(client, [({"client-id": "slow"}, {KEY: 9.0})], validate_only=True) == [(0, None)]
        assert describe(client, [("client-id", 0, "slow")], strict=True) == {slow: {KEY: 2.0}}
        assert alter(client, [({"client-id": None}, {KEY: None})]) == [(0, None)]
    finally:
        client.close()
    assert engine.terminate(timeout=60) == 0
    engine.start()
    client = RawClient(engine.ports[0])
    try:
        assert describe(client) == {slow: {KEY: 2.0}, alice_slow: {KEY: 7.0}}
    finally:
        client.close()


def test_bad_changes_and_filters_are_invalid_request_and_change_nothing(engine):
    client = RawClient(engine.ports[0])
    invalid = Errors.InvalidRequestError.errno
    try:
        answers = alter(client, [({"client-id": "a"}, {"request_percentage": 0.0}),
                                 ({"client-id": "b"}, {KEY: -1.0}),
                                 ({"ip": "10.0.0.1"}, {KEY: 1.0}),
                                 ({"client-id": ""}, {KEY: 1.0}),
                                 ({"client-id": "ok"}, {KEY: 3.0})])
        assert [code for code, _ in answers] == [invalid, invalid, invalid, invalid, 0]
        assert "request_percentage must be a positive number" in answers[0][1] and "positive" in answers[1][1]
        assert describe(client) == {(("client-id", "ok"),): {KEY: 3.0}}
        assert describe(client, [("ip", 2, None)]) == {}                 # IP entities exist (KIP-612)
        assert describe(client, [("client-id", 1, "named")]) == invalid
        assert describe(client, [("client-id", 2, None), ("client-id", 1, None)]) == invalid
    finally:
        client.close()


def test_each_client_is_throttled_by_its_own_quota(engine):
    bootstrap = f"127.0.0.1:{engine.ports[0]}"
    client = RawClient(engine.ports[0])
    assert alter(client, [({"client-id": "slow-admin"}, {KEY: 0.5})]) == [(0, None)]    # a burst of 5.5
    client.close()
    slow = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="slow-admin")
    free = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="free-admin")
    try:
        slow.create_topics({"slow-1": {"num_partitions": 20, "replication_factor": 1}})
        with pytest.raises(Errors.ThrottlingQuotaExceededError):
            slow.create_topics({"slow-2": {"num_partitions": 1, "replication_factor": 1}})
        for i in range(3):         # 60 partitions: no quota for this client id
            free.create_topics({f"free-{i}": {"num_partitions": 20, "replication_factor": 1}})
        # A user quota (every connection is ANONYMOUS without authentication) takes precedence
        # over client-id ones, and all its clients share its bucket: 25 partitions empty it for
        # every client id. (Raw clients here: kafka-python pauses a connection the broker throttled.)
        third, fourth = RawClient(engine.ports[0], client_id="third"), RawClient(engine.ports[0], client_id="fourth")
        try:
            assert alter(third, [({"user": "ANONYMOUS"}, {KEY: 2.0})]) == [(0, None)]     # a burst of 22
            assert create(third, "third-1", 25) == (0, 0)
            code, throttle_ms = create(fourth, "fourth-1", 1)
            assert code == Errors.ThrottlingQuotaExceededError.errno and throttle_ms > 0
        finally:
            third.close()
            fourth.close()
    finally:
        slow.close()
        free.close()


def test_throttle_time_is_answered_as_kafka_answers_it(engine):
    """A client that knows THROTTLING_QUOTA_EXCEEDED (CreateTopics v6+, strict quota) is not
    throttled by the request that empties its bucket, only refused after it; an older client
    (permissive quota, never refused) is told at once how long its bucket stays empty."""
    setup = RawClient(engine.ports[0])
    assert alter(setup, [({"client-id": None}, {KEY: 1.0})]) == [(0, None)]     # a burst of 11, each client id
    setup.close()
    strict, permissive = RawClient(engine.ports[0], client_id="v7"), RawClient(engine.ports[0], client_id="v5")
    try:
        # 20 partitions from a burst of 11 leave the bucket 9 below zero: 9 s at 1/s, less the
        # time that passed before the next answer (measured, so a busy machine changes nothing).
        started = time.monotonic()
        assert create(strict, "strict-1", 20) == (0, 0)
        code, wait_ms = create(strict, "strict-2", 1)
        elapsed_ms = (time.monotonic() - started) * 1000
        assert code == Errors.ThrottlingQuotaExceededError.errno and 9000 - elapsed_ms <= wait_ms <= 9000
        started = time.monotonic()
        code, wait_ms = create(permissive, "permissive-1", 20, version=5)
        elapsed_ms = (time.monotonic() - started) * 1000
        assert code == 0 and 9000 - elapsed_ms <= wait_ms <= 9000
    finally:
        strict.close()
        permissive.close()


def answered(port: int, source: str) -> bool:
    """A new connection from `source` gets an ApiVersions answer (False: it is closed unserved)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=15, source_address=(source, 0))
    try:
        request = ApiVersionsRequest(client_software_name="t", client_software_version="1")
        request.with_header(correlation_id=1, client_id="ip-test")
        sock.sendall(request.encode(version=3, header=True, framed=True))
        return len(sock.recv(4)) == 4
    except (ConnectionResetError, TimeoutError):
        return False
    finally:
        sock.close()


def test_an_ips_connection_creation_rate_holds_and_closes_its_connections_past_the_rate(engine):
    """KIP-612: connections from 127.0.0.1 past its rate are accepted, held unserved for the
    throttle time and closed; another address (127.0.0.2) is not affected; the IP entity is
    described and refused with other keys or combined with a user."""
    client = RawClient(engine.ports[0])
    try:
        assert alter(client, [({"ip": "127.0.0.1"}, {"connection_creation_rate": 2.0})]) == [(0, None)]
        refused = alter(client, [({"ip": "127.0.0.1"}, {KEY: 1.0}), ({"ip": "127.0.0.1", "user": "a"},
                                                                     {"connection_creation_rate": 1.0}),
                                 ({"ip": "not-an-address"}, {"connection_creation_rate": 1.0})])
        assert [code for code, _ in refused] == [Errors.InvalidRequestError.errno] * 3
        assert describe(client, [("ip", 0, "127.0.0.1")]) == {(("ip", "127.0.0.1"),): {"connection_creation_rate": 2.0}}
    finally:
        client.close()
    outcomes = []
    while len(outcomes) < 40 and all(outcomes):        # 2/s over the 10 s window: about 20 are served
        outcomes.append(answered(engine.ports[0], "127.0.0.1"))
    assert outcomes[0] and not outcomes[-1] and len(outcomes) > 15
    assert "throttles a connection from 127.0.0.1" in engine.log_text()
    assert all(answered(engine.ports[0], "127.0.0.2") for _ in range(5))
