import re
from html import unescape

from django.urls import reverse

from tests.console.conftest import make_topic, wait_for_partitions


def broker_states(cluster) -> dict[int, str]:
    from console.brokers.selectors import broker_list
    return {b.broker_id: b.state for b in broker_list(cluster=cluster).brokers}


def test_brokers_page_and_json(cluster, engine_cluster, viewer_client, operator_client):
    page = viewer_client.get(reverse("brokers:list", args=[cluster.pk])).content.decode()
    for port in engine_cluster.ports:
        assert f"127.0.0.1:{port}" in page
    assert "data-admin-action" not in page
    assert operator_client.get(reverse("brokers:list", args=[cluster.pk])).content.decode().count(
        'data-admin-action="stop-broker"') == 3
    data = viewer_client.get(f"/api/clusters/{cluster.pk}/brokers").json()
    assert data["can_stop_start"] is True and [b["broker_id"] for b in data["brokers"]] == [0, 1, 2]
    assert set(data["brokers"][0]) == {"broker_id", "host", "port", "rack", "is_up", "is_controller", "state",
                                       "partitions",
                                       "leaders", "partition_ids", "leader_ids", "partition_ids_preview", "is_skewed",
                                       "is_leader_skewed", "log_dir_size", "offline_partitions",
                                       "replicas_deviation_percent", "leaders_deviation_percent"}
    detail = viewer_client.get(f"/api/clusters/{cluster.pk}/brokers/1").json()
    assert detail["broker"]["broker_id"] == 1
    # num.partitions is fixed at start in Kafka (not a dynamic broker config): read-only.
    num_partitions = next(c for c in detail["configs"] if c["name"] == "num.partitions")
    assert {k: num_partitions[k] for k in ("value", "source", "is_default", "read_only", "is_sensitive")} == {
        "value": "1", "source": "DEFAULT_CONFIG", "is_default": True, "read_only": True, "is_sensitive": False}
    assert viewer_client.get(f"/api/clusters/{cluster.pk}/brokers/42").status_code == 404


def test_operator_stops_and_starts_a_broker(private_cluster, operator_client, unique_topic):
    name = make_topic(private_cluster, unique_topic(), assignments={0: [1, 2]})
    brokers = reverse("brokers:list", args=[private_cluster.pk])
    asked = operator_client.post(reverse("brokers:stop", args=[private_cluster.pk, 2]), {"next": brokers})
    assert asked.status_code == 200 and "Stop broker 2? A controlled shutdown moves" in asked.content.decode()
    assert 'name="next" value="%s"' % brokers in asked.content.decode()      # the confirmation posts it again
    assert broker_states(private_cluster)[2] == "up"                          # nothing done before confirming
    stopped = operator_client.post(reverse("brokers:stop", args=[private_cluster.pk, 2]),
                                   {"next": brokers, "confirmed": "yes"}, follow=True)
    html = stopped.content.decode()
    assert stopped.redirect_chain[-1][0] == brokers
    assert "Broker 2 is stopped." in html and 'data-admin-action="start-broker"' in html
    wait_for_partitions(private_cluster, name, lambda ps: ps[0].isr == (1,), "broker 2 out of the ISR")
    overview = operator_client.get(reverse("clusters:overview", args=[private_cluster.pk])).content.decode()
    assert 'id="ov-brokers-down" class="bad">1<' in overview and 'id="ov-under-replicated" class="bad">1<' in overview
    started = operator_client.post(reverse("brokers:start", args=[private_cluster.pk, 2]),
                                   {"next": "https://elsewhere.example/"}, follow=True)
    assert started.redirect_chain[-1][0] == brokers          # no open redirect
    assert "Broker 2 is running." in started.content.decode()


