"""What the topic pages show, through Django's test client: the list's columns, the overview's
cards, the consumers tab's per-partition offsets, the groups on the delete page, and the
config and admin forms' buttons."""
import os
import re
from html import unescape

from django.urls import reverse
from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition

from console import formatting
from console.clusters.gateway import cluster_gateway
from tests.console.conftest import make_topic, wait_for_partitions
from tests.console.topics.test_selectors import commit_offsets
from tests.support.groups import produce
from tests.support.waiting import wait_until


def headers(html: str, table_id: str) -> list[str]:
    head = html.split(f'id="{table_id}"')[1].split("</thead>")[0]
    return [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)]


def row(html: str, marker: str) -> str:
    return html.split(marker)[1].split("</tr>")[0]


def test_the_list_shows_health_after_replication_and_flags_a_spread_only_when_it_could_grow(
        cluster, engine_cluster, viewer_client, unique_topic):
    one = make_topic(cluster, unique_topic("one"))                                    # 1 replica: on 1 broker of 3
    crowded = make_topic(cluster, unique_topic("crowded"), assignments={0: [0], 1: [0], 2: [0]})
    trimmed = make_topic(cluster, unique_topic("trimmed"))
    produce(engine_cluster.bootstrap, trimmed, [b"r"] * 5, partition=0)
    with cluster_gateway(cluster) as gw:
        gw.delete_records(trimmed, {0: 2})
    prefix = one.rsplit("-one-", 1)[0]
    html = viewer_client.get(reverse("topics:list", args=[cluster.pk]), {"q": prefix}).content.decode()

    assert headers(html, "topics") == [
        "Topic", "# Partitions", "Replication", "Under-replicated %", "Offline", "Size", "Messages", "Retention",
        "Cleanup policy", "Preferred replicas %", "# Brokers", "Brokers spread %", "Skewed / leader-skewed %"]
    # A 1-partition topic is as spread as it can be; 3 partitions all on broker 0 could use all 3 brokers.
    assert '<td class="num" data-col="spread">33</td>' in row(html, f'data-topic="{one}"')
    assert '<td class="num warn" data-col="spread">33</td>' in row(html, f'data-topic="{crowded}"')
    # CMAK's sum of partition offsets shows only where it is not the message count (records deleted).
    assert "data-summed-offsets" not in row(html, f'data-topic="{one}"')
    messages = row(html, f'data-topic="{trimmed}"').split('data-col="messages"')[1].split("</td>")[0]
    assert messages.startswith(' data-sort="3">3<br><small') and 'data-summed-offsets="5">offsets 5</small>' in messages
    skew = row(html, f'data-topic="{crowded}"').split('data-col="skew"')[1].split("</td>")[0]
    assert ('<span class="" title="Brokers skewed %">0</span> / '
            '<span class="" title="Brokers leader skewed %">0</span>') in skew


def test_the_overview_starts_with_size_messages_retention_cleanup_and_min_insync(cluster, engine_cluster,
                                                                                   viewer_client, unique_topic):
    name = make_topic(cluster, unique_topic(), partitions=2, replication_factor=2,
                      configs={"retention.ms": "86400000", "retention.bytes": "1073741824",
                               "min.insync.replicas": "2"})
    produce(engine_cluster.bootstrap, name, [b"x" * 100] * 3, partition=0)
    produce(engine_cluster.bootstrap, name, [b"y" * 100], partition=1)
    wait_for_partitions(cluster, name, lambda ps: all(len(p.isr) == 2 for p in ps), "both replicas in sync")
    html = viewer_client.get(reverse("topics:detail", args=[cluster.pk, name])).content.decode()
    figures = html.split('id="topic-figures"')[1].split("</dl>")[0]
    names = [re.sub(r"<[^>]+>", "", t) for t in re.findall(r"<dt[^>]*>(.*?)</dt>", figures)]
    assert names[:9] == ["Size", "Messages", "Retention", "Cleanup policy", "Min in-sync replicas", "Replication",
                         "# Partitions", "Offline partitions", "Under-replicated"]
    assert set(names[9:]) == {"Sum of partition offsets", "# Brokers", "Preferred replicas %", "Brokers skewed %",
                              "Brokers leader skewed %", "Brokers spread %", "Under-replicated %"}   # CMAK's, after
    assert re.search(r'id="topic-size">\d[\d.]* (B|KiB)</dd>', figures)
    assert 'id="topic-messages">4</dd>' in figures
    retention = figures.split('id="topic-retention">')[1].split("</dd>")[0]
    assert '>1 d</span>' in retention and '>1 GiB</span> per partition</small>' in retention
    assert 'id="topic-cleanup-policy">delete</dd>' in figures
    assert '<dd id="topic-min-insync" class="">2 <small>of 2</small></dd>' in figures
    # The partitions' sizes are their leader's replica: two replicas each make the card twice their sum.
    assert headers(html, "partitions")[-1] == "Leader's size"


