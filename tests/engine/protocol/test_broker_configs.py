"""Broker configs at run time, as Kafka's DynamicBrokerConfig decides: the names Kafka can
change (SASL and listener configs per broker, log and thread-pool configs anywhere) and custom
names are stored; names Kafka fixes at start, SSL stores without a listener prefix and
per-broker configs on the cluster-wide resource are refused with INVALID_REQUEST and Kafka's
message. DescribeConfigs shows what was stored, with its source; a custom config's value is
withheld (Kafka treats an untyped config as possibly sensitive)."""
import kafka.errors as Errors
import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource as CkResource, ConfigSource, \
    ResourceType
from kafka.admin import ConfigResource
from kafka.protocol.admin import (AlterConfigsRequest, AlterConfigsResponse, DescribeConfigsRequest,
                                  DescribeConfigsResponse, IncrementalAlterConfigsRequest,
                                  IncrementalAlterConfigsResponse)

from tests.engine.protocol.admin_support import BROKER
from tests.support.raw_client import RawClient

SET, DELETE = 0, 1
RELOGIN = "sasl.kerberos.min.time.before.relogin"


@pytest.fixture(scope="module")
def engine(engine_factory_module):
    return engine_factory_module


@pytest.fixture(scope="module")
def engine_factory_module(tmp_path_factory):
    from tests.support.engine_process import EngineProcess
    engine = EngineProcess(tmp_path_factory.mktemp("broker-configs") / "data", brokers=2).start()
    yield engine
    engine.kill()


def raw_incremental(port: int, name: str, changes: dict) -> tuple[int, str | None]:
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    request = IncrementalAlterConfigsRequest(validate_only=False, resources=[Resource(
        resource_type=BROKER, resource_name=name, configs=[
            Resource.AlterableConfig(name=k, config_operation=op, value=v) for k, (op, v) in changes.items()])])
    return _one_result(port, request, IncrementalAlterConfigsResponse)


def raw_alter(port: int, name: str, configs: dict) -> tuple[int, str | None]:
    Resource = AlterConfigsRequest.AlterConfigsResource
    request = AlterConfigsRequest(validate_only=False, resources=[Resource(
        resource_type=BROKER, resource_name=name,
        configs=[Resource.AlterableConfig(name=k, value=v) for k, v in configs.items()])])
    return _one_result(port, request, AlterConfigsResponse, version=1)


def _one_result(port, request, response_class, version=1):
    client = RawClient(port)
    try:
        (result,) = client.request(request, version, response_class).responses
    finally:
        client.close()
    return result.error_code, result.error_message


def raw_describe(port: int, name: str) -> dict:
    """{config: (value, source, read_only, is_sensitive, type)} of a broker resource."""
    Resource = DescribeConfigsRequest.DescribeConfigsResource
    request = DescribeConfigsRequest(resources=[Resource(resource_type=BROKER, resource_name=name,
                                                         configuration_keys=None)],
                                     include_synonyms=True, include_documentation=False)
    client = RawClient(port)
    try:
        (result,) = client.request(request, 4, DescribeConfigsResponse).results
    finally:
        client.close()
    assert result.error_code == 0, result.error_message
    return {c.name: (c.value, c.config_source, c.read_only, c.is_sensitive, c.config_type) for c in result.configs}


def test_kafka_python_stores_kafka_dynamic_and_custom_configs_per_broker(engine):
    from kafka import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap)
    try:
        # kafka-python first checks each name against the broker's DescribeConfigs: Kafka's
        # run-time names pass, a custom one needs raise_on_unknown=False (as against Kafka).
        assert admin.describe_configs([ConfigResource("BROKER", "1")], config_filter="all")["broker"]["1"][RELOGIN]["value"] == "60000"
        result = admin.alter_configs([ConfigResource("BROKER", "1", {RELOGIN: "120000", "num.io.threads": "4"})],
                                     incremental=True)
        assert result == {"broker": {"1": "OK"}}
        result = admin.alter_configs([ConfigResource("BROKER", "1", {"cleanup.policy": "compact"})],
                                     incremental=True, raise_on_unknown=False)
        assert result == {"broker": {"1": "OK"}}
        described = admin.describe_configs([ConfigResource("BROKER", "1")], config_filter="all")["broker"]["1"]
        assert (described[RELOGIN]["value"], described[RELOGIN]["config_source"]) == \
            ("120000", "DYNAMIC_BROKER_CONFIG")
        assert described[RELOGIN]["read_only"] is False and described[RELOGIN]["is_sensitive"] is False
        assert described["num.io.threads"]["value"] == "4"
        # cleanup.policy is no broker config of Kafka's (its broker form is log.cleanup.policy): custom.
        custom = described["cleanup.policy"]
        assert (custom["value"], custom["config_source"], custom["is_sensitive"]) == \
            (None, "DYNAMIC_BROKER_CONFIG", True)
        assert "cleanup.policy" not in admin.describe_configs([ConfigResource("BROKER", "0")], config_filter="all")["broker"]["0"]
        # Static configs are refused; kafka-python's own read-only check refuses them before sending.
        refused = admin.alter_configs([ConfigResource("BROKER", "1", {"log.retention.hours": "1"})],
                                      incremental=True, raise_on_unknown=False)["broker"]["1"]
        assert refused.startswith(f"[Error {Errors.InvalidRequestError.errno}]")
        assert "Cannot update these configs dynamically: Set(log.retention.hours)" in refused
    finally:
        admin.close()
        raw_incremental(engine.ports[1], "1", {key: (DELETE, None) for key in (RELOGIN, "cleanup.policy",
                                                                               "num.io.threads")})
    assert not {RELOGIN, "cleanup.policy", "num.io.threads"} & {
        k for k, v in raw_describe(engine.ports[1], "1").items() if v[1] == 2}