def test_broker_page_lists_its_topics_a_page_at_a_time(private_cluster, viewer_client, settings, unique_topic):
    settings.TOPICS_PER_PAGE = 2
    names = sorted(make_topic(private_cluster, unique_topic(), assignments={0: [1], 1: [1]}) for _ in range(3))
    url = reverse("brokers:detail", args=[private_cluster.pk, 1])

    first = viewer_client.get(url).content.decode()
    second = viewer_client.get(url, {"page": 2}).content.decode()

    assert "3 topics, page 1 of 2." in first
    shown = [[n for n in names if f'<tr data-topic="{n}">' in page] for page in (first, second)]
    assert shown == [names[:2], names[2:]]
    assert '<td class="ids"><span class="pid"><span class="badge leader"' in first and 'data-leads="1">1</span></span></td>' in first
    assert f'href="/clusters/{private_cluster.pk}/topics/{names[0]}/"' in first


def test_the_console_keeps_working_with_the_first_bootstrap_broker_stopped(private_cluster, operator_client,
                                                                          unique_topic):
    """Broker 0 is first in the bootstrap list: every page still answers, and it shows as stopped
    with a Start button; both actions are in the audit log."""
    from console.accounts.models import AuditLogEntry

    assert private_cluster.bootstrap_servers.count(",") == 2
    name = make_topic(private_cluster, unique_topic(), partitions=3, replication_factor=1,
                      assignments={0: [0], 1: [1], 2: [2]})
    only_on_0 = make_topic(private_cluster, unique_topic("only-on-0"), assignments={0: [0]})
    stopped = operator_client.post(reverse("brokers:stop", args=[private_cluster.pk, 0]), {"confirmed": "yes"},
                                   follow=True)
    assert "Broker 0 is stopped." in stopped.content.decode()
    pages = [reverse("clusters:overview", args=[private_cluster.pk]), reverse("brokers:list", args=[private_cluster.pk]),
             reverse("brokers:detail", args=[private_cluster.pk, 0]), reverse("topics:list", args=[private_cluster.pk]),
             reverse("topics:detail", args=[private_cluster.pk, name]),
             reverse("topics:detail", args=[private_cluster.pk, only_on_0])]
    answers = {url: operator_client.get(url) for url in pages}
    assert {url: r.status_code for url, r in answers.items()} == {url: 200 for url in pages}
    brokers_html = answers[pages[1]].content.decode()
    assert '<td class="bad" data-state="stopped">stopped</td>' in brokers_html
    row_0 = brokers_html.split('<tr data-broker="0">')[1].split("</tr>")[0]
    assert 'data-admin-action="start-broker"' in row_0
    # The stopped broker keeps its 2 replicas (mean 4 / 3: +50 %) and leads none of the 2 partitions
    # that have a leader (-100 %); neither is skewed: 2 and 0 are as even as 4 and 2 divide by 3.
    assert '<td class="num" data-skewed="no" data-sort="50.0">+50 %</td>' in row_0
    assert '<td class="num" data-leader-skewed="no" data-sort="-100.0">-100 %</td>' in row_0
    assert 'data-state="stopped"' in answers[pages[0]].content.decode()
    # The partitions-by-broker table of a topic no live broker holds says why it is empty.
    alone = answers[pages[5]].content.decode().split('id="partitions-by-broker"')[1].split("</table>")[0]
    assert '<tr id="no-broker-holds"><td colspan="6">' in alone
    assert (f"No live broker holds a partition of {only_on_0}: every partition is offline. Its replicas are on "
            "broker 0, which is not up; the partitions come back when it starts again.") in alone

    started = operator_client.post(reverse("brokers:start", args=[private_cluster.pk, 0]), follow=True)
    assert "Broker 0 is running." in started.content.decode()
    assert list(AuditLogEntry.objects.filter(action__startswith="broker.").order_by("id").values_list(
        "action", "target", "result")) == [("broker.stop", "0", "ok"), ("broker.start", "0", "ok")]


def broker_config(cluster, broker_id: int, key: str):
    from console.clusters.gateway import cluster_gateway
    with cluster_gateway(cluster) as gw:
        return next(c for c in gw.broker_config_details(broker_id) if c.name == key)