def test_the_consumers_tab_has_a_table_per_group_and_marks_a_commit_past_the_log_end(
        cluster, engine_cluster, viewer_client, unique_topic):
    name = make_topic(cluster, unique_topic(), partitions=2)
    produce(engine_cluster.bootstrap, name, [b"a"] * 3, partition=0)
    ahead, behind = unique_topic("ahead"), unique_topic("behind")
    commit_offsets(engine_cluster.bootstrap, ahead, {(name, 0): 12345, (name, 1): 0})   # partition 0 ends at 3
    commit_offsets(engine_cluster.bootstrap, behind, {(name, 0): 1})
    html = viewer_client.get(reverse("topics:consumers", args=[cluster.pk, name])).content.decode()

    first = row(html, f'<tr data-group="{ahead}">') + html.split(f'<tr data-group="{ahead}">')[1].split("</details>")[0]
    assert '<details class="group-partitions" open>' in first               # opened: it has something to see
    assert '<span class="warn" data-past-log-end="1">1 committed past the log end</span>' in first
    partition_0 = first.split('<tr data-partition="0">')[1].split("</tr>")[0]
    # The offset as Kafka wrote it (copyable, no separators); the lag counted, negative, marked as on the group page.
    assert 'data-committed-offset="12345">12345</td>' in partition_0
    assert '<td class="num">3</td>' in partition_0
    assert ('<td class="num warn" data-lag="-12342" title="The committed offset is past the log end: the group '
            'skips the records written until the log reaches it. Counted as 0 in the totals.">-12,342</td>'
            ) in partition_0
    partition_1 = first.split('<tr data-partition="1">')[1].split("</tr>")[0]
    assert '<td class="num" data-lag="0">0</td>' in partition_1

    second = html.split(f'<tr data-group="{behind}">')[1].split("</details>")[0]
    assert '<details class="group-partitions">' in second and "past the log end" not in second
    # Both partitions of the topic, as on the group's page: partition 1 reads "no commit", counted apart.
    assert "<summary>2 partitions</summary>" in second
    assert '<td class="num" data-lag="2">2</td>' in second
    assert '<span class="no-commit">no commit</span>' in second.split('<tr data-partition="1">')[1]
    totals = html.split(f'<tr data-group="{behind}">')[1].split("</details>")[1].split("</tr>")[0]
    assert 'data-no-commit="1">1 no commit' in totals


