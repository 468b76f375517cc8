"""Topic pages and admin actions through Django's test client."""
import pytest
from django.test import Client
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from console.clusters.gateway import cluster_gateway
from tests.console.conftest import engine_cluster_row, make_topic
from tests.support.groups import produce

ADMIN_MARKER = "data-admin-action"


def topic_exists(cluster, name) -> bool:
    with cluster_gateway(cluster) as gw:
        return gw.metadata([name]).topic(name) is not None


def config_value(cluster, topic: str, key: str) -> str:
    with cluster_gateway(cluster) as gw:
        return next(c.value for c in gw.topic_configs(topic) if c.name == key)


def form_error(html: str) -> str:
    assert html.count('<p class="error">') == 1, html                     # said once
    return html.split('<p class="error">')[1].split("</p>")[0]


def test_a_refused_config_value_reads_as_a_sentence_keeps_the_form_and_shows_kafkas_code(
        cluster, operator_client, unique_topic):
    name = make_topic(cluster, unique_topic())
    edit = reverse("topics:config_edit", args=[cluster.pk, name, "retention.ms"])
    refused = operator_client.post(edit, {"value": "-5", "previewed": "set:-5", "confirmed": "yes"})
    html = refused.content.decode()
    assert refused.status_code == 400
    assert 'value="-5"' in html                                            # what the user typed stays
    error = form_error(html)
    assert "[Error" not in error and "InvalidConfigurationError" not in error and error.endswith(".")
    assert error == (f"The cluster refused the change to topic {name} with INVALID_CONFIG (40): Invalid value -5 "
                     "for configuration retention.ms: Value must be at least -1.")
    assert config_value(cluster, name, "retention.ms") == "604800000"
    assert AuditLogEntry.objects.get(action="topic.config_set").details["error"] == error   # the same sentence


@pytest.mark.parametrize("key, value, reason", [
    ("retention.ms", "-5", "Invalid value -5 for configuration retention.ms: Value must be at least -1"),
    ("cleanup.policy", "compact,delete,bogus",
     "Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete"),
])
def test_the_preview_asks_the_cluster_and_refuses_what_it_would_refuse(cluster, operator_client, unique_topic,
                                                                        key, value, reason):
    """validate_only before the diff: a value the broker refuses never reaches the Save button."""
    name = make_topic(cluster, unique_topic())
    preview = operator_client.post(reverse("topics:config_edit", args=[cluster.pk, name, key]), {"value": value})
    html = preview.content.decode()
    assert preview.status_code == 400 and 'id="config-diff"' not in html and "save-config" not in html
    assert form_error(html) == f"The cluster refused the change to topic {name} with INVALID_CONFIG (40): {reason}."
    assert not AuditLogEntry.objects.exists()                             # a preview changes nothing

    created = operator_client.post(reverse("topics:create", args=[cluster.pk]), {
        "name": name + "-new", "partitions": 1, "replication_factor": 1, "configs": f"{key}={value}"})
    html = created.content.decode()
    assert created.status_code == 400 and 'id="create-preview"' not in html
    assert form_error(html) == (f"The cluster refused creating topic {name}-new with INVALID_CONFIG (40): "
                                f"{reason}.")
    assert not topic_exists(cluster, name + "-new")


def test_a_config_value_in_a_persons_units_is_sent_in_kafkas(cluster, operator_client, unique_topic):
    name = make_topic(cluster, unique_topic())
    edit = reverse("topics:config_edit", args=[cluster.pk, name, "retention.ms"])
    not_a_duration = operator_client.post(edit, {"value": "soon"})
    html = not_a_duration.content.decode()
    assert not_a_duration.status_code == 400 and 'value="soon"' in html
    assert ('<span class="field-error">retention.ms: “soon” is not a duration: write a number with a unit, '
            'such as 3d, 12h, 30min, 45s or 500ms, or a plain number of milliseconds.</span>') in html
    preview = operator_client.post(edit, {"value": "3d"}).content.decode()
    assert 'value="259200000"' in preview and 'name="previewed" value="set:259200000"' in preview
    assert "3 d</ins>" in preview
    operator_client.post(edit, {"value": "3d", "previewed": "set:259200000", "confirmed": "yes"})
    assert config_value(cluster, name, "retention.ms") == "259200000"


