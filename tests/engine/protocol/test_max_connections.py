"""Connection limits across a broker's listeners (KIP-402, engine/protocol/connection_quotas.py):
`max.connections` counts the connections of all the broker's listeners and
`listener.name.<l>.max.connections` one listener's, a connection past either waits unserved;
`max.connections.per.ip` counts an address's connections on every listener; the inter-broker
listener is admitted at the broker's limit and the least recently used connection of another
listener is closed to make room; changes at run time apply at once.

The engine runs with two listeners, INTERNAL (the inter-broker one) and EXTERNAL. The limits are
set at run time, per broker or cluster-wide, and removed after each test; the connections each
listener serves are read from the metrics before any client counts on a number of places. Times
are asserted only as lower bounds."""
from __future__ import annotations

import select
import urllib.request

import pytest
from kafka.protocol.admin import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from prometheus_client.parser import text_string_to_metric_families

from engine.config import BrokerConfig, InvalidConfigError
from engine.dynamic_config import validate_dynamic_broker_configs
from engine.protocol.connection_quotas import ConnectionQuotas
from engine.security.settings import take_security_configs
from tests.engine.protocol.admin_support import BROKER
from tests.engine.protocol.test_broker_configs import DELETE, SET, raw_describe
from tests.engine.protocol.test_connection_rates import client_from
from tests.support.promtool import check_metrics
from tests.support.raw_client import RawClient
from tests.support.two_listeners import two_listener_engine
from tests.support.waiting import wait_until

MAX = "max.connections"
PER_IP = "max.connections.per.ip"
INTERNAL_MAX, EXTERNAL_MAX = f"listener.name.internal.{MAX}", f"listener.name.external.{MAX}"
COUNT = "kafka_server_socket_server_metrics_connection_count"
BLOCKED = "kafka_network_acceptor_acceptorblockedpercent"
HELD_S = 0.5       # how long a held client is watched to be neither answered nor closed


# --- the counts, with listeners that only hold connections -----------------------------------

class _Config:
    def __init__(self, values: dict) -> None:
        self.config = BrokerConfig(static=values)

    def __call__(self):
        return self.config


class _Listener:
    """Connections by name, with the time each was last used."""

    def __init__(self, name: str, quotas_of, *, protected: bool = False) -> None:
        self.name, self.protected, self._quotas_of = name, protected, quotas_of
        self.used: dict[str, float] = {}
        self.closed: list[str] = []

    def open(self, connection: str, used: float) -> None:
        assert self._quotas_of().add(self.name, "10.0.0.1") is None
        self.used[connection] = used

    def least_recently_used(self):
        return min(((used, c) for c, used in self.used.items()), default=None)

    def close_for_room(self, connection: str) -> None:
        del self.used[connection]
        self.closed.append(connection)
        self._quotas_of().remove(self.name, "10.0.0.1")


def quotas_with(values: dict) -> tuple[ConnectionQuotas, _Listener, _Listener, _Listener]:
    listeners = []
    quotas = ConnectionQuotas(_Config(values), lambda: listeners)
    listeners += [_Listener("REPLICATION", lambda: quotas, protected=True), _Listener("EXTERNAL", lambda: quotas),
                  _Listener("ADMIN", lambda: quotas)]
    return quotas, *listeners


def test_the_broker_wide_limit_counts_every_listener_and_a_listeners_own_only_its_own():
    quotas, replication, external, admin = quotas_with({MAX: "3", "listener.name.admin.max.connections": "1"})
    external.open("e1", 1.0)
    admin.open("a1", 2.0)
    assert not quotas.slot_available("ADMIN", protected=False)          # its own limit
    assert quotas.slot_available("EXTERNAL", protected=False)
    external.open("e2", 3.0)
    assert not quotas.slot_available("EXTERNAL", protected=False)       # 2 + 1: the broker's
    assert quotas.slot_available("REPLICATION", protected=True)        # the protected one is held by its own only
    assert quotas.total == 3 and quotas.listener("EXTERNAL").count == 2


