"""Group pages and actions through Django's test client, against the shared engine."""
import html
import re

from django.urls import reverse
from kafka import KafkaConsumer

from console.accounts.audit_text import describe
from console.accounts.models import AuditLogEntry
from console.clusters.services import cluster_create
from console.groups.reset import ResetSpec
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit, committed
from tests.support.engine_process import free_port_range
from tests.support.groups import assigned_consumer_protocol_member, produce, wait_until

ADMIN_MARKER = "data-admin-action"
XSS_IDS = ['<img src=x onerror=alert(1)>', '"><script>alert(1)</script>']


def action_posts(cluster, group_id: str, topic: str):
    pk = cluster.pk
    return [
        (reverse("groups:reset", args=[pk, group_id]), {"target": "earliest", "scope": "all"}),
        (reverse("groups:delete_offsets", args=[pk, group_id]), {"topic": topic, "confirmation": group_id}),
        (reverse("groups:delete", args=[pk, group_id]), {"confirmation": group_id}),
        (reverse("api:group_reset", args=[pk, group_id]), {"target": "earliest", "scope": "all"}),
        (reverse("api:group_delete_offsets", args=[pk, group_id]), {"topic": topic, "confirmation": group_id}),
        (reverse("api:group_delete", args=[pk, group_id]), {"confirmation": group_id}),
    ]


def test_list_and_detail_show_lag(cluster, engine_cluster, viewer_client, unique_topic, unique_group):
    topic = make_topic(cluster, unique_topic(), assignments={0: [0], 1: [1]})
    produce(engine_cluster.bootstrap, topic, [b"x"] * 8, partition=0)
    produce(engine_cluster.bootstrap, topic, [b"y"] * 5, partition=1)
    group = unique_group("lagging")
    commit(cluster, group, {(topic, 0): 3, (topic, 1): 5}, metadata="from-test")

    listed = viewer_client.get(reverse("groups:list", args=[cluster.pk]), {"q": group})
    assert listed.status_code == 200
    [row] = listed.context["view"].groups
    assert (row.group_id, row.state, row.members, row.total_lag) == (group, "Empty", 0, 5)
    assert (row.worst.topic, row.worst.partition, row.worst.lag) == (topic, 0, 5)
    assert row.topics == (topic,)

    page = viewer_client.get(reverse("groups:detail", args=[cluster.pk, group]))
    assert page.status_code == 200
    view = page.context["view"]
    assert [(p.partition, p.committed_offset, p.log_end_offset, p.lag, p.metadata) for p in view.partitions] == [
        (0, 3, 8, 5, "from-test"), (1, 5, 5, 0, "from-test")]
    assert [(t.topic, t.lag) for t in view.topics] == [(topic, 5)]
    body = page.content.decode()
    assert 'id="empty-group"' in body and "no members" in body
    assert 'data-chart="partition-lag-data"' in body and ADMIN_MARKER not in body
    # The coordinator is a broker, named and linked as the overview names the controller.
    broker = reverse("brokers:detail", args=[cluster.pk, view.coordinator])
    assert f'<dd id="group-coordinator"><a href="{broker}">broker {view.coordinator}</a></dd>' in body

    api = viewer_client.get(reverse("api:group", args=[cluster.pk, group])).json()
    assert api["total_lag"] == 5 and api["is_empty"] is True
    assert api["partitions"][0]["committed_offset"] == 3
    api_list = viewer_client.get(reverse("api:groups", args=[cluster.pk]), {"q": group, "sort": "lag"}).json()
    assert [g["group_id"] for g in api_list["groups"]] == [group]