def test_the_delete_page_names_the_groups_that_read_the_topic(cluster, engine_cluster, operator_client,
                                                              unique_topic):
    name = make_topic(cluster, unique_topic(), partitions=2)
    url = reverse("topics:delete", args=[cluster.pk, name])
    nobody = operator_client.get(url).content.decode()
    assert '<p id="readers-none">None: no consumer group has committed offsets on' in nobody

    idle, active = unique_topic("idle"), unique_topic("active")
    commit_offsets(engine_cluster.bootstrap, idle, {(name, 0): 0})
    consumer = KafkaConsumer(name, bootstrap_servers=engine_cluster.bootstrap, group_id=active,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        wait_until(lambda: consumer.poll(100) is not None and len(consumer.assignment()) == 2, message="assignment")
        consumer.commit({TopicPartition(name, 0): OffsetAndMetadata(0, "", -1)})
        html = operator_client.get(url).content.decode()
    finally:
        consumer.close()
    warning = html.split('id="readers-warning"')[1].split("</p>")[0]
    assert warning.startswith(' data-groups="2" data-active="1">2 consumer groups read ')
    assert "(1 active now). An active group's consumers lose the topic's partitions and report " \
           "UNKNOWN_TOPIC_OR_PARTITION" in warning
    assert '<td class="warn">yes, 1 member</td>' in row(html, f'<tr data-group="{active}" data-active="yes">')
    assert '<td class="">no: offsets only</td>' in row(html, f'<tr data-group="{idle}" data-active="no">')
    # The form is below, unchanged: deleting still needs the name typed.
    assert html.index('id="readers"') < html.index('id="delete-topic"')


def test_a_config_form_offers_to_remove_only_an_override_and_keeps_its_buttons_in_one_row(
        cluster, operator_client, unique_topic):
    name = make_topic(cluster, unique_topic(), configs={"retention.ms": "60000"})
    default = reverse("topics:config_edit", args=[cluster.pk, name, "cleanup.policy"])
    assert 'name="reset"' not in operator_client.get(default).content.decode()        # nothing to remove
    refused = operator_client.post(default, {"value": "", "reset": "on"})
    assert refused.status_code == 400 and "Give a value." in refused.content.decode()  # no box, no reset
    override = reverse("topics:config_edit", args=[cluster.pk, name, "retention.ms"])
    assert "Remove the topic&#x27;s override" in operator_client.get(override).content.decode()

    preview = operator_client.post(override, {"value": "2h"}).content.decode()
    actions = preview.split('<div class="actions" id="config-actions">')[1].split("</div>")[0]
    assert re.findall(r'data-admin-action="([a-z-]+)"', actions) == ["save-config", "preview-config"]
    assert "Preview again" in actions and "Cancel</a>" in actions
    assert 'data-admin-action="save-config"' not in preview.split('id="config-diff"')[1].split("</div>")[0]

    grow = operator_client.post(reverse("topics:add_partitions", args=[cluster.pk, name]),
                                {"total_partitions": 2}).content.decode()
    actions = grow.split('<div class="actions" id="partitions-actions">')[1].split("</div>")[0]
    assert re.findall(r'data-admin-action="([a-z-]+)"', actions) == ["confirm-add-partitions",
                                                                   "preview-add-partitions"]
    created = operator_client.post(reverse("topics:create", args=[cluster.pk]),
                                   {"name": name + "-new", "partitions": 1, "replication_factor": 1}).content.decode()
    actions = created.split('<div class="actions" id="create-actions">')[1].split("</div>")[0]
    assert re.findall(r'data-admin-action="([a-z-]+)"', actions) == ["create-topic", "preview-topic"]


def test_the_configs_default_column_reads_in_the_same_units_as_the_value_column(cluster, viewer_client,
                                                                                 unique_topic):
    name = make_topic(cluster, unique_topic(), configs={"retention.ms": "3600000"})
    html = viewer_client.get(reverse("topics:configs", args=[cluster.pk, name])).content.decode()

    def default(config: str) -> str:
        return row(html, f'data-config="{config}"').split('class="default-value">')[1].split("</td>")[0]

    # The human form shows; Kafka's raw value and its unit stay in the hover text and data-raw.
    retention = default("retention.ms")
    assert "data-raw=" in retention, retention
    raw = re.search(r'data-raw="(\d+)"', retention).group(1)
    source = re.search(r"<small>\(([a-z.]+)\)</small>", retention).group(1)     # the broker's log.retention.*
    human = formatting.config_human(source, raw)
    assert retention.startswith(f'<span class="human" title="{formatting.config_with_unit(source, raw)}" '
                                f'data-raw="{raw}">{human}</span>')
    assert 'data-raw="9223372036854775807">unlimited</span>' in default("max.compaction.lag.ms")


def test_the_configs_page_says_what_gzip_level_minus_one_means(cluster, viewer_client, unique_topic):
    name = make_topic(cluster, unique_topic())
    html = viewer_client.get(reverse("topics:configs", args=[cluster.pk, name])).content.decode()
    gzip = unescape(row(html, 'data-config="compression.gzip.level"'))
    value = gzip.split('class="value">')[1].split("</td>")[0]
    assert value == ('<span class="human" title="-1 (gzip\'s default, level 6)" data-raw="-1">'
                     "gzip's default, level 6</span>")
    assert "gzip's default, level 6</span>" in gzip.split('class="default-value">')[1]


def test_a_compact_only_topic_says_retention_deletes_nothing_not_its_unused_retention_ms(
        cluster, viewer_client, unique_topic):
    compacted = make_topic(cluster, unique_topic("kept"), configs={"cleanup.policy": "compact"})
    deleted = make_topic(cluster, unique_topic("aged"), configs={"cleanup.policy": "compact,delete",
                                                                  "retention.ms": "86400000"})
    listed = viewer_client.get(reverse("topics:list", args=[cluster.pk]), {"q": os.path.commonprefix([compacted, deleted])}).content.decode()

    def retention(html: str, name: str) -> str:
        return unescape(re.sub(r"<[^>]+>", "", row(html, f">{name}</a>").split('data-col="retention"')[1]
                               .split("</td>")[0].split(">", 1)[1]))
    assert retention(listed, compacted) == "compacted"
    assert retention(listed, deleted) == "1 d"
    page = unescape(viewer_client.get(reverse("topics:detail", args=[cluster.pk, compacted])).content.decode())
    figure = page.split('id="topic-retention">')[1].split("</dd>")[0]
    assert 'data-retention="compacted"' in figure and ">compacted</span>" in figure
    assert "retention.ms is 604800000 ms (7 d)" in figure
