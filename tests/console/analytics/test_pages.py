"""What the analytics pages say over job results written straight into a lake (no Spark): a
growth per day only over an hour of snapshots or more, and over what it was measured; the
retention card from the topic's configs; a sentence in every table that has no rows; the
charts' time axis ending at the newest point."""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from console.analytics import charts
from console.analytics import lake as L
from console.analytics.jobs import retention
from console.analytics.models import AnalyticsRun
from console.clusters.models import Cluster
from tests.support.lake_results import write_result

pytestmark = pytest.mark.django_db


@pytest.fixture
def lake(settings, tmp_path) -> Path:
    settings.ANALYTICS_LAKE = str(tmp_path / "lake")
    return tmp_path / "lake"


@pytest.fixture
def lake_cluster(lake):
    return Cluster.objects.create(name="lake only", bootstrap_servers="127.0.0.1:1")


def finished_run(cluster) -> None:
    now = timezone.now()
    AnalyticsRun.objects.create(cluster=cluster, state=AnalyticsRun.DONE, started_at=now, finished_at=now)


def growth(topic: str, *, span: float, snapshots: int, per_day: float = -299_056_761.0) -> dict:
    return {L.TOPIC: topic, retention.GROWTH_PER_DAY: per_day, retention.WRITTEN_PER_DAY: 1_300_000_000.0,
            retention.SPAN_SECONDS: span, retention.SNAPSHOTS: snapshots}


def between(html: str, start: str, end: str) -> str:
    part = html[html.index(start):]
    return part[:part.index(end)]


def test_a_few_minutes_of_snapshots_are_not_projected_to_a_day(lake, lake_cluster, viewer_client):
    write_result(lake, "topic_growth", lake_cluster.pk, [growth("young", span=240.0, snapshots=5)])
    write_result(lake, "effective_retention", lake_cluster.pk, [
        {L.TOPIC: "young", retention.OLDEST_AGE_MS: None, L.RETENTION_MS: 259_200_000, retention.RETENTION_USED: None}])
    finished_run(lake_cluster)
    page = viewer_client.get(reverse("analytics:topic", args=[lake_cluster.pk, "young"])).content.decode()
    assert "needs 1 h of snapshots" in between(page, 'id="growth-per-day"', "</dd>")
    assert "needs 1 h of snapshots" in between(page, 'id="written-per-day"', "</dd>")
    assert "285 MiB" not in page and "1.2 GiB" not in page and 'id="growth-note"' not in page
    assert "Over 4 min, 5 snapshots: a projection to a day needs 1 h of snapshots." in between(
        page, 'id="growth-span"', "</p>")
    # The retention card from the topic's configs, though no record is there to date.
    assert "3 d" in between(page, 'id="retention-ms"', "</dd>")

    api = viewer_client.get(f"/api/clusters/{lake_cluster.pk}/analytics/topics/young").json()
    assert (api["growth"]["span_seconds"], api["growth"]["snapshots"], api["growth"]["projected"]) == (240.0, 5, False)


def test_an_hour_of_snapshots_or_more_is_projected_and_says_over_what(lake, lake_cluster, viewer_client):
    write_result(lake, "topic_growth", lake_cluster.pk, [growth("aged", span=2 * 3600.0, snapshots=240)])
    finished_run(lake_cluster)
    page = viewer_client.get(reverse("analytics:topic", args=[lake_cluster.pk, "aged"])).content.decode()
    assert "-285 MiB" in between(page, 'id="growth-per-day"', "</dd>")
    assert "1.2 GiB" in between(page, 'id="written-per-day"', "</dd>")
    assert "Over 2 h, 240 snapshots." in between(page, 'id="growth-span"', "</p>")
    assert "The topic shrinks" in page