def test_filters_sort_and_pages(cluster, viewer_client, unique_topic, unique_group, settings):
    settings.GROUPS_PER_PAGE = 2
    topic = make_topic(cluster, unique_topic(), partitions=1)
    other = make_topic(cluster, unique_topic(), partitions=1)
    produce(cluster.bootstrap_servers, topic, [b"x"] * 9)
    prefix = unique_group("many")
    for i, offset in enumerate([9, 2, 5]):
        commit(cluster, f"{prefix}-{i}", {(topic, 0): offset})
    commit(cluster, f"{prefix}-other", {(other, 0): 0})
    url = reverse("groups:list", args=[cluster.pk])
    by_lag = viewer_client.get(url, {"q": prefix, "sort": "lag", "topic": topic}).context["view"]
    assert (by_lag.matching, by_lag.pages) == (3, 2)
    assert [g.total_lag for g in by_lag.groups] == [7, 4]
    second = viewer_client.get(url, {"q": prefix, "sort": "lag", "topic": topic, "page": 2}).context["view"]
    assert [g.group_id for g in second.groups] == [f"{prefix}-0"]
    no_topic = viewer_client.get(url, {"q": prefix, "sort": "lag"}).context["view"]
    assert [(g.group_id, g.total_lag, g.state) for g in no_topic.groups] == [(f"{prefix}-1", 7, "Empty"),
                                                                             (f"{prefix}-2", 4, "Empty")]
    assert no_topic.matching == 4
    assert no_topic.lag_age is None             # the lag cache is off in tests: read by the page, as today
    assert viewer_client.get(url, {"q": prefix, "state": "Stable"}).context["view"].matching == 0
    assert viewer_client.get(url, {"q": prefix, "state": "Empty"}).context["view"].matching == 4


def test_unknown_group_is_404_and_unreachable_cluster_is_readable(cluster, viewer_client, db):
    assert viewer_client.get(reverse("groups:detail", args=[cluster.pk, "no-such-group"])).status_code == 404
    assert viewer_client.get(reverse("api:group", args=[cluster.pk, "no-such-group"])).status_code == 404
    down = cluster_create(name="down", bootstrap_servers=f"127.0.0.1:{free_port_range(1)}")
    for url in (reverse("groups:list", args=[down.pk]), reverse("groups:detail", args=[down.pk, "g"])):
        page = viewer_client.get(url)
        assert page.status_code == 503 and "Cannot connect" in page.content.decode()


def test_viewer_sees_no_buttons_and_is_refused(cluster, viewer_client, operator_client, unique_topic, unique_group):
    topic = make_topic(cluster, unique_topic(), partitions=1)
    group = unique_group("guarded")
    commit(cluster, group, {(topic, 0): 0})
    detail = reverse("groups:detail", args=[cluster.pk, group])
    assert ADMIN_MARKER not in viewer_client.get(detail).content.decode()
    assert ADMIN_MARKER in operator_client.get(detail).content.decode()
    for url, data in action_posts(cluster, group, topic):
        assert viewer_client.post(url, data).status_code == 403, url
    assert viewer_client.get(reverse("groups:reset", args=[cluster.pk, group])).status_code == 403
    assert committed(cluster, group) == {(topic, 0): 0}
    assert not AuditLogEntry.objects.exists()


def test_bad_reset_input_is_a_form_error(cluster, operator_client, unique_topic, unique_group):
    topic = make_topic(cluster, unique_topic(), partitions=1)
    group = unique_group("badinput")
    commit(cluster, group, {(topic, 0): 0})
    url = reverse("groups:reset", args=[cluster.pk, group])
    for data, field in [({"target": "datetime", "scope": "all", "datetime": "yesterday-ish"}, "datetime"),
                        ({"target": "offset", "scope": "all", "offset": "twelve"}, "offset"),
                        ({"target": "shift", "scope": "all"}, "shift"),
                        ({"target": "earliest", "scope": "partitions", "topic": topic, "partitions": "0,x"},
                         "partitions"),
                        ({"target": "earliest", "scope": "topic"}, "topic")]:
        for answer in (operator_client.get(url, data), operator_client.post(url, data)):
            assert answer.status_code == 400, data
            assert field in answer.context["form"].errors, data
            for error in answer.context["form"].errors[field]:       # said once, beside its field
                assert answer.content.decode().count(html.escape(error)) == 1, (data, error)
    api = operator_client.get(reverse("api:group_reset_preview", args=[cluster.pk, group]),
                              {"target": "offset", "scope": "all", "offset": "x"})
    assert api.status_code == 400 and "offset" in api.json()["error"]
    missing_topic = operator_client.get(url, {"target": "earliest", "scope": "topic", "topic": "no-such-topic"})
    assert missing_topic.status_code == 400 and "no topic" in missing_topic.content.decode()
    assert committed(cluster, group) == {(topic, 0): 0}


