"""Topic services against a real engine: the change happens, the audit log says so, the event goes out."""
import pytest

from console.accounts.models import AuditLogEntry
from console.clusters.gateway import cluster_gateway
from console.errors import InvalidInput, NotFound
from console.kafka_gateway import GatewayError
from console.topics import services
from tests.console.conftest import make_topic
from tests.support.groups import produce


def describe(cluster, name):
    with cluster_gateway(cluster) as gw:
        return gw.metadata([name]).topic(name)


def overrides(cluster, name):
    with cluster_gateway(cluster) as gw:
        return {c.name: c.value for c in gw.topic_configs(name) if c.source == "DYNAMIC_TOPIC_CONFIG"}


def test_topic_create(cluster, users, unique_topic, events, django_capture_on_commit_callbacks):
    name = unique_topic()
    with django_capture_on_commit_callbacks(execute=True):
        services.topic_create(cluster=cluster, actor=users["operator"], name=name, partitions=4,
                              replication_factor=2, configs={"retention.ms": "60000"})
    topic = describe(cluster, name)
    assert len(topic.partitions) == 4 and {len(p.replicas) for p in topic.partitions} == {2}
    assert overrides(cluster, name) == {"retention.ms": "60000"}
    entry = AuditLogEntry.objects.get(action="topic.create", target=name)
    assert (entry.actor, entry.cluster, entry.result) == (users["operator"], cluster, "ok")
    assert entry.details == {"partitions": 4, "replication_factor": 2, "configs": {"retention.ms": "60000"}}
    assert events == [("topic.created", {"cluster": cluster.pk, "topic": name})]


def test_failed_actions_are_audited_with_the_reason(cluster, users, unique_topic, events,
                                                    django_capture_on_commit_callbacks):
    name = make_topic(cluster, unique_topic())
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(GatewayError, match="already exists"):
            services.topic_create(cluster=cluster, actor=users["operator"], name=name, partitions=1,
                                  replication_factor=1)
        with pytest.raises(InvalidInput, match="not a legal topic name"):
            services.topic_create(cluster=cluster, actor=users["operator"], name="bad name!", partitions=1,
                                  replication_factor=1)
    failed = AuditLogEntry.objects.filter(result="failed").order_by("id")
    assert [e.target for e in failed] == [name, "bad name!"]
    assert failed[0].details["error"] == (f"The cluster refused creating topic {name} with TOPIC_ALREADY_EXISTS (36): "
                                          f"Topic {name!r} already exists.")
    assert failed[0].details["kafka_code"] == "TOPIC_ALREADY_EXISTS (36)"
    assert failed[1].details["error"].startswith("'bad name!' is not a legal topic name")
    assert events == []


def test_topic_delete_needs_the_name_typed(cluster, users, unique_topic):
    name = make_topic(cluster, unique_topic())
    with pytest.raises(InvalidInput, match="Type the topic's name"):
        services.topic_delete(cluster=cluster, actor=users["operator"], name=name, confirmation=name + "x")
    assert describe(cluster, name) is not None
    services.topic_delete(cluster=cluster, actor=users["operator"], name=name, confirmation=name)
    assert describe(cluster, name) is None
    assert list(AuditLogEntry.objects.filter(action="topic.delete").values_list("result", flat=True)) == [
        "ok", "failed"]


def test_topic_update_configs_sets_and_resets_overrides(cluster, users, unique_topic):
    name = make_topic(cluster, unique_topic(), configs={"retention.ms": "60000", "segment.ms": "3600000"})
    change = services.topic_update_configs(cluster=cluster, actor=users["operator"], name=name,
                                           configs={"retention.ms": "120000", "segment.ms": "3600000",
                                                    "cleanup.policy": "compact"})
    assert change == {"set": {"retention.ms": "120000", "cleanup.policy": "compact"}, "reset": []}
    assert overrides(cluster, name) == {"retention.ms": "120000", "segment.ms": "3600000",
                                        "cleanup.policy": "compact"}
    change = services.topic_update_configs(cluster=cluster, actor=users["operator"], name=name,
                                           configs={"cleanup.policy": "compact"})
    assert change == {"set": {}, "reset": ["retention.ms", "segment.ms"]}
    assert overrides(cluster, name) == {"cleanup.policy": "compact"}
    with pytest.raises(InvalidInput, match="Unknown topic config: no.such.config"):
        services.topic_update_configs(cluster=cluster, actor=users["operator"], name=name,
                                      configs={"no.such.config": "1"})
    with pytest.raises(GatewayError, match="(?i)invalid|cleanup.policy"):
        services.topic_update_configs(cluster=cluster, actor=users["operator"], name=name,
                                      configs={"cleanup.policy": "sometimes"})


def test_topic_add_partitions(cluster, users, unique_topic):
    name = make_topic(cluster, unique_topic(), partitions=2)
    with pytest.raises(InvalidInput, match="already has 2 partitions"):
        services.topic_add_partitions(cluster=cluster, actor=users["operator"], name=name, total_partitions=2)
    services.topic_add_partitions(cluster=cluster, actor=users["operator"], name=name, total_partitions=5)
    assert len(describe(cluster, name).partitions) == 5
    with pytest.raises(NotFound):
        services.topic_add_partitions(cluster=cluster, actor=users["operator"], name=name + "-gone",
                                      total_partitions=5)
    entry = AuditLogEntry.objects.filter(action="topic.add_partitions", result="ok").get()
    assert entry.details == {"total_partitions": 5, "previous_partitions": 2}


