"""`python -m engine configs` against the engine: topics, brokers, users and clients (quotas
and SCRAM), groups, in kafka-configs.sh's lines."""
from __future__ import annotations

import re

from tests.engine.tools.conftest import run_tool

ENTRY = re.compile(r"^  (\S+?)=(.*) sensitive=(true|false) synonyms=\{(.*)\}$")


def test_topic_configs_are_altered_and_described_with_synonyms(group_cluster, topic_name):
    assert run_tool(group_cluster, "topics", "--create", "--topic", topic_name).returncode == 0
    altered = run_tool(group_cluster, "configs", "--alter", "--entity-type", "topics", "--entity-name", topic_name,
                       "--add-config", "retention.ms=7200000,cleanup.policy=[delete,compact]")
    assert altered.stdout == f"Completed updating config for topic {topic_name}.\n", altered.stderr
    lines = run_tool(group_cluster, "configs", "--describe", "--topic", topic_name).stdout.splitlines()
    assert lines[0] == f"Dynamic configs for topic {topic_name} are:"
    entries = {m.group(1): m for m in map(ENTRY.match, lines[1:])}
    assert entries["cleanup.policy"].group(2) == "delete,compact"
    assert entries["retention.ms"].groups()[1:] == (
        "7200000", "false", "DYNAMIC_TOPIC_CONFIG:retention.ms=7200000, DEFAULT_CONFIG:log.retention.hours=168")
    everything = run_tool(group_cluster, "configs", "--describe", "--all", "--topic", topic_name).stdout.splitlines()
    assert everything[0] == f"All configs for topic {topic_name} are:" and len(everything) > 20
    assert all(ENTRY.match(line) for line in everything[1:])

    run_tool(group_cluster, "configs", "--alter", "--topic", topic_name, "--delete-config", "retention.ms")
    lines = run_tool(group_cluster, "configs", "--describe", "--topic", topic_name).stdout.splitlines()
    assert [ENTRY.match(line).group(1) for line in lines[1:]] == ["cleanup.policy"]
    bad = run_tool(group_cluster, "configs", "--alter", "--topic", topic_name, "--delete-config", "retention.ms")
    assert bad.returncode == 1 and bad.stderr.splitlines()[-1] == "Invalid config(s): retention.ms"
    unknown = run_tool(group_cluster, "configs", "--alter", "--topic", topic_name, "--add-config", "no.such=1")
    assert unknown.returncode == 1
    assert unknown.stderr.splitlines()[0].startswith("Error while executing config command with args '")
    assert unknown.stderr.splitlines()[1].startswith(
        "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.InvalidConfigurationException: ")


def test_broker_configs_per_broker_and_cluster_default(group_cluster):
    assert run_tool(group_cluster, "configs", "--alter", "--broker", "1", "--add-config",
                    "log.cleaner.threads=2").stdout == "Completed updating config for broker 1.\n"
    assert run_tool(group_cluster, "configs", "--alter", "--broker-defaults", "--add-config",
                    "log.cleaner.threads=3").stdout == "Completed updating default config for brokers in the cluster.\n"
    try:
        lines = run_tool(group_cluster, "configs", "--describe", "--broker", "1").stdout.splitlines()
        assert lines == ["Dynamic configs for broker 1 are:",
                         "  log.cleaner.threads=2 sensitive=false "
                         "synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, "
                         "DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=3}"]
        every = run_tool(group_cluster, "configs", "--describe", "--entity-type", "brokers").stdout.splitlines()
        assert every[-2:] == ["Default configs for brokers in the cluster are:",
                              "  log.cleaner.threads=3 sensitive=false synonyms="
                              "{DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=3}"]
        assert "Dynamic configs for broker 0 are:" in every
    finally:
        run_tool(group_cluster, "configs", "--alter", "--broker", "1", "--delete-config", "log.cleaner.threads")
        run_tool(group_cluster, "configs", "--alter", "--broker-defaults", "--delete-config", "log.cleaner.threads")
    wrong = run_tool(group_cluster, "configs", "--describe", "--broker", "one")
    assert wrong.returncode == 1 and "must be a valid integer broker id" in wrong.stderr


def test_user_and_client_quotas_and_scram_credentials(group_cluster):
    assert run_tool(group_cluster, "configs", "--alter", "--user", "cfg-alice", "--add-config",
                    "controller_mutation_rate=10").stdout == "Completed updating config for user cfg-alice.\n"
    assert run_tool(group_cluster, "configs", "--alter", "--client-defaults", "--add-config",
                    "controller_mutation_rate=5").returncode == 0
    try:
        assert run_tool(group_cluster, "configs", "--describe", "--user", "cfg-alice").stdout == \
            "Quota configs for user-principal 'cfg-alice' are controller_mutation_rate=10.0\n"
        assert "Quota configs for the default client-id are controller_mutation_rate=5.0" in \
            run_tool(group_cluster, "configs", "--describe", "--entity-type", "clients").stdout
        scram = run_tool(group_cluster, "configs", "--alter", "--user", "cfg-bob", "--add-config",
                         "SCRAM-SHA-256=[iterations=8192,password=cfg-bob-secret]")
        assert scram.returncode == 0, scram.stderr
        assert run_tool(group_cluster, "configs", "--describe", "--user", "cfg-bob").stdout == \
            "SCRAM credential configs for user-principal 'cfg-bob' are SCRAM-SHA-256=iterations=8192\n"
    finally:
        run_tool(group_cluster, "configs", "--alter", "--user", "cfg-alice", "--delete-config",
                 "controller_mutation_rate")
        run_tool(group_cluster, "configs", "--alter", "--client-defaults", "--delete-config",
                 "controller_mutation_rate")
    wrong = run_tool(group_cluster, "configs", "--alter", "--client", "c", "--add-config", "retention.ms=1")
    assert (wrong.returncode, wrong.stderr.strip()) == (1, "Only quota configs can be added for 'clients' using "
                                                           "--bootstrap-server. Unexpected config names: "
                                                           "List(retention.ms)")
    no_action = run_tool(group_cluster, "configs", "--alter", "--topic", "x")
    assert (no_action.returncode, no_action.stderr.strip()) == (
        1, "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter")