def test_xss_group_ids_render_as_text(cluster, console_admin_client, engine_cluster, unique_topic):
    topic = make_topic(cluster, unique_topic(), partitions=1)
    for group in XSS_IDS:
        commit(cluster, group, {(topic, 0): 0})
        pages = [console_admin_client.get(reverse("groups:list", args=[cluster.pk])),
                 console_admin_client.get(reverse("groups:detail", args=[cluster.pk, group])),
                 console_admin_client.get(reverse("topics:consumers", args=[cluster.pk, topic]))]
        console_admin_client.post(reverse("groups:delete", args=[cluster.pk, group]), {"confirmation": "wrong"})
        console_admin_client.post(reverse("groups:reset", args=[cluster.pk, group]),
                                  {"target": "offset", "scope": "all", "offset": "0"})
        pages.append(console_admin_client.get(reverse("audit_log")))
        for page in pages:
            body = page.content.decode()
            assert page.status_code == 200
            assert group not in body
            assert html.escape(group) in body
    assert AuditLogEntry.objects.filter(target__in=XSS_IDS, action="group.reset_offsets", result="ok").count() == 2


def test_api_preview_and_reset_and_csrf(cluster, engine_cluster, operator_client, users, unique_topic, unique_group):
    from django.test import Client

    topic = make_topic(cluster, unique_topic(), partitions=1)
    produce(engine_cluster.bootstrap, topic, [b"x"] * 6)
    group = unique_group("api")
    commit(cluster, group, {(topic, 0): 2})
    preview = operator_client.get(reverse("api:group_reset_preview", args=[cluster.pk, group]),
                                  {"target": "offset", "offset": "99", "scope": "all"}).json()
    assert preview["refusal"] is None and preview["members"] == []
    [row] = preview["partitions"]
    assert (row["current_offset"], row["new_offset"], row["lag_after"], row["clamped"]) == (2, 6, 0, True)
    assert committed(cluster, group) == {(topic, 0): 2}

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(users["operator"])
    url = reverse("api:group_reset", args=[cluster.pk, group])
    assert strict.post(url, {"target": "earliest", "scope": "all"}).status_code == 403   # no CSRF token
    assert committed(cluster, group) == {(topic, 0): 2}

    applied = operator_client.post(url, {"target": "shift", "shift": "-1", "scope": "all"})
    assert applied.status_code == 200 and applied.json()["partitions"][0]["new_offset"] == 1
    assert committed(cluster, group) == {(topic, 0): 1}
    assert operator_client.get(url).status_code == 405
    refused = operator_client.post(reverse("api:group_delete", args=[cluster.pk, group]), {"confirmation": "x"})
    assert refused.status_code == 400 and "confirmation" in refused.json()["error"]
    deleted = operator_client.post(reverse("api:group_delete", args=[cluster.pk, group]), {"confirmation": group})
    assert deleted.json() == {"group_id": group, "deleted": True}
    assert operator_client.get(reverse("api:group", args=[cluster.pk, group])).status_code == 404


def test_reset_page_without_a_target_shows_the_form(cluster, operator_client, unique_topic, unique_group):
    topic = make_topic(cluster, unique_topic(), partitions=1)
    group = unique_group("blank")
    commit(cluster, group, {(topic, 0): 0})
    page = operator_client.get(reverse("groups:reset", args=[cluster.pk, group]))
    assert page.status_code == 200 and page.context["plan"] is None and not page.context["form"].errors
    preview = operator_client.get(reverse("groups:reset", args=[cluster.pk, group]),
                                  {"target": "latest", "scope": "all"})
    assert preview.status_code == 200 and 'id="apply-reset"' in preview.content.decode()
    assert ('<p id="reset-summary">Reset to the latest offset, every topic: 1 partition.</p>' in preview.content.decode()
            and "(s)" not in preview.content.decode())
    # A date and time reads as one, in UTC, not as Kafka's epoch milliseconds.
    at = operator_client.get(reverse("groups:reset", args=[cluster.pk, group]),
                             {"target": "datetime", "scope": "topic", "topic": topic, "datetime": "2026-01-31T14:00",
                              "zone": "+02:00"}).content.decode()
    assert (f'<p id="reset-summary">Reset to the first offset at or after 2026-01-31 12:00:00 UTC, topic {topic}: '
            '1 partition.</p>') in at
    assert describe(action="group.reset_offsets", target=group, details={"reset": ResetSpec(
        target="shift", shift=-5, scope="partitions", topic=topic, partitions=(0,)).summary(), "partitions": 1},
        ) == f"Reset the committed offsets of group {group} to a shift by -5, {topic} partitions 0, on 1 partition."


