"""Connection creation rates (KIP-612, engine/protocol/connection_rates.py): the broker-wide
`max.connection.creation.rate` and its per-listener form delay the connections past the rate
instead of refusing them, the inter-broker listener is exempt from the broker-wide rate, and
changes at run time apply to the next connection; the metrics count every throttled accept.

The engine runs with two listeners (INTERNAL, the inter-broker one, and EXTERNAL) and, as Kafka's
own DynamicConnectionQuotaTest does, two quota samples: a rate is measured over 1 to 2 seconds,
so a burst past it shows within a few connections. Timings are asserted only as lower bounds
that follow from the rate."""
from __future__ import annotations

import socket
import time
import urllib.request

import kafka.errors as Errors
import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from prometheus_client.parser import text_string_to_metric_families

from engine import clock
from engine.clock import ManualClock
from engine.config import BrokerConfig, InvalidConfigError
from engine.dynamic_config import validate_dynamic_broker_configs
from engine.protocol.connection_rates import ConnectionRates
from engine.security.settings import take_security_configs
from tests.engine.protocol.test_broker_configs import DELETE, SET, raw_describe, raw_incremental
from tests.support.promtool import check_metrics
from tests.support.raw_client import RawClient
from tests.support.two_listeners import two_listener_engine

RATE = "max.connection.creation.rate"
INTERNAL_RATE, EXTERNAL_RATE = f"listener.name.internal.{RATE}", f"listener.name.external.{RATE}"
UNLIMITED = "1000000"
CONNECTIONS = 6
THROTTLE = "kafka_server_socket_server_metrics_connection_accept_throttle_time"
IP_THROTTLE = "kafka_server_socket_server_metrics_ip_connection_accept_throttle_time"


# --- the rates, on a manual clock --------------------------------------------------------------

class _Image:
    def __init__(self) -> None:
        self.client_quotas = {}


def rates_with(static: dict, image: _Image | None = None) -> ConnectionRates:
    config = BrokerConfig(static={"quota.window.num": "2", **static})
    return ConnectionRates(lambda: image or _Image(), lambda: config)


@pytest.fixture
def manual():
    with clock.use(ManualClock()) as manual:
        yield manual


def test_past_the_broker_wide_rate_the_throttle_brings_it_back_bounded_by_one_window(manual):
    rates = rates_with({RATE: "2"})
    assert [rates.accept("EXTERNAL", protected=False) for _ in range(2)] == [0, 0]
    assert rates.accept("EXTERNAL", protected=False) == 500        # 3 over 1 s: (3 - 2) / 2 x 1000 ms
    assert rates.accept("EXTERNAL", protected=False) == 1000       # (4 - 2) / 2 x 1000, one window at most
    assert rates.listener("EXTERNAL").throttles.count == 2
    assert rates.listener("EXTERNAL").throttles.total_ms == 1500
    manual.advance(2000)                                             # both samples have left the window
    assert rates.accept("EXTERNAL", protected=False) == 0


def test_the_protected_listener_is_not_counted_nor_held_by_the_broker_wide_rate(manual):
    rates = rates_with({RATE: "2", INTERNAL_RATE: UNLIMITED})
    assert [rates.accept("INTERNAL", protected=True) for _ in range(10)] == [0] * 10
    assert rates.accept_rate() == 0
    assert [rates.accept("EXTERNAL", protected=False) for _ in range(3)] == [0, 0, 500]
    assert rates.accept("INTERNAL", protected=True) == 0
    assert rates.listener("INTERNAL").throttles.count == 0


def test_a_listener_without_its_own_rate_takes_the_broker_wide_number(manual):
    """As Kafka's listener configs fall back to the unprefixed name: the protected listener is
    still held to that number, by its own rate."""
    rates = rates_with({RATE: "2"})
    assert [rates.accept("INTERNAL", protected=True) for _ in range(3)] == [0, 0, 500]
    assert rates.accept_rate() == 0
    own = rates_with({RATE: UNLIMITED, EXTERNAL_RATE: "2"})
    assert [own.accept("EXTERNAL", protected=False) for _ in range(3)] == [0, 0, 500]
    assert [own.accept("OTHER", protected=False) for _ in range(3)] == [0, 0, 0]


