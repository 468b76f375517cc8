"""Topic and broker configs through real admin clients: DescribeConfigs, AlterConfigs (legacy),
IncrementalAlterConfigs, dynamic broker configs, and what survives a restart or a crash.

Tests that change broker configs run on private engines, so the shared cluster keeps Kafka's
defaults."""
import kafka.errors as Errors
import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (AlterConfigOpType, ConfigEntry, ConfigResource as CkResource,
                                   ConfigSource, ResourceType)
from kafka.admin import AlterConfigOp, ConfigResource

from tests.engine.protocol.admin_support import (admin_client, alter_cluster_default, broker_configs, create_topic,
                                                 describe_cluster_default, describe_topic, topic_configs)

SET, DELETE, APPEND, SUBTRACT = (op.value for op in AlterConfigOp)
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
WEEK_MS = "604800000"


def alter(admin, name, configs, **kwargs) -> str:
    """IncrementalAlterConfigs on a topic; 'OK' or the error text."""
    return admin.alter_configs([ConfigResource("TOPIC", name, configs)], incremental=True, **kwargs)["topic"][name]


def legacy_alter(admin, name, configs, **kwargs) -> str:
    return admin.alter_configs([ConfigResource("TOPIC", name, configs)], incremental=False, **kwargs)["topic"][name]


def overrides(admin, name) -> dict[str, str]:
    """The topic's own overrides: what DescribeConfigs reports with source DYNAMIC_TOPIC_CONFIG."""
    return {key: value for key, (value, source) in topic_configs(admin, name).items()
            if source == "DYNAMIC_TOPIC_CONFIG"}


# --- DescribeConfigs ----------------------------------------------------------------------

def test_created_topic_configs_are_described_with_their_source(admin, topic_name):
    created = create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                           configs={"retention.ms": "3600000", "cleanup.policy": "compact,delete"})
    assert created["error_code"] == 0
    described = topic_configs(admin, topic_name)
    assert described["retention.ms"] == ("3600000", "DYNAMIC_TOPIC_CONFIG")
    assert described["cleanup.policy"] == ("compact,delete", "DYNAMIC_TOPIC_CONFIG")
    assert described["segment.bytes"] == ("1073741824", "DEFAULT_CONFIG")
    assert described["max.message.bytes"] == ("1048588", "DEFAULT_CONFIG")
    assert {k for k, (_, source) in described.items() if source != "DEFAULT_CONFIG"} == {"retention.ms",
                                                                                      "cleanup.policy"}
    # CreateTopics v5+ answers with the same full config.
    assert {k: (c["value"], c["config_source"]) for k, c in created["configs"].items()} == described
    assert overrides(admin, topic_name) == {"retention.ms": "3600000", "cleanup.policy": "compact,delete"}