def admin_posts(cluster, name):
    """Every admin URL with a POST body that would change something."""
    pk = cluster.pk
    return [
        (reverse("topics:create", args=[pk]), {"name": name + "-new", "partitions": 1, "replication_factor": 1,
                                               "confirmed": "yes"}),
        (reverse("topics:delete", args=[pk, name]), {"confirmation": name}),
        (reverse("topics:delete_records", args=[pk, name]), {"confirmation": name}),
        (reverse("topics:config_edit", args=[pk, name, "retention.ms"]),
         {"value": "1000", "previewed": "set:1000", "confirmed": "yes"}),
        (reverse("topics:add_partitions", args=[pk, name]), {"total_partitions": 3, "previewed": "3",
                                                              "confirmed": "yes"}),
        (reverse("topics:elect", args=[pk, name]), {}),
        (reverse("topics:elect_all", args=[pk]), {}),
        (reverse("brokers:stop", args=[pk, 2]), {}),
        (reverse("brokers:start", args=[pk, 2]), {}),
    ]


def test_viewer_sees_no_admin_buttons(cluster, viewer_client, operator_client, unique_topic):
    name = make_topic(cluster, unique_topic())
    pages = [reverse("clusters:overview", args=[cluster.pk]), reverse("brokers:list", args=[cluster.pk]),
             reverse("brokers:detail", args=[cluster.pk, 0]), reverse("topics:list", args=[cluster.pk]),
             reverse("topics:detail", args=[cluster.pk, name])]
    for url in pages:
        seen_by_viewer = viewer_client.get(url)
        assert seen_by_viewer.status_code == 200, url
        assert ADMIN_MARKER not in seen_by_viewer.content.decode(), url
        assert ADMIN_MARKER in operator_client.get(url).content.decode(), url


def test_viewer_is_refused_when_posting_to_admin_urls(cluster, viewer_client, unique_topic):
    name = make_topic(cluster, unique_topic())
    for url, data in admin_posts(cluster, name):
        assert viewer_client.post(url, data).status_code == 403, url
        assert viewer_client.get(url).status_code == 403, url
    assert topic_exists(cluster, name) and not topic_exists(cluster, name + "-new")
    with cluster_gateway(cluster) as gw:
        topic = gw.metadata([name]).topic(name)
        assert len(topic.partitions) == 1
        assert all(c.is_default for c in gw.topic_configs(name) if c.name == "retention.ms")
        assert len(gw.metadata(topics=[]).brokers) == 3
    assert not AuditLogEntry.objects.exists()


def test_a_user_without_a_role_sees_nothing(cluster, db):
    from django.contrib.auth import get_user_model

    client = Client()
    client.force_login(get_user_model().objects.create_user("nobody", password="x"))
    assert client.get(reverse("topics:list", args=[cluster.pk])).status_code == 403
    assert client.get(f"/api/clusters/{cluster.pk}/topics").status_code == 403


