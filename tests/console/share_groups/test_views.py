"""Share group pages and actions through Django's test client, against the shared engine: the
groups list's type column and filter, the share group's page (members, share partitions with
the engine's in-flight counts, configs), the reset through its preview on an empty group, the
offsets' and the group's deletion, the configs' change - each audited, each for operators only."""
from __future__ import annotations

import html

from django.urls import reverse

from console.accounts.models import AuditLogEntry
from tests.console.share_groups.conftest import leave
from tests.support.share import describe_share_offsets

ADMIN_MARKER = "data-admin-action"


def test_the_groups_list_shows_each_groups_type_and_filters_by_it(cluster, viewer_client, worked_share_group):
    topic, group, _ = worked_share_group
    url = reverse("groups:list", args=[cluster.pk])
    [row] = viewer_client.get(url, {"q": group}).context["view"].groups
    assert (row.group_type, row.state, row.members, row.total_lag, row.topics) == ("share", "Stable", 1, 4, (topic,))
    shares = viewer_client.get(url, {"type": "share"}).context["view"].groups
    assert group in {r.group_id for r in shares} and {r.group_type for r in shares} == {"share"}
    classic = viewer_client.get(url, {"type": "classic"}).context["view"].groups
    assert group not in {r.group_id for r in classic}
    body = viewer_client.get(url, {"q": group}).content.decode()
    assert reverse("share_groups:detail", args=[cluster.pk, group]) in body and 'data-type="share"' in body
    by_lag = viewer_client.get(url, {"q": group, "sort": "lag", "topic": topic}).context["view"].groups
    assert [(r.group_id, r.total_lag) for r in by_lag] == [(group, 4)]


def test_the_share_group_page_shows_members_partitions_and_in_flight_records(cluster, viewer_client,
                                                                              worked_share_group):
    topic, group, _ = worked_share_group
    page = viewer_client.get(reverse("share_groups:detail", args=[cluster.pk, group]))
    assert page.status_code == 200
    view = page.context["view"]
    assert (view.state, [m.client_id for m in view.members], view.counters_known) == ("Stable", ["raw-test"], True)
    [p] = view.partitions
    assert (p.topic, p.start_offset, p.end_offset, p.high_watermark, p.lag, p.members) == (topic, 6, 9, 10, 4, 1)
    assert (p.in_flight, p.acquired, p.available, p.archived) == (4, 4, 0, 0)
    configs = {c.name: c for c in view.configs}
    assert configs["share.auto.offset.reset"].value == "earliest"
    assert configs["share.auto.offset.reset"].source == "DYNAMIC_GROUP_CONFIG"
    assert configs["share.record.lock.duration.ms"].value == "30000"
    body = page.content.decode()
    assert 'data-live-fragment="/ws/clusters/' in body and "/share-groups/" in body
    assert ADMIN_MARKER not in body                # a viewer sees no action
    assert "{#" not in body and "GROUP resource" not in body        # the configs' template comment stays unprinted
    assert '<td title="/127.0.0.1">127.0.0.1</td>' in body              # the member's host, without Kafka's slash
    broker = reverse("brokers:detail", args=[cluster.pk, view.coordinator])
    assert f'<dd id="group-coordinator"><a href="{broker}">broker {view.coordinator}</a></dd>' in body
    api = viewer_client.get(reverse("api:share_group", args=[cluster.pk, group])).json()
    assert api["partitions"][0]["acquired"] == 4 and api["is_empty"] is False