def test_the_cluster_page_projects_only_over_an_hour_and_says_why_a_table_is_empty(lake, lake_cluster,
                                                                                  viewer_client):
    url = reverse("analytics:cluster", args=[lake_cluster.pk])
    page = viewer_client.get(url).content.decode()            # no run yet
    for table in ("log-dirs", "topic-retention"):
        assert "No results yet: the jobs run every few minutes" in between(page, f'id="{table}"', "</table>")

    finished_run(lake_cluster)
    page = viewer_client.get(url).content.decode()            # a run that found nothing
    assert "found no log dir in the lake" in between(page, 'id="log-dirs"', "</table>")
    assert "found no topic in the lake" in between(page, 'id="topic-retention"', "</table>")

    write_result(lake, "topic_growth", lake_cluster.pk, [growth("young", span=240.0, snapshots=5),
                                                         growth("aged", span=7200.0, snapshots=240)])
    write_result(lake, "effective_retention", lake_cluster.pk, [
        {L.TOPIC: t, retention.OLDEST_AGE_MS: 60_000, L.RETENTION_MS: 3_600_000, retention.RETENTION_USED: 0.01}
        for t in ("aged", "young")])
    write_result(lake, "days_until_full", lake_cluster.pk, [
        {L.BROKER: b, L.LOG_DIR: "/data", L.TOTAL_BYTES: 10**9, L.USABLE_BYTES: 10**8, L.SIZE_BYTES: 10**6,
         retention.SPAN_SECONDS: span, retention.SNAPSHOTS: n, retention.GROWTH_PER_DAY: 10**7,
         retention.DAYS_UNTIL_FULL: 10.0} for b, span, n in ((0, 240.0, 5), (1, 7200.0, 240))])
    page = viewer_client.get(url).content.decode()
    young, aged = between(page, 'data-topic="young"', "</tr>"), between(page, 'data-topic="aged"', "</tr>")
    assert "needs 1 h of snapshots" in young and "GiB" not in young and "4 min, 5 snapshots" in young
    assert "-285 MiB" in aged and "1.2 GiB" in aged and "2 h, 240 snapshots" in aged
    short, long = between(page, 'data-log-dir="0:/data"', "</tr>"), between(page, 'data-log-dir="1:/data"', "</tr>")
    assert "needs 1 h of snapshots" in short and "10 d" not in short
    assert "+9.5 MiB" in long and "10 d" in long and "2 h, 240 snapshots" in long
    # Every row keeps one cell per column: the tables sort by column.
    assert young.count("<td") == aged.count("<td") == 7 and short.count("<td") == long.count("<td") == 8


def test_the_group_page_says_why_its_tables_are_empty(lake, lake_cluster, viewer_client):
    url = reverse("analytics:group", args=[lake_cluster.pk, "billing"])
    page = viewer_client.get(url).content.decode()
    assert "No results yet" in between(page, 'id="time-lag"', "</table>")
    finished_run(lake_cluster)
    page = viewer_client.get(url).content.decode()
    assert "no committed offset of this group in the lake" in between(page, 'id="time-lag"', "</table>")
    assert "no committed offset of this group" in between(page, 'id="partition-status"', "</table>")
    assert "not judged yet" in between(page, "<h1>", "</h1>")


def test_a_time_series_of_one_point_ends_at_that_point():
    now = dt.datetime(2026, 11, 27, 6, 5, tzinfo=dt.timezone.utc)
    one = charts.time_series_chart([{L.BUCKET: now, L.SIZE_BYTES: 2_000_000}], title="Size", y=L.SIZE_BYTES,
                                   y_title="Size", unit="bytes")
    start, end = (dt.datetime.fromisoformat(v) for v in one["layout"]["xaxis"]["range"])
    assert end.replace(tzinfo=dt.timezone.utc) == now and end - start == dt.timedelta(hours=1)
    assert one["data"][0]["cliponaxis"] is False                 # the point at the edge is drawn whole
    two = charts.time_series_chart([{L.BUCKET: now - dt.timedelta(minutes=m), L.SIZE_BYTES: 1} for m in (0, 5)],
                                   title="Size", y=L.SIZE_BYTES, y_title="Size")
    assert "range" not in two["layout"]["xaxis"]                 # fitted to the data by plotly


def test_the_what_if_form_sits_under_its_result_outside_the_live_fragment(lake, lake_cluster, operator_client):
    page = operator_client.get(reverse("analytics:topic", args=[lake_cluster.pk, "orders"])).content.decode()
    order = [page.index(mark) for mark in ('<h2>Contents</h2>', 'id="record-ages-chart"', "<h2>Retention what-if</h2>",
                                           'id="what-if-result"', 'id="what-if-form"')]
    assert order == sorted(order)
    form = page.rindex("<form", 0, page.index('id="what-if-form"'))
    live = page[page.index('id="analytics-live"'):form]
    assert "<form" not in live                    # a push never replaces what is being typed
    # Nothing but the end of the fragment between the result and the form: the form is under it.
    between_them = page[page.index('id="what-if-result"'):form]
    assert "<h2>" not in between_them and "data-chart" not in between_them