def test_first_group_lookup_on_a_fresh_cluster_is_a_404_not_an_outage(viewer_client, engine_factory, db):
    """The first FindCoordinator creates __consumer_offsets (the engine answers it at once; Kafka may
    answer COORDINATOR_NOT_AVAILABLE first, which find_coordinators asks again once)."""
    fresh = cluster_create(name="fresh", bootstrap_servers=engine_factory(brokers=1).bootstrap)
    assert viewer_client.get(reverse("groups:detail", args=[fresh.pk, "nobody-yet"])).status_code == 404
    listed = viewer_client.get(reverse("groups:list", args=[fresh.pk]))
    assert listed.status_code == 200 and listed.context["view"].total == 0


def test_consumer_protocol_group_pages_say_so(cluster, engine_cluster, viewer_client, unique_topic, unique_group):
    """A KIP-848 group's list row and page carry its type."""
    topic = make_topic(cluster, unique_topic(), partitions=2)
    group = unique_group("kip848")
    with assigned_consumer_protocol_member(engine_cluster.bootstrap, group, topic, 2):
        listed = viewer_client.get(reverse("groups:list", args=[cluster.pk]), {"q": group})
        page = viewer_client.get(reverse("groups:detail", args=[cluster.pk, group]))
    assert 'data-group-type="consumer"' in listed.content.decode() and "(KIP-848)" in listed.content.decode()
    body = page.content.decode()
    assert 'data-group-type="consumer"' in body and 'data-member="' in body
    assert "member-protocol" not in body   # one protocol: no column for it
    # Its host without Kafka's leading slash (the raw form on hover).
    assert '<td title="/127.0.0.1">127.0.0.1</td>' in body and ">/127.0.0.1<" not in body
    # No commit yet, on two empty partitions: said plainly, no "0 partitions" or "0 records".
    note = html.unescape(body[body.index('id="lag-counting"'):])
    note = re.sub(r"<[^>]+>", "", note[:note.index("</p>")])
    assert note == ('id="lag-counting">No partition has a committed offset yet, so there is no lag to count: the '
                    "group's 2 partitions are marked \"no commit\" below.\nThey hold no records yet: a consumer "
                    "that starts on one has nothing to read.")
    assert "2 partitions, no records" in body                        # its lag per topic


def test_a_group_being_migrated_says_which_member_speaks_which_protocol(
        cluster, engine_cluster, viewer_client, unique_topic, unique_group):
    """A classic consumer joins a KIP-848 group (a rolling upgrade or downgrade in progress): the
    members table gets a protocol column, and the figures say how many are classic."""
    topic = make_topic(cluster, unique_topic(), partitions=2)
    group = unique_group("mixed")
    with assigned_consumer_protocol_member(engine_cluster.bootstrap, group, topic, 2) as modern:
        classic = KafkaConsumer(topic, bootstrap_servers=engine_cluster.bootstrap, group_id=group,
                                client_id="classic-member", heartbeat_interval_ms=300, session_timeout_ms=6000)
        try:
            def classic_owns_one() -> bool:
                modern.poll(0.1)
                classic.poll(timeout_ms=100)
                return len(classic.assignment()) == 1
            wait_until(classic_owns_one, timeout=60, message="the classic member's partition")
            page = viewer_client.get(reverse("groups:detail", args=[cluster.pk, group]))
        finally:
            classic.close()
    body = page.content.decode()
    protocols = sorted(html.unescape(cell) for cell in re.findall(r'<td class="member-protocol">([^<]*)</td>', body))
    assert protocols == ["classic", "consumer"]
    assert "(1 classic: being migrated)" in body