def test_operator_creates_and_deletes_a_topic(cluster, operator_client, unique_topic):
    name = unique_topic()
    url = reverse("topics:create", args=[cluster.pk])
    form = operator_client.get(url)
    assert form.status_code == 200 and "csrfmiddlewaretoken" in form.content.decode()
    fields = {"name": name, "partitions": 3, "replication_factor": 2, "configs": "retention.ms=86400000\n\n# note\n"}
    preview = operator_client.post(url, fields)
    html = preview.content.decode()
    assert preview.status_code == 200 and 'id="create-preview"' in html and not topic_exists(cluster, name)
    marker = html.split('name="previewed" value="')[1].split('"')[0]
    changed = operator_client.post(url, {**fields, "partitions": 4, "previewed": marker, "confirmed": "yes"})
    assert changed.status_code == 200 and not topic_exists(cluster, name)   # changed after the preview: shown again
    response = operator_client.post(url, {**fields, "previewed": marker, "confirmed": "yes"})
    assert response.status_code == 302 and response["Location"] == reverse("topics:detail", args=[cluster.pk, name])
    detail = operator_client.get(response["Location"]).content.decode()
    assert f"Topic {name} created." in detail
    configs = operator_client.get(reverse("topics:configs", args=[cluster.pk, name])).content.decode()
    assert 'data-raw="86400000">1 d</span>' in configs.split('data-config="retention.ms"')[1].split("</tr>")[0]
    listing = operator_client.get(reverse("topics:list", args=[cluster.pk]), {"q": name}).content.decode()
    assert f'data-topic="{name}"' in listing

    wrong = operator_client.post(reverse("topics:delete", args=[cluster.pk, name]), {"confirmation": "nope"})
    assert wrong.status_code == 400 and "the topic was not deleted" in wrong.content.decode()
    assert topic_exists(cluster, name)
    deleted = operator_client.post(reverse("topics:delete", args=[cluster.pk, name]), {"confirmation": name})
    assert deleted.status_code == 302 and not topic_exists(cluster, name)
    assert list(AuditLogEntry.objects.order_by("id").values_list("action", "result")) == [
        ("topic.create", "ok"), ("topic.delete", "ok")]


def test_operator_deletes_records_after_typing_the_name(cluster, engine_cluster, operator_client, unique_topic):
    name = make_topic(cluster, unique_topic(), partitions=2)
    produce(engine_cluster.bootstrap, name, [b"a", b"b", b"c"], partition=1)
    url = reverse("topics:delete_records", args=[cluster.pk, name])
    page = operator_client.get(url).content.decode()
    assert 'data-partition="1"' in page and "csrfmiddlewaretoken" in page and "topic_delete.js" in page
    # Offsets, not records: transaction markers and compaction make them differ.
    assert "transaction markers" in page and ">Offsets</th>" in page and ">Records</th>" not in page

    wrong = operator_client.post(url, {"partition": 1, "before_offset": 2, "confirmation": "nope"})
    assert wrong.status_code == 400 and "no record was deleted" in wrong.content.decode()
    no_partition = operator_client.post(url, {"before_offset": 2, "confirmation": name})
    assert no_partition.status_code == 400 and "An offset applies to one partition" in no_partition.content.decode()
    junk = operator_client.post(url, {"partition": "x", "confirmation": name})
    assert junk.status_code == 400 and "Enter a whole number." in junk.content.decode()
    past_end = operator_client.post(url, {"partition": 1, "before_offset": 9, "confirmation": name})
    assert past_end.status_code == 400 and form_error(past_end.content.decode()).startswith(
        f"The cluster refused deleting records of {name}-1 with OFFSET_OUT_OF_RANGE (1)")

    done = operator_client.post(url, {"partition": 1, "before_offset": 2, "confirmation": name}, follow=True)
    assert f"Records of {name} deleted: partitions now start at 1: 2." in done.content.decode()
    with cluster_gateway(cluster) as gw:
        offsets = gw.partition_offsets(gw.metadata([name]).topic(name).partitions)
    assert {p: (o.log_start_offset, o.high_watermark) for (_, p), o in offsets.items()} == {0: (0, 0), 1: (2, 3)}
    audited = AuditLogEntry.objects.filter(action="topic.delete_records").order_by("id")
    assert list(audited.values_list("result", flat=True)) == ["failed", "ok"]