def test_a_connection_throttled_by_its_address_is_taken_out_of_every_rate(manual):
    image = _Image()
    image.client_quotas = {(("ip", None),): {"connection_creation_rate": 1.0}}
    rates = rates_with({}, image)
    for _ in range(3):
        rates.accept("EXTERNAL", protected=False)
    assert [rates.ip_throttle_ms("EXTERNAL", "10.0.0.1", protected=False) for _ in range(3)] == [0, 1000, 1000]
    # Three accepted, two of them never served: one connection per second is what was counted.
    assert rates.accept_rate("EXTERNAL") == rates.accept_rate() == 1.0
    assert rates.listener("EXTERNAL").ip_throttles.count == 2
    assert rates.ip_throttle_ms("EXTERNAL", "10.0.0.2", protected=False) == 0   # its own rate


def test_a_rate_of_zero_holds_every_connection_one_window(manual):
    assert rates_with({RATE: "0"}).accept("EXTERNAL", protected=False) == 1000


# --- the config names ---------------------------------------------------------------------------

def test_the_broker_wide_and_per_listener_names_are_broker_configs_at_start_and_at_run_time():
    configs = {EXTERNAL_RATE: "3", "listener.name.external.ssl.client.auth": "required", RATE: "5"}
    security = take_security_configs(configs)
    assert security == {"listener.name.external.ssl.client.auth": "required"}     # the rate stays a broker config
    config = BrokerConfig(static=configs, dynamic_default={RATE: 9})
    # A listener's own value from any layer comes before the broker-wide one, as Kafka overlays them.
    assert config.listener_value("EXTERNAL", RATE) == 3 and config.listener_value("INTERNAL", RATE) == 9
    assert BrokerConfig(static=configs, dynamic={EXTERNAL_RATE: 4}).listener_value("EXTERNAL", RATE) == 4
    with pytest.raises(InvalidConfigError, match="Invalid value -1 for configuration max.connection.creation.rate"):
        BrokerConfig(static={EXTERNAL_RATE: "-1"})
    assert validate_dynamic_broker_configs({RATE: "7", EXTERNAL_RATE: "2"}, per_broker=False) == \
        {RATE: 7, EXTERNAL_RATE: 2}
    with pytest.raises(InvalidConfigError, match="^Invalid max.connection.creation.rate 0$"):
        validate_dynamic_broker_configs({EXTERNAL_RATE: "0"}, per_broker=True)


# --- a real engine ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rated(tmp_path_factory):
    with two_listener_engine(tmp_path_factory.mktemp("connection-rates"), configs={"quota.window.num": "2", INTERNAL_RATE: UNLIMITED, EXTERNAL_RATE: UNLIMITED}) as engine:
        yield engine


def client_from(source: str, port: int) -> RawClient:
    client = RawClient.__new__(RawClient)
    client.sock = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    client.correlation_id, client.client_id = 0, "from-" + source
    return client


def served(port: int, source: str = "127.0.0.1") -> bool:
    try:
        client = client_from(source, port)
    except OSError:
        return False
    try:
        answer = client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3,
                                ApiVersionsResponse)
        return answer is not None and answer.error_code == 0
    except OSError:
        return False
    finally:
        client.close()


def connect(engine, listener: str) -> tuple[float, int]:
    """(seconds, connections served) of CONNECTIONS clients, one after the other."""
    start = time.monotonic()
    answered = sum(served(engine.listener_ports[listener]) for _ in range(CONNECTIONS))
    return time.monotonic() - start, answered


def scrape(engine) -> bytes:
    with urllib.request.urlopen(engine.metrics_url, timeout=10) as answer:
        return answer.read()


def throttled(engine, family: str = THROTTLE) -> dict[str, tuple[float, float]]:
    """{listener: (throttled accepts, their total ms)}."""
    found: dict[str, list[float]] = {}
    for metric in text_string_to_metric_families(scrape(engine).decode()):
        for sample in metric.samples:
            if sample.name in (f"{family}_count", f"{family}_sum"):
                found.setdefault(sample.labels["listener"], [0.0, 0.0])[sample.name.endswith("_sum")] = sample.value
    return {listener: (count, total) for listener, (count, total) in found.items()}