def test_dynamic_broker_configs_are_edited_after_the_cluster_checked_them(private_cluster, operator_client,
                                                                           viewer_client):
    from console.accounts.models import AuditLogEntry
    page = operator_client.get(reverse("brokers:detail", args=[private_cluster.pk, 1])).content.decode()
    assert 'id="broker-configs-filter"' in page and 'data-filter-attr="kind"' in page
    row = page.split('data-config="log.retention.ms"')[1].split("</tr>")[0]
    assert row.startswith(' data-kind="dynamic"')                       # the filter's "changeable at run time"
    assert 'data-admin-action="edit-broker-config"' in row
    fixed = page.split('data-config="num.partitions"')[1].split("</tr>")[0]
    assert "edit-broker-config" not in fixed and "read-only" in fixed     # Kafka cannot change it at run time
    assert '<td class="default-value">—</td>' in fixed                    # at Kafka's default: nothing to add
    # Set in server.properties (the private engines' auto.leader.rebalance.enable=false): Kafka's default beside it.
    static = unescape(page.split('data-config="auto.leader.rebalance.enable"')[1].split("</tr>")[0])
    assert 'data-source="STATIC_BROKER_CONFIG"' in static
    assert ('<td class="default-value"><span title="Kafka\'s default, which the value set in server.properties '
            'replaces">true</span></td>') in static
    assert "edit-broker-config" not in viewer_client.get(reverse("brokers:detail", args=[private_cluster.pk, 1])
                                                         ).content.decode()

    url = reverse("brokers:config_edit", args=[private_cluster.pk, 1, "log.retention.ms"])
    assert viewer_client.post(url, {"value": "2d", "scope": "broker"}).status_code == 403
    assert 'name="reset"' not in operator_client.get(url).content.decode()     # no override to remove yet
    refused = operator_client.post(url, {"value": "-5", "scope": "broker"})
    html = refused.content.decode()
    assert refused.status_code == 400 and 'id="config-diff"' not in html
    assert html.split('<p class="error">')[1].split("</p>")[0] == (
        "The cluster refused the change to broker 1 with INVALID_REQUEST (42): Invalid value -5 for configuration "
        "log.retention.ms: Value must be at least -1.")

    preview = operator_client.post(url, {"value": "2d", "scope": "broker"}).content.decode()
    assert 'id="config-diff"' in preview and 'name="previewed" value="broker:set:172800000"' in preview
    # Save, preview again and cancel side by side, in one row.
    actions = preview.split('<div class="actions" id="config-actions">')[1].split("</div>")[0]
    assert ['save-broker-config', 'preview-broker-config'] == [
        a.split('"')[0] for a in actions.split('data-admin-action="')[1:]] and "Cancel</a>" in actions
    assert broker_config(private_cluster, 1, "log.retention.ms").source != "DYNAMIC_BROKER_CONFIG"   # not yet
    other_scope = operator_client.post(url, {"value": "2d", "scope": "cluster", "previewed": "broker:set:172800000",
                                             "confirmed": "yes"})
    assert other_scope.status_code == 200 and 'id="config-diff"' in other_scope.content.decode()   # shown again
    saved = operator_client.post(url, {"value": "2d", "scope": "broker", "previewed": "broker:set:172800000",
                                       "confirmed": "yes"}, follow=True)
    assert "log.retention.ms of broker 1 set to 172800000." in saved.content.decode()
    entry = broker_config(private_cluster, 1, "log.retention.ms")
    assert (entry.value, entry.source) == ("172800000", "DYNAMIC_BROKER_CONFIG")
    assert broker_config(private_cluster, 2, "log.retention.ms").source != "DYNAMIC_BROKER_CONFIG"
    assert 'name="reset"' in operator_client.get(url).content.decode()         # now an override to remove
    overridden = operator_client.get(reverse("brokers:detail", args=[private_cluster.pk, 1])).content.decode()
    overridden = overridden.split('data-config="log.retention.ms"')[1].split("</tr>")[0]
    assert 'What applies without this broker' in overridden and ">null</span>" not in overridden

    everywhere = operator_client.post(url, {"value": "1d", "scope": "cluster", "previewed": "cluster:set:86400000",
                                            "confirmed": "yes"}, follow=True)
    assert "log.retention.ms of every broker set to 86400000." in everywhere.content.decode()
    entry = broker_config(private_cluster, 2, "log.retention.ms")
    assert (entry.value, entry.source) == ("86400000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    # Broker 1's own 2 d replaces the cluster default of 1 d, which reads in a person's units as the value
    # does, Kafka's raw number on hover and in data-raw.
    both = operator_client.get(reverse("brokers:detail", args=[private_cluster.pk, 1])).content.decode()
    both = unescape(both.split('data-config="log.retention.ms"')[1].split("</tr>")[0])
    assert ('<td class="value"><span class="human" title="172800000 ms (2 d)" data-raw="172800000">2 d</span></td>'
            in both)
    # One title on hover carries both what the column means and the raw number (an inner title would hide an outer).
    assert ('<td class="default-value"><span class="human" title="What applies without this broker\'s own override: '
            '86400000 ms (1 d)" data-raw="86400000">1 d</span></td>') in both
    operator_client.post(url, {"reset": "on", "scope": "broker", "previewed": "broker:reset", "confirmed": "yes"})
    assert broker_config(private_cluster, 1, "log.retention.ms").source == "DYNAMIC_DEFAULT_BROKER_CONFIG"
    # The cluster-wide default replaces Kafka's, which is null for log.retention.ms (log.retention.hours applies).
    cluster_wide = operator_client.get(reverse("brokers:detail", args=[private_cluster.pk, 1])).content.decode()
    cluster_wide = cluster_wide.split('data-config="log.retention.ms"')[1].split("</tr>")[0]
    assert "replaces\">null</span></td>" in cluster_wide
    assert list(AuditLogEntry.objects.order_by("id").values_list("action", "target", "result")) == [
        ("broker.config_set", "broker 1 log.retention.ms", "ok"),
        ("broker.config_set", "cluster-wide broker default log.retention.ms", "ok"),
        ("broker.config_set", "broker 1 log.retention.ms", "ok")]

    read_only = operator_client.get(reverse("brokers:config_edit", args=[private_cluster.pk, 1, "num.partitions"]))
    assert "cannot change num.partitions at run time" in read_only.content.decode()
    assert 'id="broker-config-edit"' not in read_only.content.decode()


def test_a_password_config_is_typed_unseen_saved_in_one_step_and_never_shown(private_cluster, operator_client,
                                                                               users):
    from console.accounts.models import AuditLogEntry
    from console.brokers import services
    from console.errors import InvalidInput
    secret, key = "hunter2-broker-secret", "listener.name.plaintext.ssl.key.password"
    # Kafka takes SSL passwords per listener only; set once so that the broker describes it.
    services.broker_config_set(cluster=private_cluster, actor=users["operator"], broker_id=1, key=key,
                               value="first-secret")
    url = reverse("brokers:config_edit", args=[private_cluster.pk, 1, key])
    form = operator_client.get(url).content.decode()
    assert 'type="password"' in form and "Check and save" in form and 'id="config-diff"' not in form
    saved = operator_client.post(url, {"value": secret, "scope": "broker", "confirmed": "yes"}, follow=True)
    page = saved.content.decode()
    assert f"{key} of broker 1 set (the value is not shown)." in page and secret not in page
    entry = broker_config(private_cluster, 1, key)
    assert (entry.source, entry.is_sensitive, entry.value) == ("DYNAMIC_BROKER_CONFIG", True, None)
    assert secret not in operator_client.get(url).content.decode()
    # Refused before the cluster was asked: the audit entry has no value either.
    try:
        services.broker_config_set(cluster=private_cluster, actor=users["operator"], broker_id=1, key=key,
                                   value=secret * 1000)
    except InvalidInput:
        pass
    entries = list(AuditLogEntry.objects.filter(target=f"broker 1 {key}").order_by("id").values_list("result",
                                                                                                      "details"))
    assert [result for result, _ in entries] == ["ok", "ok", "failed"]
    assert all(secret not in str(details) and "first-secret" not in str(details) for _, details in entries)
    assert entries[1][1]["value"] == "(sensitive)"


def test_the_broker_page_names_its_uncleanable_partitions(poisoned_cluster, poisoned_engine, viewer_client):
    from tests.support.waiting import wait_until
    from console.brokers.selectors import broker_detail
    wait_until(lambda: broker_detail(cluster=poisoned_cluster, broker_id=0).uncleanable_partitions,
               message="the cleaner giving the partition up")
    html = viewer_client.get(reverse("brokers:detail", args=[poisoned_cluster.pk, 0])).content.decode()
    assert 'id="uncleanable-partitions" class="bad" data-count="1"' in html
    assert f"<li>{poisoned_engine.topic}-0</li>" in html
    detail = viewer_client.get(f"/api/clusters/{poisoned_cluster.pk}/brokers/0").json()
    assert detail["uncleanable_partitions"] == [f"{poisoned_engine.topic}-0"]


def test_a_broker_with_nothing_uncleanable_says_so(cluster, viewer_client):
    html = viewer_client.get(reverse("brokers:detail", args=[cluster.pk, 1])).content.decode()
    assert 'id="uncleanable-partitions" data-count="0"' in html


def test_the_brokers_list_and_a_brokers_page_name_their_counts_alike(cluster, viewer_client):
    """The broker's own figures carry the brokers list's column names (# Replicas, # Leaders),
    and the list shows each broker's state beside its id, where a narrow screen still shows it."""
    listed = viewer_client.get(reverse("brokers:list", args=[cluster.pk])).content.decode()
    assert re.search(r"<th>Id</th><th>State</th>", listed)
    row = listed.split('<tr data-broker="1">')[1].split("</tr>")[0]
    cells = re.findall(r"<td[^>]*>", row)
    assert 'data-state="up"' in cells[1]
    html = viewer_client.get(reverse("brokers:detail", args=[cluster.pk, 1])).content.decode()
    assert '># Replicas</dt><dd id="broker-replicas">' in html and '># Leaders</dt><dd id="broker-leaders">' in html
    assert "# Led" not in html and "<dt># Partitions</dt>" not in html


def test_the_broker_page_lists_its_partitions_before_its_hundreds_of_configs(cluster, viewer_client):
    """Which partitions a broker holds is what its page is opened for; the long config table
    (every broker config, some 200 rows) comes after it, not before."""
    html = viewer_client.get(reverse("brokers:detail", args=[cluster.pk, 1])).content.decode()
    assert len(re.findall(r'<tr class="[^"]*" data-config=', html)) > 100
    assert html.index('id="broker-partitions"') < html.index('id="broker-configs"')


def test_the_broker_page_marks_the_partitions_it_leads(private_cluster, viewer_client, unique_topic):
    """As kafbat's broker view: of the partitions a broker holds, which ones it leads."""
    name = make_topic(private_cluster, unique_topic(), assignments={0: [1, 2], 1: [2, 1], 2: [1, 0]})
    html = viewer_client.get(reverse("brokers:detail", args=[private_cluster.pk, 1])).content.decode()
    row = html[html.index(f'<tr data-topic="{name}">'):]
    row = row[:row.index("</tr>")]
    assert re.findall(r'data-leads="(\d+)"', row) == ["0", "2"]        # the first replica leads; not partition 1
    assert 'data-led="2">2 of 3</td>' in row
    view_of_2 = viewer_client.get(reverse("brokers:detail", args=[private_cluster.pk, 2])).content.decode()
    row2 = view_of_2[view_of_2.index(f'<tr data-topic="{name}">'):]
    assert re.findall(r'data-leads="(\d+)"', row2[:row2.index("</tr>")]) == ["1"]