def test_bad_input_gets_a_readable_message(cluster, operator_client, unique_topic):
    url = reverse("topics:create", args=[cluster.pk])
    cases = [
        ({"name": "has space", "partitions": 1, "replication_factor": 1}, "Use 1-249 of a-z"),
        ({"name": unique_topic(), "partitions": 0, "replication_factor": 1}, "greater than or equal to 1"),
        ({"name": unique_topic(), "partitions": 1, "replication_factor": 1, "configs": "retention.ms"},
         "Line 1: expected name=value"),
        ({"name": unique_topic(), "partitions": 1, "replication_factor": 5}, "INVALID_REPLICATION_FACTOR (38)"),
        ({"name": unique_topic(), "partitions": 1, "replication_factor": 1, "configs": "bogus.config=1"},
         "bogus.config"),
    ]
    for data, message in cases:
        response = operator_client.post(url, data)
        assert response.status_code == 400, data
        assert message in response.content.decode(), (data, response.content.decode()[-2000:])
    name = make_topic(cluster, unique_topic(), partitions=2)
    fewer = operator_client.post(reverse("topics:add_partitions", args=[cluster.pk, name]), {"total_partitions": 1})
    assert fewer.status_code == 400 and "already has 2 partitions" in form_error(fewer.content.decode())
    junk = operator_client.post(reverse("topics:add_partitions", args=[cluster.pk, name]), {"total_partitions": "x"})
    assert junk.status_code == 400 and "Enter a whole number." in junk.content.decode()


def test_operator_edits_configs_adds_partitions_and_runs_elections(cluster, operator_client, unique_topic):
    name = make_topic(cluster, unique_topic(), configs={"retention.ms": "60000"})
    table = operator_client.get(reverse("topics:configs", args=[cluster.pk, name])).content.decode()
    row = table.split('data-config="retention.ms"')[1].split("</tr>")[0]
    assert ('<td class="value"><span class="human" title="60000 ms (1 min)" data-raw="60000">1 min</span></td>'
            in row and 'data-source="topic"' in row and ('title="168 h (7 d)" data-raw="168">7 d</span> <small>(log.retention.hours)</small>') in row)
    assert 'title="How long records are kept' in row
    edit = reverse("topics:config_edit", args=[cluster.pk, name, "cleanup.policy"])
    preview = operator_client.post(edit, {"value": "compact"})
    html = preview.content.decode()
    assert 'id="config-diff"' in html and "<del>delete</del>" in html and "<ins>compact</ins>" in html
    assert 'value="compact"' in html                                      # the form keeps the value
    assert config_value(cluster, name, "cleanup.policy") == "delete"      # nothing saved before the diff
    stale = operator_client.post(edit, {"value": "compact,delete", "previewed": "set:compact", "confirmed": "yes"})
    assert "<ins>compact,delete</ins>" in stale.content.decode()          # changed after the diff: shown again
    saved = operator_client.post(edit, {"value": "compact", "previewed": "set:compact", "confirmed": "yes"},
                                 follow=True)
    assert "cleanup.policy of %s set to compact." % name in saved.content.decode()
    assert config_value(cluster, name, "cleanup.policy") == "compact"
    reset = reverse("topics:config_edit", args=[cluster.pk, name, "retention.ms"])
    operator_client.post(reset, {"reset": "on", "previewed": "reset", "confirmed": "yes"}, follow=True)
    assert config_value(cluster, name, "retention.ms") == "604800000"
    assert list(AuditLogEntry.objects.filter(action="topic.config_set").order_by("id").values_list(
        "target", "result")) == [
        (f"{name} cleanup.policy", "ok"), (f"{name} retention.ms", "ok")]
    grow = reverse("topics:add_partitions", args=[cluster.pk, name])
    preview = operator_client.post(grow, {"total_partitions": 4}).content.decode()
    assert 'id="partitions-preview"' in preview and 'id="key-ordering-note"' in preview   # no records, no keys
    added = operator_client.post(grow, {"total_partitions": 4, "previewed": "4", "confirmed": "yes"}, follow=True)
    assert f"{name} now has 4 partitions." in added.content.decode()
    elected = operator_client.post(reverse("topics:elect", args=[cluster.pk, name]), follow=True)
    assert "Preferred replica election: 0 partitions moved to their preferred leader, 4 already led by it." in \
        elected.content.decode()
    asked = operator_client.post(reverse("topics:elect_all", args=[cluster.pk]))
    assert asked.status_code == 200 and "Run a preferred replica election for every topic of" in asked.content.decode()
    assert not AuditLogEntry.objects.filter(action="topic.elect_preferred_leaders", target="*").exists()
    all_topics = operator_client.post(reverse("topics:elect_all", args=[cluster.pk]), {"confirmed": "yes"},
                                      follow=True)
    assert "Preferred replica election:" in all_topics.content.decode()