def confluent_incremental(admin, node: str, changes: dict) -> None:
    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in changes.items()]
    futures = admin.incremental_alter_configs([CkResource(ResourceType.BROKER, node, incremental_configs=entries)])
    for future in futures.values():
        future.result(15)


@pytest.mark.parametrize("changes, message", [
    ({"auto.create.topics.enable": "false", "log.dirs": "/tmp/x"},
     "Cannot update these configs dynamically: Set(auto.create.topics.enable, log.dirs)"),
    ({"ssl.keystore.location": "/etc/ks.jks"},
     "These security configs can be dynamically updated only per-listener using the listener prefix: "
     "Set(ssl.keystore.location)"),
    ({RELOGIN: "soon"}, f"Invalid value soon for configuration {RELOGIN}: Not a number of type LONG"),
    # Kafka's own ranges for the log configs the brokers act on: a ratio above 1 would stop
    # compaction, a negative retention drop tombstones before consumers see them.
    ({"log.cleaner.min.cleanable.ratio": "7"},
     "Invalid value 7 for configuration log.cleaner.min.cleanable.ratio: Value must be no more than 1"),
    ({"log.cleaner.delete.retention.ms": "-50"},
     "Invalid value -50 for configuration log.cleaner.delete.retention.ms: Value must be at least 0"),
    ({"compression.type": "brotli"}, "Invalid value brotli for configuration compression.type: String must be one "
                                     "of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    # Topic defaults Kafka's LogConfig could not take (segment.ms >= 1, flush.ms >= 0): a negative
    # roll time would roll every partition's segment at each batch.
    ({"log.roll.ms": "-1000"}, "Invalid value -1000 for configuration log.roll.ms: Value must be at least 1"),
    ({"log.roll.jitter.ms": "-5"}, "Invalid value -5 for configuration log.roll.jitter.ms: Value must be at least 0"),
    ({"log.flush.interval.ms": "-1"}, "Invalid value -1 for configuration log.flush.interval.ms: Value must be at "
                                      "least 0"),
])
def test_confluent_kafka_refusals_carry_kafkas_error_and_message(engine, changes, message):
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": engine.bootstrap})
    with pytest.raises(KafkaException) as refused:
        confluent_incremental(admin, "0", changes)
    error = refused.value.args[0]
    assert error.code() == Errors.InvalidRequestError.errno
    assert message in error.str()
    assert not set(changes) & {k for k, v in raw_describe(engine.ports[0], "0").items() if v[1] == 2}


def test_confluent_kafka_sets_a_per_listener_ssl_store_and_describes_it(engine):
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": engine.bootstrap})
    name = "listener.name.plaintext.ssl.keystore.location"
    confluent_incremental(admin, "0", {name: "/etc/ks.jks", "listener.name.plaintext.ssl.keystore.password": "s3"})
    (future,) = admin.describe_configs([CkResource(ResourceType.BROKER, "0")]).values()
    described = future.result(15)
    assert (described[name].value, described[name].source) == ("/etc/ks.jks",
                                                                ConfigSource.DYNAMIC_BROKER_CONFIG.value)
    password = described["listener.name.plaintext.ssl.keystore.password"]
    assert password.value is None and password.is_sensitive
    # A per-listener config is as dynamic as its config, as Kafka describes it.
    assert not described[name].is_read_only and not password.is_read_only


def test_raw_cluster_wide_resource_refuses_per_broker_configs_and_stores_the_rest(engine):
    port = engine.ports[0]
    code, message = raw_incremental(port, "", {RELOGIN: (SET, "120000")})
    assert code == Errors.InvalidRequestError.errno
    assert message == ("Cannot update these configs at default cluster level, broker id must be specified: "
                       f"Set({RELOGIN})")
    assert raw_incremental(port, "", {"num.io.threads": (SET, "6"), "my.plugin.setting": (SET, "x")}) == (0, None)
    try:
        cluster = raw_describe(port, "")
        assert cluster["num.io.threads"] == ("6", 3, False, False, 3)        # INT, DYNAMIC_DEFAULT_BROKER_CONFIG
        assert cluster["my.plugin.setting"] == (None, 3, True, True, 0)     # UNKNOWN type, value withheld
        assert raw_describe(engine.ports[1], "1")["num.io.threads"][:2] == ("6", 3)
        # Deleting a static name is allowed (nothing to validate), as in Kafka.
        assert raw_incremental(port, "", {"log.dirs": (DELETE, None)}) == (0, None)
    finally:
        assert raw_incremental(port, "", {"num.io.threads": (DELETE, None),
                                          "my.plugin.setting": (DELETE, None)}) == (0, None)
    assert raw_describe(port, "") == {}


def test_raw_legacy_alter_configs_replaces_a_brokers_set_with_custom_names(engine):
    port = engine.ports[1]
    assert raw_alter(port, "1", {"my.plugin.setting": "x", "message.max.bytes": "2000000"}) == (0, None)
    described = raw_describe(port, "1")
    assert described["my.plugin.setting"][:2] == (None, 2) and described["message.max.bytes"][:2] == ("2000000", 2)
    code, message = raw_alter(port, "1", {"broker.id": "7"})
    assert code == Errors.InvalidRequestError.errno and message.endswith("Set(broker.id)")
    assert raw_alter(port, "1", {}) == (0, None)
    assert not {k for k, v in raw_describe(port, "1").items() if v[1] == 2}