def test_past_the_broker_limit_the_least_recently_used_connection_of_another_listener_closes():
    quotas, replication, external, admin = quotas_with({MAX: "3"})
    external.open("e1", 5.0)
    admin.open("a1", 1.0)
    external.open("e2", 3.0)
    replication.open("r1", 0.5)           # admitted at the limit; the oldest elsewhere makes room
    quotas.close_excess()
    assert admin.closed == ["a1"] and external.closed == [] and replication.closed == []
    assert quotas.total == 3
    replication.open("r2", 0.1)
    quotas.close_excess()
    assert external.closed == ["e2"]      # never the protected listener's own, however old


def test_a_lowered_broker_limit_closes_the_excess_at_once_and_per_ip_limits_read_the_new_config():
    config = _Config({MAX: "3"})
    listeners = []
    quotas = ConnectionQuotas(config, lambda: listeners)
    external = _Listener("EXTERNAL", lambda: quotas)
    listeners.append(external)
    for n in range(3):
        external.open(f"e{n}", float(n))
    config.config = BrokerConfig(static={MAX: "1"})
    quotas.reconfigured()
    assert external.closed == ["e0", "e1"] and quotas.total == 1
    config.config = BrokerConfig(static={MAX: "1", PER_IP: "0", "max.connections.per.ip.overrides": "localhost:1"})
    assert quotas.add("EXTERNAL", "10.0.0.2") == "max.connections.per.ip (0) reached for 10.0.0.2"


def test_the_per_listener_name_is_a_broker_config_at_start_and_at_run_time():
    configs = {EXTERNAL_MAX: "3", "listener.name.external.ssl.client.auth": "required", MAX: "5"}
    assert take_security_configs(configs) == {"listener.name.external.ssl.client.auth": "required"}
    config = BrokerConfig(static=configs, dynamic_default={MAX: 9})
    assert config.listener_value("EXTERNAL", MAX) == 3 and config.listener_value("INTERNAL", MAX) == 9
    assert validate_dynamic_broker_configs({MAX: "7", EXTERNAL_MAX: "2"}, per_broker=False) == {MAX: 7, EXTERNAL_MAX: 2}
    with pytest.raises(InvalidConfigError, match="^Invalid max.connections 0$"):
        validate_dynamic_broker_configs({EXTERNAL_MAX: "0"}, per_broker=True)


# --- a real engine ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def limits_engine(tmp_path_factory):
    with two_listener_engine(tmp_path_factory.mktemp("max-connections"), configs={INTERNAL_MAX: "100"}) as engine:
        yield engine


@pytest.fixture
def engine(limits_engine):
    settle(limits_engine, 0, 0)
    return limits_engine


def scrape(engine) -> bytes:
    with urllib.request.urlopen(engine.metrics_url, timeout=10) as answer:
        return answer.read()


def by_listener(engine, family: str) -> dict[str, float]:
    return {sample.labels["listener"]: sample.value for metric in text_string_to_metric_families(scrape(engine).decode())
            for sample in metric.samples if sample.name == family}


def settle(engine, internal: int, external: int) -> None:
    """Wait until the listeners serve these many connections (a client's close reaches the
    broker a moment later)."""
    wanted = {"INTERNAL": internal, "EXTERNAL": external}
    wait_until(lambda: by_listener(engine, COUNT) == wanted, message=f"connections {wanted}")


def alter(engine, resource: str, changes: dict, *, listener: str = "INTERNAL", source: str = "127.0.0.1") -> None:
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    request = IncrementalAlterConfigsRequest(validate_only=False, resources=[Resource(
        resource_type=BROKER, resource_name=resource, configs=[
            Resource.AlterableConfig(name=k, config_operation=op, value=v) for k, (op, v) in changes.items()])])
    client = client_from(source, engine.listener_ports[listener])
    try:
        (result,) = client.request(request, 1, IncrementalAlterConfigsResponse).responses
    finally:
        client.close()
    assert (result.error_code, result.error_message) == (0, None)