def test_a_consumer_protocol_groups_configs_are_shown_changed_and_reset(
        cluster, engine_cluster, viewer_client, operator_client, unique_topic, unique_group):
    """KIP-848's consumer.session.timeout.ms and consumer.heartbeat.interval.ms: read with their
    source, set by an operator within Kafka's bounds (a value outside is Kafka's refusal, in
    words), audited, and reset to the brokers' value; a classic group has no configs section."""
    topic = make_topic(cluster, unique_topic(), partitions=1)
    group = unique_group("configs")
    detail, configs_url = reverse("groups:detail", args=[cluster.pk, group]), reverse("groups:configs", args=[cluster.pk, group])
    with assigned_consumer_protocol_member(engine_cluster.bootstrap, group, topic, 1):
        page = viewer_client.get(detail).content.decode()
        assert 'id="group-configs"' in page and 'id="group-configs-form"' not in page     # a viewer reads only
        assert "{#" not in page and "GROUP resource" not in page         # the template's comment stays unprinted
        row = page[page.index('data-config="consumer.session.timeout.ms"'):]
        assert "45 s" in row[:row.index("</tr>")] and "the brokers'" in row[:row.index("</tr>")]
        assert viewer_client.post(configs_url, {"consumer_session_timeout_ms": "50 s"}).status_code == 403

        saved = operator_client.post(configs_url, {"consumer_session_timeout_ms": "50 s",
                                                   "consumer_heartbeat_interval_ms": ""})
        assert saved.status_code == 302
        page = operator_client.get(detail).content.decode()
        row = page[page.index('data-config="consumer.session.timeout.ms"'):]
        assert "50 s" in row[:row.index("</tr>")] and "this group" in row[:row.index("</tr>")]
        assert 'name="consumer_session_timeout_ms" value="50000"' in page        # the form starts from it
        entry = AuditLogEntry.objects.filter(action="group.alter_configs", target=group).latest("id")
        assert entry.result == AuditLogEntry.OK and entry.details == {
            "set": {"consumer.session.timeout.ms": "50000"}, "reset": ["consumer.heartbeat.interval.ms"]}
        assert describe(action=entry.action, target=group, details=entry.details) == (
            f"Configs of consumer group {group}: set consumer.session.timeout.ms to 50000 ms (50 s); "
            "reset consumer.heartbeat.interval.ms to the brokers' value.")

        refused = operator_client.post(configs_url, {"consumer_session_timeout_ms": "10 s"})
        assert refused.status_code == 400 and "[45000, 60000]" in html.unescape(refused.content.decode())
        assert AuditLogEntry.objects.filter(action="group.alter_configs", target=group).latest("id").result == \
            AuditLogEntry.FAILED
        bad = operator_client.post(configs_url, {"consumer_heartbeat_interval_ms": "soon"})
        assert bad.status_code == 400 and "is not a duration" in html.unescape(bad.content.decode())

        api = operator_client.post(reverse("api:group_configs", args=[cluster.pk, group]), {})
        assert api.status_code == 200 and api.json()["configs"] == {
            "consumer.session.timeout.ms": None, "consumer.heartbeat.interval.ms": None}
        described = viewer_client.get(reverse("api:group", args=[cluster.pk, group])).json()["configs"]
        assert described["error"] == "" and {c["name"]: c["source"] for c in described["entries"]} == {
            "consumer.heartbeat.interval.ms": "DEFAULT_CONFIG", "consumer.session.timeout.ms": "DEFAULT_CONFIG"}

    classic = unique_group("classic")
    commit(cluster, classic, {(topic, 0): 0})
    assert 'id="group-configs"' not in viewer_client.get(reverse("groups:detail", args=[cluster.pk, classic])).content.decode()
    assert viewer_client.get(reverse("api:group", args=[cluster.pk, classic])).json()["configs"] is None


def test_a_negative_lag_is_flagged_in_both_lag_columns(cluster, engine_cluster, viewer_client, unique_topic,
                                                       unique_group):
    """A commit past the log end reads negative from the high watermark and from the last
    stable offset alike: both cells carry the warning colour, not only the first."""
    topic = make_topic(cluster, unique_topic(), partitions=1)
    produce(engine_cluster.bootstrap, topic, [b"x"] * 3, partition=0)
    group = unique_group("ahead")
    commit(cluster, group, {(topic, 0): 10})
    body = viewer_client.get(reverse("groups:detail", args=[cluster.pk, group])).content.decode()
    assert re.search(r'<td class="num warn" data-lag="-7"', body)
    assert re.search(r'<td class="num secondary warn" data-lag-read-committed>-7</td>', body)
