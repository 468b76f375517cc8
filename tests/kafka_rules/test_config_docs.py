"""One documentation line for every config the engine defines, and none for a config it does not."""
import pytest

from engine.config import BROKER_CONFIGS, TOPIC_CONFIGS
from engine.coordinator.group_configs import GROUP_CONFIGS
from engine.protocol.configs import UNCLEANABLE_PARTITIONS
from engine.tools.broker_command import ADMIN_ENDPOINT_CONFIG
from kafka_rules.config_docs import (BROKER_CONFIG_DOCS, GROUP_CONFIG_DOCS, TOPIC_CONFIG_DOCS, broker_config_doc,
                                     group_config_doc, topic_config_doc)

ENGINE_BROKER_ENTRIES = {ADMIN_ENDPOINT_CONFIG, UNCLEANABLE_PARTITIONS}
ALL_DOCS = {"topic": TOPIC_CONFIG_DOCS, "broker": BROKER_CONFIG_DOCS, "group": GROUP_CONFIG_DOCS}


def test_every_topic_config_has_a_line():
    assert [name for name in TOPIC_CONFIGS if not topic_config_doc(name)] == []


def test_every_broker_config_and_the_engines_read_only_entries_have_a_broker_line():
    assert ENGINE_BROKER_ENTRIES == {"engine.admin.endpoint", "engine.log.cleaner.uncleanable.partitions"}
    assert [name for name in [*BROKER_CONFIGS, *ENGINE_BROKER_ENTRIES] if name not in BROKER_CONFIG_DOCS] == []


def test_every_group_config_has_a_line():
    assert [name for name in GROUP_CONFIGS if not group_config_doc(name)] == []


def test_no_broker_or_group_line_for_a_config_the_engine_does_not_define():
    assert sorted(set(BROKER_CONFIG_DOCS) - set(BROKER_CONFIGS) - ENGINE_BROKER_ENTRIES) == []
    assert sorted(set(GROUP_CONFIG_DOCS) - set(GROUP_CONFIGS)) == []


@pytest.mark.parametrize("kind", sorted(ALL_DOCS))
def test_every_line_is_one_short_sentence_and_the_dict_is_sorted(kind):
    docs = ALL_DOCS[kind]
    for name, line in docs.items():
        assert line.strip() and "\n" not in line and len(line) <= 200 and line.endswith("."), (name, line)
    assert list(docs) == sorted(docs)


def test_a_name_of_both_kinds_gets_the_line_of_the_resource_asked_about():
    assert topic_config_doc("min.insync.replicas") == TOPIC_CONFIG_DOCS["min.insync.replicas"]
    assert broker_config_doc("min.insync.replicas") == BROKER_CONFIG_DOCS["min.insync.replicas"]
    assert broker_config_doc("retention.ms") == TOPIC_CONFIG_DOCS["retention.ms"]
    assert broker_config_doc("no.such.config") is None and topic_config_doc("no.such.config") is None
    assert group_config_doc("retention.ms") is None