def grown(before: dict, after: dict, listener: str) -> tuple[float, float]:
    return after[listener][0] - before[listener][0], after[listener][1] - before[listener][1]


def alter(engine, resource: str, changes: dict) -> None:
    assert raw_incremental(engine.listener_ports["INTERNAL"], resource, changes) == (0, None)


def test_over_the_broker_wide_rate_connections_wait_and_are_served_and_the_inter_broker_listener_is_exempt(rated):
    baseline, answered = connect(rated, "EXTERNAL")
    assert answered == CONNECTIONS
    before = throttled(rated)
    alter(rated, "", {RATE: (SET, "2")})           # cluster-wide, at run time
    try:
        elapsed, answered = connect(rated, "EXTERNAL")
        assert answered == CONNECTIONS            # delayed, none refused
        # 2 fit in the window; the other 4 wait for the rate to come back to 2/s.
        assert elapsed >= 1.5 and elapsed > baseline + 1.0, (elapsed, baseline)
        middle = throttled(rated)
        count, total_ms = grown(before, middle, "EXTERNAL")
        assert count >= 1 and total_ms >= 500
        # The broker-wide rate is over 2/s now; the inter-broker listener neither adds to it nor waits for it.
        assert connect(rated, "INTERNAL")[1] == CONNECTIONS
        assert grown(middle, throttled(rated), "INTERNAL") == (0, 0)
    finally:
        alter(rated, "", {RATE: (DELETE, None)})
    unlimited = throttled(rated)
    assert connect(rated, "EXTERNAL")[1] == CONNECTIONS
    assert grown(unlimited, throttled(rated), "EXTERNAL") == (0, 0)      # the deletion applied at once


def test_a_listeners_own_rate_set_for_one_broker_holds_only_that_listener(rated):
    before = throttled(rated)
    alter(rated, "0", {EXTERNAL_RATE: (SET, "2")})
    try:
        elapsed, answered = connect(rated, "EXTERNAL")
        assert answered == CONNECTIONS and elapsed >= 1.5
        assert grown(before, throttled(rated), "EXTERNAL")[0] >= 1
        middle = throttled(rated)
        assert connect(rated, "INTERNAL")[1] == CONNECTIONS
        assert grown(middle, throttled(rated), "INTERNAL") == (0, 0)
    finally:
        alter(rated, "0", {EXTERNAL_RATE: (DELETE, None)})     # back to the static value
    unlimited = throttled(rated)
    assert connect(rated, "EXTERNAL")[1] == CONNECTIONS
    assert grown(unlimited, throttled(rated), "EXTERNAL") == (0, 0)


def test_the_rates_are_described_with_their_sources_and_a_listeners_rate_must_be_positive(rated):
    port = rated.listener_ports["INTERNAL"]
    described = raw_describe(port, "0")
    # (value, source, read_only, is_sensitive, type): the default, and a per-listener one given at start.
    assert described[RATE] == ("2147483647", 5, False, False, 3)
    assert described[EXTERNAL_RATE] == (UNLIMITED, 4, False, False, 3)
    code, message = raw_incremental(port, "0", {EXTERNAL_RATE: (SET, "0")})
    assert (code, message) == (Errors.InvalidRequestError.errno, "Invalid max.connection.creation.rate 0")
    assert check_metrics(scrape(rated)).returncode == 0


def test_a_connection_past_its_addresses_rate_is_counted_on_its_listener(rated):
    from tests.engine.protocol.test_client_quotas import alter as alter_quotas

    def set_quota(value) -> None:            # from 127.0.0.2, which the quota does not hold
        client = client_from("127.0.0.2", rated.listener_ports["INTERNAL"])
        try:
            assert alter_quotas(client, [({"ip": "127.0.0.1"}, {"connection_creation_rate": value})]) == [(0, None)]
        finally:
            client.close()
    before = throttled(rated, IP_THROTTLE)
    set_quota(2.0)
    try:
        outcomes = []
        while len(outcomes) < 20 and all(outcomes):     # 2/s over 1 to 2 s: the third or so is closed
            outcomes.append(served(rated.listener_ports["EXTERNAL"]))
        assert not outcomes[-1]
        assert grown(before, throttled(rated, IP_THROTTLE), "EXTERNAL")[0] >= 1
    finally:
        set_quota(None)
