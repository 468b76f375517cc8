"""Named listeners from Kafka's configs: ports per broker, the protocol map, advertised
endpoints, the inter-broker listener, per-listener security configs; mistakes refused readably."""
import pytest

from engine.config import InvalidConfigError
from engine.security import listeners as L
from tests.support.tls import write_self_signed


def build(listener_configs, security_configs=None, *, brokers=3, protocol="PLAINTEXT", users_file=None):
    return L.build(listener_configs, security_configs or {}, host="127.0.0.1", port=9092, brokers=brokers,
                   default_protocol=protocol, users_file=users_file)


def test_without_listeners_there_is_one_named_after_the_protocol():
    (only,), inter = build({}, protocol="PLAINTEXT")
    assert (only.name, only.host, only.port, only.protocol, inter) == ("PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT",
                                                                       "PLAINTEXT")


def test_several_listeners_each_with_its_protocol_ports_and_advertised_endpoint(tmp_path):
    users = tmp_path / "users"
    users.write_text("user_admin=x\n")
    listeners, inter = build({"listeners": "internal://:9092,EXTERNAL://0.0.0.0:9192",
                              "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SASL_PLAINTEXT",
                              "advertised.listeners": "EXTERNAL://kafka.example.com:19192",
                              "inter.broker.listener.name": "internal"},
                             {"listener.name.external.sasl.enabled.mechanisms": "SCRAM-SHA-512"},
                             users_file=str(users))
    internal, external = listeners
    assert inter == "INTERNAL"
    assert (internal.name, internal.host, internal.port_of(2), internal.protocol) == ("INTERNAL", "127.0.0.1", 9094,
                                                                                      "PLAINTEXT")
    assert (external.host, external.port_of(1), external.advertised_host, external.advertised_port_of(1)) == \
        ("0.0.0.0", 9193, "kafka.example.com", 19193)
    assert external.security.sasl_enabled_mechanisms == ("SCRAM-SHA-512",)
    assert internal.advertised_host == "127.0.0.1" and internal.security.listener == "INTERNAL"


def test_the_inter_broker_listener_defaults_to_kafkas_choice():
    _, inter = build({"listeners": "A://:9092,PLAINTEXT://:9192",
                      "listener.security.protocol.map": "A:PLAINTEXT,PLAINTEXT:PLAINTEXT"})
    assert inter == "PLAINTEXT"           # security.inter.broker.protocol's default names it
    _, inter = build({"listeners": "A://:9092,B://:9192", "listener.security.protocol.map": "A:PLAINTEXT,B:PLAINTEXT"})
    assert inter == "A"                   # none of that name: the first one


def test_unprefixed_ssl_configs_go_to_the_tls_listeners_only(tmp_path):
    keystore, _ = write_self_signed(tmp_path)
    listeners, _ = build({"listeners": "PLAINTEXT://:9092,SSL://:9192"},
                         {"ssl.keystore.location": str(keystore)})
    plain, tls = listeners
    assert plain.security.server_ssl is None and tls.security.server_ssl is not None


@pytest.mark.parametrize("configs, security, message", [
    ({"listeners": "A://:9092"}, {}, "No security protocol defined for listener A"),
    ({"listeners": "PLAINTEXT://:9092,SSL://:9093"}, {}, "both need port 9093"),
    ({"listeners": "PLAINTEXT:/:9092"}, {}, "expected NAME://HOST:PORT"),
    ({"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9192"}, {}, "given twice"),
    ({"listeners": "PLAINTEXT://:9092", "advertised.listeners": "X://h:1"}, {}, "not in listeners"),
    ({"listeners": "PLAINTEXT://:9092", "inter.broker.listener.name": "X"}, {}, "inter.broker.listener.name"),
    ({"listeners": "PLAINTEXT://:9092", "listener.security.protocol.map": "PLAINTEXT:TLS"}, {}, "protocol of"),
    ({"listeners": "PLAINTEXT://:9092"}, {"listener.name.other.ssl.client.auth": "required"}, "no listener OTHER"),
    ({"listeners": "PLAINTEXT://:9092"}, {"listener.name.plaintext.sasl.jaas.config": "x"}, "cannot be set per"),
    ({"listeners": "PLAINTEXT://:9092"}, {"listener.name.plaintext.ssl.client.auth": "required"}, "need"),
    ({"listeners": "PLAINTEXT://:65534"}, {}, "past 65535"),
    ({"listeners": "PLAINTEXT://:9092"}, {"listener.name.plaintext.gssapi.connections.max.reauth.ms": "1"},
     "cannot be set per"),
    ({"listeners": "PLAINTEXT://:9092"}, {"listener.name.plaintext.PLAIN.connections.max.reauth.ms": "1"},
     "cannot be set per"),                 # Kafka's mechanism prefix is in lower case
    ({"listeners": "PLAINTEXT://:9092"}, {"connections.max.reauth.ms": "1h"}, "Not a number of type LONG"),
])
def test_mistakes_are_refused_with_a_reason(configs, security, message):
    with pytest.raises(InvalidConfigError, match=message):
        build(configs, security)


def test_the_listener_option_is_kafkas_two_configs():
    assert L.parse_listener_option("EXTERNAL=SASL_SSL://host:9192") == ("EXTERNAL://host:9192", "EXTERNAL:SASL_SSL")
    with pytest.raises(InvalidConfigError, match="NAME=PROTOCOL://HOST:PORT"):
        L.parse_listener_option("EXTERNAL://host:9192")


def test_the_session_lifetime_is_set_per_listener_and_mechanism_as_kafkas_is(tmp_path):
    users = tmp_path / "users"
    users.write_text("user_admin=x\n")
    listeners, _ = build({"listeners": "INTERNAL://:9092,EXTERNAL://:9192",
                          "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_PLAINTEXT"},
                         {"connections.max.reauth.ms": "3600000",
                          "listener.name.external.connections.max.reauth.ms": "600000",
                          "listener.name.external.scram-sha-512.connections.max.reauth.ms": "60000"},
                         users_file=str(users))
    internal, external = listeners
    assert internal.security.connections_max_reauth_ms == dict.fromkeys(internal.security.sasl_enabled_mechanisms,
                                                                        3600000)
    assert external.security.connections_max_reauth_ms == {"SCRAM-SHA-256": 600000, "SCRAM-SHA-512": 60000,
                                                           "PLAIN": 600000}
    (default,), _ = build({}, protocol="SASL_PLAINTEXT", users_file=str(users))
    assert set(default.security.connections_max_reauth_ms.values()) == {0}     # Kafka's default: none