def send_api_versions(client: RawClient) -> None:
    client.correlation_id += 1
    request = ApiVersionsRequest(client_software_name="t", client_software_version="1")
    request.with_header(correlation_id=client.correlation_id, client_id=client.client_id)
    client.send_bytes(request.encode(version=3, header=True, framed=True))


def answered(client: RawClient) -> bool:
    """The answer to the ApiVersions sent; False if the broker closed the connection instead."""
    try:
        frame = client.read_frame()
    except OSError:
        return False
    return frame is not None and ApiVersionsResponse.decode(frame, version=3, header=True).error_code == 0


def ask(client: RawClient) -> bool:
    try:
        send_api_versions(client)
    except OSError:            # closed by the broker already
        return False
    return answered(client)


def served(engine, listener: str, source: str = "127.0.0.1") -> RawClient:
    client = client_from(source, engine.listener_ports[listener])
    assert ask(client), f"a client on {listener} was not served"
    return client


def held(engine, listener: str) -> RawClient:
    """A client whose request is neither answered nor refused: it waits for a place."""
    client = client_from("127.0.0.1", engine.listener_ports[listener])
    send_api_versions(client)
    assert select.select([client.sock], [], [], HELD_S)[0] == [], f"a client on {listener} was not held"
    return client


def closed_by_broker(client: RawClient) -> bool:
    if not select.select([client.sock], [], [], 0)[0]:
        return False
    try:
        return client.sock.recv(1) == b""
    except OSError:
        return True


def close_all(engine, clients: list[RawClient]) -> None:
    for client in clients:
        client.close()
    settle(engine, 0, 0)


def test_the_broker_wide_limit_spans_both_listeners(engine):
    alter(engine, "", {MAX: (SET, "3")})              # cluster-wide
    settle(engine, 0, 0)
    clients = []
    try:
        clients += [served(engine, "EXTERNAL"), served(engine, "EXTERNAL"), served(engine, "INTERNAL")]
        blocked = by_listener(engine, BLOCKED)["EXTERNAL"]
        clients.append(held(engine, "EXTERNAL"))      # two on EXTERNAL, under its own limit: the broker's holds it
        assert by_listener(engine, COUNT) == {"INTERNAL": 1, "EXTERNAL": 2}
        clients.pop(2).close()                         # a place on INTERNAL is a place for EXTERNAL
        assert answered(clients[-1])
        assert by_listener(engine, BLOCKED)["EXTERNAL"] > blocked        # its wait counts as blocked
    finally:
        close_all(engine, clients)
        alter(engine, "", {MAX: (DELETE, None)})


def test_a_listeners_own_limit_holds_only_that_listener(engine):
    alter(engine, "0", {EXTERNAL_MAX: (SET, "2")})    # this broker's
    settle(engine, 0, 0)
    clients = []
    try:
        clients += [served(engine, "EXTERNAL"), served(engine, "EXTERNAL")]
        waiting = held(engine, "EXTERNAL")
        clients.append(waiting)
        clients += [served(engine, "INTERNAL") for _ in range(3)]     # the broker has room
        assert select.select([waiting.sock], [], [], 0)[0] == []
        clients.pop(0).close()
        assert answered(waiting)
    finally:
        close_all(engine, clients)
        alter(engine, "0", {EXTERNAL_MAX: (DELETE, None)})


def test_max_connections_per_ip_counts_an_address_on_every_listener(engine):
    alter(engine, "", {PER_IP: (SET, "3")}, source="127.0.0.2")
    settle(engine, 0, 0)
    clients = []
    try:
        clients += [served(engine, "EXTERNAL"), served(engine, "EXTERNAL"), served(engine, "INTERNAL")]
        for listener in ("INTERNAL", "EXTERNAL"):
            extra = client_from("127.0.0.1", engine.listener_ports[listener])
            try:
                assert not ask(extra)                  # closed at once: its address has three open
            finally:
                extra.close()
        clients.append(served(engine, "EXTERNAL", source="127.0.0.2"))
    finally:
        close_all(engine, clients)
        alter(engine, "", {PER_IP: (DELETE, None)}, source="127.0.0.2")
    assert "max.connections.per.ip (3) reached for 127.0.0.1" in engine.log_path.read_text()


