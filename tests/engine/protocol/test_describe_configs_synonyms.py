"""DescribeConfigs sends config synonyms only when the request asks for them (include_synonyms),
at every version, as Kafka does: kafkajs's own describeConfigs tests expect none unasked. The
same for documentation (include_documentation, v3+): each config's line from
kafka_rules/config_docs.py when asked, none otherwise."""
import json
import subprocess

import pytest
from kafka.admin import NewTopic
from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse

from kafka_rules.config_docs import broker_config_doc, group_config_doc, topic_config_doc
from tests.engine.transactions.test_eos_kafkajs import KAFKAJS
from tests.support.raw_client import RawClient

TOPIC, BROKER, GROUP = 2, 4, 32


@pytest.fixture(scope="module")
def topic(admin):
    name = "synonyms"
    admin.create_topics([NewTopic(name, 1, 1, topic_configs={"retention.ms": "3600000"})])
    return name


def described(port: int, version: int, resource_type: int, name: str, *, synonyms: bool = False,
              documentation: bool = False) -> list:
    """The configs of one resource, asked with the two flags."""
    client = RawClient(port)
    try:
        response = client.request(DescribeConfigsRequest(
            resources=[DescribeConfigsRequest.DescribeConfigsResource(resource_type=resource_type, resource_name=name,
                                                                      configuration_keys=None)],
            include_synonyms=synonyms, include_documentation=documentation), version, DescribeConfigsResponse)
        (result,) = response.results
        assert result.error_code == 0 and result.configs
        return result.configs
    finally:
        client.close()


def synonyms(port: int, version: int, resource_type: int, name: str, include: bool) -> int:
    return sum(len(entry.synonyms) for entry in described(port, version, resource_type, name, synonyms=include))


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_synonyms_only_when_asked_at_every_version(engine_cluster, topic, version):
    port = engine_cluster.ports[0]
    for resource_type, name in ((TOPIC, topic), (BROKER, "0")):
        assert synonyms(port, version, resource_type, name, include=False) == 0
        assert synonyms(port, version, resource_type, name, include=True) > 0


def test_kafkajs_gets_no_synonyms_unless_it_asks(engine_cluster, topic):
    done = subprocess.run(["node", "acl_client.js", engine_cluster.bootstrap, "NONE", "", "", "describe-configs",
                           topic], cwd=KAFKAJS, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["unasked"] == 0 and counts["refused"] == 0 and counts["asked"] > 0


def documentation(port: int, version: int, resource_type: int, name: str, include: bool) -> dict:
    return {entry.name: getattr(entry, "documentation", None)
            for entry in described(port, version, resource_type, name, documentation=include)}


def test_documentation_only_when_asked_from_v3(engine_cluster, topic):
    port = engine_cluster.ports[0]
    for resource_type, name, doc_of in ((TOPIC, topic, topic_config_doc), (BROKER, "0", broker_config_doc),
                                        (GROUP, "documented-group", group_config_doc)):
        docs = documentation(port, 4, resource_type, name, include=True)
        assert docs == {key: doc_of(key) for key in docs}
        assert all(docs.get(key) for key in docs if doc_of(key)) and len([d for d in docs.values() if d]) > 5
        assert set(documentation(port, 4, resource_type, name, include=False).values()) == {None}
    assert docs["consumer.session.timeout.ms"].endswith(".")
    assert "retention.ms" in documentation(port, 3, TOPIC, topic, include=True)
    assert not any(documentation(port, 2, TOPIC, topic, include=True).values())     # v2 has no such field