def test_reset_is_previewed_refused_while_members_remain_then_applied_and_audited(
        cluster, operator_client, engine_cluster, worked_share_group, events, django_capture_on_commit_callbacks):
    topic, group, member = worked_share_group
    reset = reverse("share_groups:reset", args=[cluster.pk, group])
    busy = operator_client.get(reset, {"target": "offset", "offset": "2", "scope": "all"})
    assert busy.status_code == 200 and busy.context["plan"].refusal.startswith("Kafka sets a share group's")
    assert 'id="apply-reset"' not in busy.content.decode()
    leave(member)
    preview = operator_client.get(reset, {"target": "offset", "offset": "2", "scope": "all"})
    [row] = preview.context["plan"].rows
    assert '<p id="reset-summary">Reset to offset 2, every topic: 1 share partition.</p>' in preview.content.decode()
    assert (row.topic, row.current_start_offset, row.new_start_offset, row.lag_after) == (topic, 6, 2, 8)
    assert describe_share_offsets(engine_cluster.ports[0], group).topics[0].partitions[0].start_offset == 6
    with django_capture_on_commit_callbacks(execute=True):
        done = operator_client.post(reset, {"target": "offset", "offset": "2", "scope": "all"})
    assert done.status_code == 302
    assert describe_share_offsets(engine_cluster.ports[0], group).topics[0].partitions[0].start_offset == 2
    entry = AuditLogEntry.objects.get(action="share_group.reset_offsets", target=group)
    assert entry.result == AuditLogEntry.OK and f"{topic}-0: 6 -> 2" in entry.details["partitions"]
    assert ("share_group.offsets_reset", {"cluster": cluster.pk, "group": group}) in events


def test_configs_are_changed_and_reverted_and_a_bad_value_is_a_form_error(cluster, operator_client, viewer_client,
                                                                          worked_share_group):
    _, group, _ = worked_share_group
    url = reverse("share_groups:configs", args=[cluster.pk, group])
    detail = reverse("share_groups:detail", args=[cluster.pk, group])

    def value(name):
        return {c.name: (c.value, c.source) for c in viewer_client.get(detail).context["view"].configs}[name]
    assert viewer_client.post(url, {"share_record_lock_duration_ms": "20000"}).status_code == 403
    saved = operator_client.post(url, {"share_auto_offset_reset": "earliest", "share_record_lock_duration_ms": "20000"})
    assert saved.status_code == 302
    assert value("share.record.lock.duration.ms") == ("20000", "DYNAMIC_GROUP_CONFIG")
    reverted = operator_client.post(url, {"share_auto_offset_reset": "earliest"})
    assert reverted.status_code == 302 and value("share.record.lock.duration.ms")[0] == "30000"
    bad = operator_client.post(url, {"share_auto_offset_reset": "yesterday"})
    assert bad.status_code == 400 and "by_duration" in bad.content.decode()
    refused = operator_client.post(url, {"share_auto_offset_reset": "earliest", "share_record_lock_duration_ms": "999999"})
    assert refused.status_code == 400 and "share.record.lock.duration.ms" in html.unescape(refused.content.decode())
    results = list(AuditLogEntry.objects.filter(action="share_group.alter_configs", target=group)
                   .order_by("pk").values_list("result", flat=True))
    assert results == [AuditLogEntry.OK, AuditLogEntry.OK, AuditLogEntry.FAILED]


def test_delete_offsets_then_the_group_needs_an_empty_group_and_the_typed_id(cluster, operator_client, viewer_client,
                                                                             engine_cluster, worked_share_group):
    topic, group, member = worked_share_group
    delete_offsets = reverse("share_groups:delete_offsets", args=[cluster.pk, group])
    delete = reverse("share_groups:delete", args=[cluster.pk, group])
    assert viewer_client.post(delete, {"confirmation": group}).status_code == 403
    refused = operator_client.post(delete_offsets, {"topic": topic, "confirmation": group})
    refusal = html.unescape(refused.content.decode())
    assert refused.status_code == 400 and f"{group} has 1 member: raw-test (" in refusal
    assert ") on 127.0.0.1." in refusal                      # Kafka's "/127.0.0.1", without its slash
    leave(member)
    wrong = operator_client.post(delete, {"confirmation": group + "x"})
    assert wrong.status_code == 400
    done = operator_client.post(delete_offsets, {"topic": topic, "confirmation": group})
    assert done.status_code == 302
    assert describe_share_offsets(engine_cluster.ports[0], group).topics == []
    gone = operator_client.post(delete, {"confirmation": group})
    assert gone.status_code == 302
    assert viewer_client.get(reverse("share_groups:detail", args=[cluster.pk, group])).status_code == 404
    actions = list(AuditLogEntry.objects.filter(target=group).order_by("pk").values_list("action", "result"))
    assert actions == [("share_group.delete_offsets", AuditLogEntry.FAILED),
                       ("share_group.delete_offsets", AuditLogEntry.OK), ("share_group.delete", AuditLogEntry.OK)]