def test_the_inter_broker_listener_is_admitted_at_the_broker_limit_and_the_least_recently_used_connection_closes(
        engine):
    alter(engine, "0", {MAX: (SET, "3")})
    settle(engine, 0, 0)
    clients = []
    try:
        for _ in range(3):
            clients.append(served(engine, "EXTERNAL"))
        a, b, c = clients
        assert ask(a) and ask(c)                        # b is now the least recently used
        d = served(engine, "INTERNAL")                  # the broker is full: admitted all the same
        clients.append(d)
        wait_until(lambda: closed_by_broker(b), message="the least recently used connection to be closed")
        assert ask(a) and ask(c) and ask(d)
        settle(engine, 1, 2)
        clients.append(held(engine, "EXTERNAL"))        # and EXTERNAL still waits for the broker's limit
    finally:
        close_all(engine, clients)
        alter(engine, "0", {MAX: (DELETE, None)})
    assert ("Closing the least recently used connection, from 127.0.0.1 on listener EXTERNAL: the broker has more "
            "than max.connections (3) open") in engine.log_path.read_text()


def test_a_raised_listener_limit_lets_a_waiting_client_in_and_a_lowered_one_closes_nothing(engine):
    alter(engine, "0", {EXTERNAL_MAX: (SET, "2")})
    settle(engine, 0, 0)
    clients = []
    try:
        clients += [served(engine, "EXTERNAL"), served(engine, "EXTERNAL")]
        waiting = held(engine, "EXTERNAL")
        clients.append(waiting)
        alter(engine, "0", {EXTERNAL_MAX: (SET, "3")})
        assert answered(waiting)                        # at once, not at the next close
        alter(engine, "0", {EXTERNAL_MAX: (SET, "1")})
        assert all(ask(client) for client in clients)   # three open past a limit of one: none closed
        last = held(engine, "EXTERNAL")
        for client in clients:
            client.close()
        clients = [last]
        assert answered(last)                           # once none is left: a place under the limit of one
    finally:
        close_all(engine, clients)
        alter(engine, "0", {EXTERNAL_MAX: (DELETE, None)})


def test_a_lowered_broker_limit_closes_the_least_recently_used_connections_of_the_other_listeners(engine):
    """Kafka's processors close the excess on every poll while the broker holds more than
    max.connections: the AlterConfigs connection (INTERNAL, protected) and three on EXTERNAL
    make four over a limit of two, so the two EXTERNAL ones used longest ago go."""
    clients = []
    try:
        for _ in range(3):
            clients.append(served(engine, "EXTERNAL"))
        a, b, c = clients
        assert ask(c)
        alter(engine, "", {MAX: (SET, "2")})
        wait_until(lambda: closed_by_broker(a) and closed_by_broker(b), message="the excess to be closed")
        assert ask(c)
        settle(engine, 0, 1)
        clients.append(served(engine, "EXTERNAL"))     # one and one: within the limit
    finally:
        close_all(engine, clients)
        alter(engine, "", {MAX: (DELETE, None)})


def test_the_limits_are_described_and_the_metrics_pass_promtool(engine):
    described = raw_describe(engine.listener_ports["INTERNAL"], "0")
    # (value, source, read_only, is_sensitive, type): the default, and a per-listener one given at start.
    assert described[MAX] == ("2147483647", 5, False, False, 3)
    assert described[INTERNAL_MAX] == ("100", 4, False, False, 3)
    assert check_metrics(scrape(engine)).returncode == 0