def test_forms_need_the_csrf_token(cluster, users, unique_topic):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["operator"])
    name = unique_topic()
    response = client.post(reverse("topics:create", args=[cluster.pk]),
                           {"name": name, "partitions": 1, "replication_factor": 1})
    assert response.status_code == 403 and not topic_exists(cluster, name)


def test_topics_json(cluster, engine_cluster, viewer_client, unique_topic):
    name = make_topic(cluster, unique_topic(), assignments={0: [0, 1], 1: [1, 2]})
    listing = viewer_client.get(f"/api/clusters/{cluster.pk}/topics", {"q": name}).json()
    assert set(listing) == {"cluster", "topics", "search", "status", "include_internal", "page", "pages", "per_page",
                            "matching", "total", "warnings"}
    assert listing["matching"] == 1 and listing["topics"][0]["name"] == name
    stats = listing["topics"][0]["stats"]
    assert {k: stats[k] for k in ("partitions", "replication_factor", "summed_offsets", "brokers",
                                  "preferred_replicas_percent", "under_replicated_percent",
                                  "brokers_skewed_percent", "brokers_leader_skewed_percent",
                                  "brokers_spread_percent")} == {
        "partitions": 2, "replication_factor": 2, "summed_offsets": 0, "brokers": 3,
        "preferred_replicas_percent": 100, "under_replicated_percent": 0, "brokers_skewed_percent": 0,
        "brokers_leader_skewed_percent": 0, "brokers_spread_percent": 100}
    detail = viewer_client.get(f"/api/clusters/{cluster.pk}/topics/{name}").json()
    assert detail["partitions"][1] == {"partition": 1, "leader": 1, "replicas": [1, 2], "isr": [1, 2],
                                       "offline_replicas": [], "is_preferred_leader": True,
                                       "is_under_replicated": False, "log_start_offset": 0, "high_watermark": 0,
                                       "size": 0}
    config = next(c for c in detail["configs"] if c["name"] == "retention.ms")
    assert {k: config[k] for k in ("name", "value", "source", "kafka_source", "read_only", "is_sensitive",
                                   "config_type")} == {
        "name": "retention.ms", "value": "604800000", "source": "default", "kafka_source": "DEFAULT_CONFIG",
        "read_only": False, "is_sensitive": False, "config_type": "LONG"}
    assert config["doc"].startswith("How long records are kept")
    assert detail["consumer_groups"] == []
    assert viewer_client.get(f"/api/clusters/{cluster.pk}/topics/not-there").status_code == 404


def test_the_create_form_starts_from_the_clusters_own_defaults_and_names_them(db, engine_factory, operator_client):
    engine = engine_factory(brokers=3, configs={"default.replication.factor": "3", "num.partitions": "6"})
    kept = engine_cluster_row("three replicas", engine)
    form = operator_client.get(reverse("topics:create", args=[kept.pk])).context["form"]
    assert (form["partitions"].value(), form["replication_factor"].value()) == (6, 3)
    html = operator_client.get(reverse("topics:create", args=[kept.pk])).content.decode()
    assert "The cluster&#x27;s default (default.replication.factor): 3, on 3 brokers up." in html
    assert "The cluster&#x27;s default (num.partitions): 6." in html