def test_results_without_a_finished_run_are_not_shown_as_current_and_shown_ones_say_their_run(
        lake, lake_cluster, viewer_client):
    """Results in the lake that no finished run dates (a run row gone, a test writing files)
    are not shown: a WARN badge and a lag beside "no run has finished yet" would read as live.
    Once a run finished, every table says which run and how old, and each group row its age."""
    from console.analytics.jobs import lag
    write_result(lake, "group_status", lake_cluster.pk, [
        {L.GROUP: "billing", lag.STATUS: "WARN", lag.SEVERITY: 1, L.LAG: 2000, lag.REASON: "orders-1: lag grew"}])
    url = reverse("analytics:cluster", args=[lake_cluster.pk])
    page = viewer_client.get(url).content.decode()
    groups = between(page, 'id="group-status"', "</table>")
    assert "no run has finished yet" in page
    assert "WARN" not in groups and "2,000" not in groups and "No results yet" in groups
    assert "data-results-from" not in page

    now = timezone.now()
    AnalyticsRun.objects.create(cluster=lake_cluster, state=AnalyticsRun.DONE, started_at=now - dt.timedelta(minutes=4),
                                finished_at=now - dt.timedelta(minutes=3))
    page = viewer_client.get(url).content.decode()
    before = between(page, "<h2>Consumer groups</h2>", 'id="group-status"')
    assert "Statuses, lag and catch-up times from the run finished" in before and "3 min ago" in before
    row = between(page, 'data-group="billing"', "</tr>")
    assert 'data-status="WARN"' in row and "2,000" in row
    assert "3 min ago" in between(row, "data-as-of", "</td>")


def test_the_group_pages_boxes_show_the_newest_points_of_its_charts(lake, lake_cluster, viewer_client):
    """The summary boxes read the rows the charts are drawn from: with a lag and a consumption
    history but no catch-up estimate, they show the newest points, not "—"."""
    from console.analytics.jobs import rates
    now = timezone.now().replace(microsecond=0)
    buckets = [now - dt.timedelta(minutes=5 * (5 - i)) for i in range(6)]
    write_result(lake, "group_lag_5m", lake_cluster.pk,
                 [{L.GROUP: "billing", L.BUCKET: t, L.LAG: 1000 + 250 * i} for i, t in enumerate(buckets)])
    write_result(lake, "consumption_5m", lake_cluster.pk,
                 [{L.GROUP: "billing", L.BUCKET: t, rates.RATE: 18.5 + i} for i, t in enumerate(buckets)])
    finished_run(lake_cluster)
    view = viewer_client.get(reverse("analytics:group", args=[lake_cluster.pk, "billing"]))
    page = view.content.decode()
    assert between(page, 'id="total-lag"', "</small>").startswith('id="total-lag">2,250 <small>run finished')
    assert "23.5/s" in between(page, 'id="consume-rate"', "</dd>")
    lag_chart = view.context["lag_chart"]["data"][0]["y"]
    assert lag_chart[-1] == 2250                        # the box is the chart's newest point


def test_the_list_and_the_group_page_date_a_groups_lag_alike(lake, lake_cluster, viewer_client):
    """The list's As of and the group page's lag and consumption boxes say the same two ages:
    when the run finished, and the newest point of the group's chart, never one age for the other."""
    from console.analytics.jobs import lag, rates
    now = timezone.now().replace(microsecond=0)
    write_result(lake, "group_status", lake_cluster.pk, [
        {L.GROUP: "billing", lag.STATUS: "OK", lag.SEVERITY: 0, L.LAG: 2000, lag.REASON: "orders-1: consuming"}])
    write_result(lake, "group_lag_5m", lake_cluster.pk,
                 [{L.GROUP: "billing", L.BUCKET: now - dt.timedelta(minutes=m), L.LAG: 2000} for m in (15, 10, 5)])
    write_result(lake, "consumption_5m", lake_cluster.pk,
                 [{L.GROUP: "billing", L.BUCKET: now - dt.timedelta(minutes=m), rates.RATE: 2.5} for m in (15, 10, 5)])
    AnalyticsRun.objects.create(cluster=lake_cluster, state=AnalyticsRun.DONE, started_at=now - dt.timedelta(minutes=4),
                                finished_at=now - dt.timedelta(minutes=3))
    listed = viewer_client.get(reverse("analytics:cluster", args=[lake_cluster.pk])).content.decode()
    group = viewer_client.get(reverse("analytics:group", args=[lake_cluster.pk, "billing"])).content.decode()

    def text(html: str) -> str:
        return re.sub(r"<[^>]+>", "", html)
    said = "run finished 3 min ago · newest point 5 min ago"
    assert text(between(listed, 'data-group="billing"', "</tr>").split("data-as-of>")[1]) == said
    assert text(between(group, 'id="total-lag"', "</dd>")) == f'id="total-lag">2,000 {said}'
    # The consumption box's figure comes from the same run: its age reads in the same words.
    assert text(between(group, 'id="consume-rate"', "</dd>")).endswith(f'>2.5/s {said}')