def test_describe_configs_filters_by_key_and_reports_types(admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["error_code"] == 0
    found = admin.describe_configs([ConfigResource("TOPIC", topic_name, ["retention.ms", "preallocate"])],
                                   config_filter="all")["topic"][topic_name]
    assert set(found) == {"retention.ms", "preallocate"}
    assert (found["retention.ms"]["value"], found["retention.ms"]["config_type"]) == (WEEK_MS, "LONG")
    assert (found["preallocate"]["value"], found["preallocate"]["config_type"]) == ("false", "BOOLEAN")
    assert found["retention.ms"]["read_only"] is False


def test_describe_broker_configs(admin, engine_cluster):
    for node_id, port in enumerate(engine_cluster.ports):
        configs = broker_configs(admin, node_id)
        assert configs["broker.id"]["value"] == str(node_id)
        assert configs["broker.id"]["read_only"] is True
        assert configs["broker.id"]["config_source"] == "STATIC_BROKER_CONFIG"
        assert configs["listeners"]["value"] == f"PLAINTEXT://127.0.0.1:{port}"
    configs = broker_configs(admin, 0)
    assert (configs["log.retention.hours"]["value"], configs["log.retention.hours"]["config_source"]) == \
        ("168", "DEFAULT_CONFIG")
    assert configs["num.partitions"]["value"] == "1"
    assert configs["log.dirs"]["value"] == str(engine_cluster.data_dir / "broker-0")
    # Kafka marks what cannot change at run time read-only.
    assert configs["log.retention.ms"]["read_only"] is False
    assert configs["message.max.bytes"]["read_only"] is False
    assert configs["auto.create.topics.enable"]["read_only"] is True
    assert configs["log.retention.hours"]["read_only"] is True


def test_confluent_describe_configs(confluent_admin, admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                        configs={"max.message.bytes": "5000"})["error_code"] == 0
    topic, broker = CkResource(ResourceType.TOPIC, topic_name), CkResource(ResourceType.BROKER, "1")
    futures = confluent_admin.describe_configs([topic, broker])
    topic_entries = futures[topic].result(15)
    assert topic_entries["max.message.bytes"].value == "5000"
    assert topic_entries["max.message.bytes"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert topic_entries["segment.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    broker_entries = futures[broker].result(15)
    assert broker_entries["broker.id"].value == "1"
    assert broker_entries["broker.id"].is_read_only

    missing = CkResource(ResourceType.TOPIC, topic_name + "-missing")
    with pytest.raises(KafkaException, match="UNKNOWN_TOPIC_OR_PART"):
        confluent_admin.describe_configs([missing])[missing].result(15)


# --- AlterConfigs (legacy) ----------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated")
def test_legacy_alter_configs_replaces_every_override(confluent_admin, admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                        configs={"retention.ms": "3600000", "segment.bytes": "1048576"})["error_code"] == 0
    # confluent-kafka's alter_configs sends exactly what it is given.
    resource = CkResource(ResourceType.TOPIC, topic_name, set_config={"max.message.bytes": "2000"})
    confluent_admin.alter_configs([resource])[resource].result(15)
    assert overrides(admin, topic_name) == {"max.message.bytes": "2000"}
    assert topic_configs(admin, topic_name)["retention.ms"] == (WEEK_MS, "DEFAULT_CONFIG")

    # kafka-python first reads the overrides and sends them along, so nothing else is lost.
    assert legacy_alter(admin, topic_name, {"retention.ms": "60000"}) == "OK"
    assert overrides(admin, topic_name) == {"max.message.bytes": "2000", "retention.ms": "60000"}


def test_legacy_alter_configs_is_all_or_nothing(admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                        configs={"retention.ms": "3600000"})["error_code"] == 0
    result = legacy_alter(admin, topic_name, {"retention.ms": "1000", "segment.bytes": "tiny"})
    assert result.startswith("[Error 40]"), result
    assert legacy_alter(admin, topic_name, {"retention.ms": "1000"}, validate_only=True) == "OK"
    assert overrides(admin, topic_name) == {"retention.ms": "3600000"}


# --- IncrementalAlterConfigs --------------------------------------------------------------

def test_incremental_set_and_delete(admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                        configs={"retention.ms": "3600000"})["error_code"] == 0
    assert alter(admin, topic_name, {"segment.bytes": (SET, "1048576"), "max.message.bytes": (SET, "4096")}) == "OK"
    assert overrides(admin, topic_name) == {"retention.ms": "3600000", "segment.bytes": "1048576",
                                            "max.message.bytes": "4096"}
    assert alter(admin, topic_name, {"retention.ms": (DELETE, None), "segment.bytes": (SET, "2097152")}) == "OK"
    assert overrides(admin, topic_name) == {"segment.bytes": "2097152", "max.message.bytes": "4096"}
    assert topic_configs(admin, topic_name)["retention.ms"] == (WEEK_MS, "DEFAULT_CONFIG")
    # Deleting what is not overridden is a no-op, not an error.
    assert alter(admin, topic_name, {"retention.ms": (DELETE, None)}) == "OK"


def test_incremental_append_and_subtract_on_list_configs(admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["error_code"] == 0
    # APPEND starts from the default when there is no override.
    assert alter(admin, topic_name, {"cleanup.policy": (APPEND, "compact")}) == "OK"
    assert overrides(admin, topic_name) == {"cleanup.policy": "delete,compact"}
    assert alter(admin, topic_name, {"cleanup.policy": (APPEND, "compact")}) == "OK"  # already there
    assert alter(admin, topic_name, {"cleanup.policy": (SUBTRACT, "delete")}) == "OK"
    assert overrides(admin, topic_name) == {"cleanup.policy": "compact"}

    key = "leader.replication.throttled.replicas"
    assert alter(admin, topic_name, {key: (APPEND, "0:1,0:2")}) == "OK"
    assert alter(admin, topic_name, {key: (APPEND, "0:0")}) == "OK"
    assert overrides(admin, topic_name)[key] == "0:1,0:2,0:0"
    assert alter(admin, topic_name, {key: (SUBTRACT, "0:2,0:9")}) == "OK"
    assert overrides(admin, topic_name)[key] == "0:1,0:0"
    assert alter(admin, topic_name, {key: (SET, "*")}) == "OK"   # Kafka's other legal form


@pytest.mark.parametrize("configs, error", [
    ({"retention.ms": (APPEND, "5")}, Errors.InvalidConfigurationError),      # not a list
    ({"retention.ms": (SET, "forever")}, Errors.InvalidConfigurationError),
    ({"segment.bytes": (SET, "1")}, Errors.InvalidConfigurationError),        # below the minimum
    ({"cleanup.policy": (APPEND, "shred")}, Errors.InvalidConfigurationError),
    ({"no.such.config": (SET, "1")}, Errors.InvalidConfigurationError),
    ({"retention.ms": (SET, "1000"), "max.message.bytes": (SET, "-5")}, Errors.InvalidConfigurationError),
    ({"leader.replication.throttled.replicas": (SET, "0:1,garbage")}, Errors.InvalidConfigurationError),
    ({"follower.replication.throttled.replicas": (SET, "*,0:1")}, Errors.InvalidConfigurationError),
    ({"follower.replication.throttled.replicas": (APPEND, "-1:2")}, Errors.InvalidConfigurationError),
])
def test_incremental_alter_refuses_bad_changes_atomically(admin, topic_name, configs, error):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                        configs={"retention.ms": "3600000"})["error_code"] == 0
    result = alter(admin, topic_name, configs, raise_on_unknown=False)
    assert result.startswith(f"[Error {error.errno}]"), result
    assert overrides(admin, topic_name) == {"retention.ms": "3600000"}


def test_incremental_validate_only_and_unknown_topic(admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["error_code"] == 0
    assert alter(admin, topic_name, {"retention.ms": (SET, "1000")}, validate_only=True) == "OK"
    assert overrides(admin, topic_name) == {}
    missing = topic_name + "-missing"
    result = alter(admin, missing, {"retention.ms": (SET, "1000")}, raise_on_unknown=False)
    assert result.startswith(f"[Error {Errors.UnknownTopicOrPartitionError.errno}]"), result


BAD_VALUES = [
    ("retention.ms", "1h", "Invalid value 1h for configuration retention.ms: Not a number of type LONG"),
    ("cleanup.policy", "compact,delete,bogus",
     "Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete"),
    ("segment.bytes", "10", "Invalid value 10 for configuration segment.bytes: Value must be at least 14"),
    ("max.message.bytes", "10MB", "Invalid value 10MB for configuration max.message.bytes: Not a number of type INT"),
    ("preallocate", "yes", "Invalid value yes for configuration preallocate: Expected value to be either true or false"),
    ("compression.type", "brotli", "Invalid value brotli for configuration compression.type: String must be one of: "
                                   "uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("compression.gzip.level", "0", "Invalid value 0 for configuration compression.gzip.level: Value must be at "
                                    "least 1"),
    ("remote.storage.enable", "true", "Invalid value true for configuration remote.storage.enable: Tiered Storage "
                                      "functionality is disabled in the broker. Topic cannot be configured with "
                                      "remote log storage."),
    ("message.timestamp.after.max.ms", "-1", "Invalid value -1 for configuration message.timestamp.after.max.ms: "
                                             "Value must be at least 0"),
]


@pytest.mark.parametrize("key, value, message", BAD_VALUES, ids=[v[0] for v in BAD_VALUES])
def test_validate_only_refuses_bad_values_with_kafkas_message_and_changes_nothing(admin, topic_name, key, value,
                                                                                  message):
    """Each of the three config paths a console previews with: CreateTopics, IncrementalAlterConfigs
    and AlterConfigs, all validate_only; Kafka's ConfigException text, never a Python one."""
    created = create_topic(admin, topic_name, validate_only=True, num_partitions=1, replication_factor=1,
                           configs={key: value})
    assert (created["error_code"], created["error_message"]) == (Errors.InvalidConfigurationError.errno, message)
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["error_code"] == 0
    expected = f"[Error {Errors.InvalidConfigurationError.errno}] InvalidConfigurationError: {message}"
    assert alter(admin, topic_name, {key: (SET, value)}, validate_only=True, raise_on_unknown=False) == expected
    assert legacy_alter(admin, topic_name, {key: value}, validate_only=True, raise_on_unknown=False) == expected
    assert alter(admin, topic_name, {"retention.ms": (SET, "3600000")}, validate_only=True) == "OK"
    assert overrides(admin, topic_name) == {}


def test_min_compaction_lag_above_max_is_refused_on_every_path(admin, topic_name):
    """Kafka's LogConfig.validateValues, on the overrides the topic would have: CreateTopics,
    an incremental change meeting the topic's existing override, and AlterConfigs."""
    conflict = ("[Error 40] InvalidConfigurationError: conflict topic config setting "
                "min.compaction.lag.ms (5000) > max.compaction.lag.ms (1000)")
    created = create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                           configs={"min.compaction.lag.ms": "5000", "max.compaction.lag.ms": "1000"})
    assert (created["error_code"], created["error_message"]) == (40, conflict.split(": ", 1)[1])
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                        configs={"max.compaction.lag.ms": "1000"})["error_code"] == 0
    assert alter(admin, topic_name, {"min.compaction.lag.ms": (SET, "5000")}, raise_on_unknown=False) == conflict
    assert legacy_alter(admin, topic_name, {"min.compaction.lag.ms": "5000", "max.compaction.lag.ms": "1000"},
                        raise_on_unknown=False) == conflict
    # Moving both in one request is judged on the result; equal lags are allowed.
    assert alter(admin, topic_name, {"min.compaction.lag.ms": (SET, "5000"),
                                     "max.compaction.lag.ms": (SET, "5000")}) == "OK"
    assert alter(admin, topic_name, {"max.compaction.lag.ms": (DELETE, None)}) == "OK"   # back to Long.MAX
    assert overrides(admin, topic_name) == {"min.compaction.lag.ms": "5000"}


def test_confluent_incremental_alter_configs(confluent_admin, admin, topic_name):
    assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                        configs={"retention.ms": "3600000"})["error_code"] == 0
    resource = CkResource(ResourceType.TOPIC, topic_name, incremental_configs=[
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
        ConfigEntry("segment.ms", "600000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND)])
    confluent_admin.incremental_alter_configs([resource])[resource].result(15)
    assert overrides(admin, topic_name) == {"segment.ms": "600000", "cleanup.policy": "delete,compact"}

    bad = CkResource(ResourceType.TOPIC, topic_name, incremental_configs=[
        ConfigEntry("segment.ms", "0", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException, match="INVALID_CONFIG"):
        confluent_admin.incremental_alter_configs([bad])[bad].result(15)


# --- dynamic broker configs (private engines) ---------------------------------------------

def synonyms(admin, topic: str, key: str) -> list[tuple]:
    found = admin.describe_configs([ConfigResource("TOPIC", topic, [key])], include_synonyms=True,
                                   config_filter="all")["topic"][topic][key]
    return [(s["name"], s["value"], s["source"]) for s in found["synonyms"]]


def test_static_broker_config_is_a_topic_default(engine_factory, topic_name):
    engine = engine_factory(brokers=1, configs={"log.segment.bytes": "2097152"})
    admin = admin_client(engine.bootstrap)
    try:
        assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["error_code"] == 0
        assert topic_configs(admin, topic_name)["segment.bytes"] == ("2097152", "STATIC_BROKER_CONFIG")
        assert synonyms(admin, topic_name, "segment.bytes") == [
            ("log.segment.bytes", "2097152", "STATIC_BROKER_CONFIG"),
            ("log.segment.bytes", "1073741824", "DEFAULT_CONFIG")]
        entry = broker_configs(admin, 0)["log.segment.bytes"]
        assert (entry["value"], entry["config_source"]) == ("2097152", "STATIC_BROKER_CONFIG")
    finally:
        admin.close()


def test_compaction_lags_are_checked_against_the_brokers_defaults(engine_factory, topic_name):
    """A lag the topic does not set counts at the broker's `log.cleaner.*.compaction.lag.ms`,
    static or a dynamic cluster default, as Kafka's LogConfig.validate merges them in."""
    engine = engine_factory(brokers=1, configs={"log.cleaner.min.compaction.lag.ms": "10000"})
    admin = admin_client(engine.bootstrap)
    try:
        refused = create_topic(admin, topic_name, num_partitions=1, replication_factor=1,
                               configs={"max.compaction.lag.ms": "5000"})
        assert (refused["error_code"], refused["error_message"]) == (
            40, "conflict topic config setting min.compaction.lag.ms (10000) > max.compaction.lag.ms (5000)")
        assert create_topic(admin, topic_name, num_partitions=1, replication_factor=1)["error_code"] == 0

        assert alter_cluster_default(engine.ports[0], {"log.cleaner.max.compaction.lag.ms": (SET, "20000")}) == 0
        assert alter(admin, topic_name, {"min.compaction.lag.ms": (SET, "30000")}, raise_on_unknown=False) == (
            "[Error 40] InvalidConfigurationError: conflict topic config setting "
            "min.compaction.lag.ms (30000) > max.compaction.lag.ms (20000)")
        assert alter(admin, topic_name, {"min.compaction.lag.ms": (SET, "15000")}) == "OK"
    finally:
        admin.close()


def test_cluster_default_changes_the_effective_topic_default(engine_factory, topic_name):
    engine = engine_factory(brokers=3)
    admin = admin_client(engine.bootstrap)
    try:
        plain, pinned = topic_name + "-plain", topic_name + "-pinned"
        assert create_topic(admin, plain, num_partitions=1, replication_factor=1)["error_code"] == 0
        assert create_topic(admin, pinned, num_partitions=1, replication_factor=1,
                            configs={"retention.ms": "1000"})["error_code"] == 0
        assert synonyms(admin, plain, "retention.ms") == [("log.retention.hours", "168", "DEFAULT_CONFIG")]

        assert alter_cluster_default(engine.ports[0], {"log.retention.ms": (SET, "3600000")}) == 0
        assert describe_cluster_default(engine.ports[1]) == {"log.retention.ms": ("3600000",
                                                                                 DYNAMIC_DEFAULT_BROKER_CONFIG)}
        assert topic_configs(admin, plain)["retention.ms"] == ("3600000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
        assert topic_configs(admin, pinned)["retention.ms"] == ("1000", "DYNAMIC_TOPIC_CONFIG")
        broker_synonyms = [("log.retention.ms", "3600000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
                           ("log.retention.hours", "168", "DEFAULT_CONFIG")]
        assert synonyms(admin, plain, "retention.ms") == broker_synonyms
        assert synonyms(admin, pinned, "retention.ms") == [("retention.ms", "1000", "DYNAMIC_TOPIC_CONFIG"),
                                                           *broker_synonyms]
        for node_id in range(3):
            entry = broker_configs(admin, node_id)["log.retention.ms"]
            assert (entry["value"], entry["config_source"]) == ("3600000", "DYNAMIC_DEFAULT_BROKER_CONFIG")

        assert alter_cluster_default(engine.ports[0], {"log.retention.ms": (DELETE, None)}) == 0
        assert describe_cluster_default(engine.ports[0]) == {}
        assert topic_configs(admin, plain)["retention.ms"] == (WEEK_MS, "DEFAULT_CONFIG")
    finally:
        admin.close()


def test_per_broker_config_wins_over_the_cluster_default(engine_factory):
    engine = engine_factory(brokers=3)
    admin = admin_client(engine.bootstrap)
    try:
        assert alter_cluster_default(engine.ports[0], {"message.max.bytes": (SET, "2000000")}) == 0
        result = admin.alter_configs([ConfigResource("BROKER", "1", {"message.max.bytes": "3000000"})],
                                     incremental=True)
        assert result == {"broker": {"1": "OK"}}
        sources = {node_id: (broker_configs(admin, node_id)["message.max.bytes"]["value"],
                             broker_configs(admin, node_id)["message.max.bytes"]["config_source"])
                   for node_id in range(3)}
        assert sources == {0: ("2000000", "DYNAMIC_DEFAULT_BROKER_CONFIG"), 1: ("3000000", "DYNAMIC_BROKER_CONFIG"),
                           2: ("2000000", "DYNAMIC_DEFAULT_BROKER_CONFIG")}
        modified = admin.describe_configs([ConfigResource("BROKER", "1")], include_synonyms=True)["broker"]["1"]
        assert set(modified) == {"message.max.bytes"}
        assert [(s["value"], s["source"]) for s in modified["message.max.bytes"]["synonyms"]] == [
            ("3000000", "DYNAMIC_BROKER_CONFIG"), ("2000000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
            ("1048588", "DEFAULT_CONFIG")]
    finally:
        admin.close()


def test_static_broker_configs_cannot_change_at_run_time(engine_factory):
    engine = engine_factory(brokers=1)
    admin = admin_client(engine.bootstrap)
    try:
        result = admin.alter_configs([ConfigResource("BROKER", "0", {"auto.create.topics.enable": "false"})],
                                     incremental=True, raise_on_unknown=False)
        assert result["broker"]["0"].startswith(f"[Error {Errors.InvalidRequestError.errno}]"), result
        assert "Cannot update these configs dynamically" in result["broker"]["0"]
        # kafka-python checks read-only flags before sending.
        with pytest.raises(ValueError):
            admin.alter_configs([ConfigResource("BROKER", "0", {"auto.create.topics.enable": "false"})])
        code = alter_cluster_default(engine.ports[0], {"log.retention.ms": (SET, "soon")})
        assert code == Errors.InvalidRequestError.errno
        assert broker_configs(admin, 0)["auto.create.topics.enable"]["value"] == "true"
        assert describe_cluster_default(engine.ports[0]) == {}
    finally:
        admin.close()


# --- durability: configs survive SIGTERM and SIGKILL restarts ------------------------------

def snapshot(admin, engine, topic) -> dict:
    """Everything the admin side should remember across restarts."""
    cluster = admin.describe_cluster()
    return {
        "cluster_id": cluster["cluster_id"],
        "controller_id": cluster["controller_id"],
        "topics": sorted(admin.list_topics()),
        "brokers": sorted((b["broker_id"], b["port"]) for b in cluster["brokers"]),
        "topic_id": describe_topic(admin, topic)["topic_id"],
        "partitions": [p["replica_nodes"] for p in describe_topic(admin, topic)["partitions"]],
        "topic_configs": topic_configs(admin, topic),
        "broker_1": {k: (v["value"], v["config_source"]) for k, v in broker_configs(admin, 1).items()},
        "cluster_default": describe_cluster_default(engine.ports[0]),
    }


def test_configs_survive_clean_restart_and_crash(engine_factory, topic_name):
    engine = engine_factory(brokers=3)
    admin = admin_client(engine.bootstrap)
    assert create_topic(admin, topic_name, num_partitions=3, replication_factor=2,
                        configs={"retention.ms": "3600000", "cleanup.policy": "compact"})["error_code"] == 0
    assert alter(admin, topic_name, {"segment.bytes": (SET, "1048576"), "cleanup.policy": (APPEND, "delete")}) == "OK"
    assert alter_cluster_default(engine.ports[0], {"log.retention.bytes": (SET, "123456789")}) == 0
    # Not a topic config's synonym: a topic's defaults must not depend on which broker answers.
    admin.alter_configs([ConfigResource("BROKER", "1", {"leader.replication.throttled.rate": "1000000"})],
                        incremental=True)
    before = snapshot(admin, engine, topic_name)
    admin.close()
    assert before["topic_configs"]["retention.bytes"] == ("123456789", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    assert before["broker_1"]["leader.replication.throttled.rate"] == ("1000000", "DYNAMIC_BROKER_CONFIG")

    assert engine.terminate() == 0
    engine.start()
    admin = admin_client(engine.bootstrap)
    assert snapshot(admin, engine, topic_name) == before

    # Changed after the clean restart: only the journal holds these when the engine is killed.
    assert alter(admin, topic_name, {"retention.ms": (DELETE, None), "max.message.bytes": (SET, "4096")}) == "OK"
    assert alter_cluster_default(engine.ports[0], {"log.retention.ms": (SET, "7200000")}) == 0
    admin.create_partitions({topic_name: 5})
    doomed = topic_name + "-doomed"
    assert create_topic(admin, doomed, num_partitions=1, replication_factor=1)["error_code"] == 0
    admin.delete_topics([doomed])
    before = snapshot(admin, engine, topic_name)
    admin.close()
    assert before["topic_configs"]["retention.ms"] == ("7200000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    assert len(before["partitions"]) == 5 and doomed not in before["topics"]

    engine.kill()
    engine.start()
    admin = admin_client(engine.bootstrap)
    try:
        assert snapshot(admin, engine, topic_name) == before
    finally:
        admin.close()