def test_election_on_a_balanced_topic_has_nothing_to_do(cluster, users, unique_topic):
    name = make_topic(cluster, unique_topic(), assignments={0: [0, 1], 1: [1, 0]})
    outcome = services.topic_elect_preferred_leaders(cluster=cluster, actor=users["operator"], name=name)
    assert (outcome.requested, outcome.already_preferred, outcome.result.elected) == (0, 2, ())
    assert outcome.summary() == "0 partitions moved to their preferred leader, 2 already led by it."


def _ranges(cluster, name) -> dict[int, tuple[int, int]]:
    from console.topics.selectors import topic_ranges
    return {r.partition: (r.log_start_offset, r.high_watermark) for r in topic_ranges(cluster=cluster, name=name)}


def test_topic_delete_records_in_one_partition_then_all(cluster, engine_cluster, users, unique_topic, events,
                                                        django_capture_on_commit_callbacks):
    name = make_topic(cluster, unique_topic(), partitions=2)
    for partition in (0, 1):
        produce(engine_cluster.bootstrap, name, [b"v%d" % i for i in range(5)], partition=partition)

    with django_capture_on_commit_callbacks(execute=True):
        assert services.topic_delete_records(cluster=cluster, actor=users["operator"], name=name, partition=0,
                                             before_offset=3, confirmation=name) == {0: 3}
    assert _ranges(cluster, name) == {0: (3, 5), 1: (0, 5)}
    with django_capture_on_commit_callbacks(execute=True):
        assert services.topic_delete_records(cluster=cluster, actor=users["operator"], name=name, partition=None,
                                             before_offset=None, confirmation=name) == {0: 5, 1: 5}
    assert _ranges(cluster, name) == {0: (5, 5), 1: (5, 5)}
    entries = AuditLogEntry.objects.filter(action="topic.delete_records", target=name).order_by("id")
    assert [(e.result, e.details) for e in entries] == [
        ("ok", {"partition": 0, "before_offset": 3, "log_start_offsets": {"0": 3}}),
        ("ok", {"partition": None, "before_offset": None, "log_start_offsets": {"0": 5, "1": 5}})]
    assert events == [("topic.records_deleted", {"cluster": cluster.pk, "topic": name})] * 2


def test_topic_delete_records_refusals_delete_nothing_and_are_audited(cluster, engine_cluster, users, unique_topic):
    name = make_topic(cluster, unique_topic())
    compacted = make_topic(cluster, unique_topic("compacted"), partitions=3, configs={"cleanup.policy": "compact"})
    produce(engine_cluster.bootstrap, name, [b"a", b"b"], partition=0)
    produce(engine_cluster.bootstrap, compacted, [(b"k", b"a"), (b"k", b"b")], partition=0)
    operator = users["operator"]

    def delete(topic=name, partition=0, before_offset=None, confirmation=None):
        services.topic_delete_records(cluster=cluster, actor=operator, name=topic, partition=partition,
                                      before_offset=before_offset, confirmation=topic if confirmation is None
                                      else confirmation)
    with pytest.raises(InvalidInput, match="Type the topic's name"):
        delete(confirmation="other")
    with pytest.raises(InvalidInput, match="has no partition 7"):
        delete(partition=7)
    with pytest.raises(InvalidInput, match="An offset needs a partition"):
        delete(partition=None, before_offset=1)
    with pytest.raises(GatewayError) as past_the_end:
        delete(before_offset=3)
    assert past_the_end.value.kafka_code == "OFFSET_OUT_OF_RANGE (1)"
    with pytest.raises(GatewayError) as compact_only:
        delete(topic=compacted, partition=None)
    assert compact_only.value.kafka_code == "POLICY_VIOLATION (44)"
    # Every partition refused: one sentence naming them, Kafka's name and code, and what to do.
    assert str(compact_only.value) == (
        f"The cluster refused deleting records of {compacted}-0, {compacted}-1, {compacted}-2 with "
        "POLICY_VIOLATION (44): the request breaks a policy of the cluster. Kafka deletes records only from a "
        "topic whose cleanup.policy includes delete; a compact-only topic keeps them until compaction removes them.")
    assert str(past_the_end.value).startswith(f"The cluster refused deleting records of {name}-0 with "
                                              "OFFSET_OUT_OF_RANGE (1)")
    with pytest.raises(NotFound):
        delete(topic=unique_topic("missing"))

    assert _ranges(cluster, name) == {0: (0, 2)} and _ranges(cluster, compacted)[0] == (0, 2)
    failed = AuditLogEntry.objects.filter(action="topic.delete_records").order_by("id").values_list("result", flat=True)
    assert list(failed) == ["failed"] * 6
    audited = AuditLogEntry.objects.get(action="topic.delete_records", target=compacted)
    assert audited.details["error"] == str(compact_only.value)
