"""The group analytics page in a real browser: its Plotly charts draw, and nothing is fetched
from another host (plotly.js is served by the console itself)."""
from __future__ import annotations

import datetime as dt
import re
from urllib.parse import urlparse

from playwright.sync_api import expect

from console.analytics import lake as L
from console.analytics.jobs import lag, rates
from tests.browser.chart_fit import assert_fits
from tests.support.lake_results import record_finished_run, write_result
from tests.support.waiting import wait_until

NOW = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.timezone.utc)



def test_group_analytics_page_draws_its_charts_without_other_hosts(login, console_server):
    page = login("viewer")
    cluster_id = int(re.search(r"/clusters/(\d+)/", page.url).group(1))
    minutes = [NOW + dt.timedelta(minutes=5 * i) for i in range(24)]
    write_result(console_server.lake, "group_lag_5m", cluster_id,
                 [{L.GROUP: "billing", L.BUCKET: t, L.LAG: 10 * i} for i, t in enumerate(minutes)])
    write_result(console_server.lake, "partition_lag_5m", cluster_id,
                 [{L.GROUP: "billing", L.TOPIC: "orders", L.PARTITION: p, L.BUCKET: t, L.LAG: 5 * i + p,
                   L.COMMITTED_OFFSET: 100 * i} for i, t in enumerate(minutes) for p in (0, 1)])
    write_result(console_server.lake, "consumption_5m", cluster_id,
                 [{L.GROUP: "billing", L.BUCKET: t, rates.RATE: 2.5} for t in minutes])
    write_result(console_server.lake, "group_status", cluster_id,
                 [{L.GROUP: "billing", lag.STATUS: "WARN", lag.SEVERITY: 1, L.LAG: 230,
                   lag.REASON: "orders-1: lag grew at every snapshot, from 1 to 116"}])
    record_finished_run(console_server.env, cluster_id)      # the run that left them: the page dates them by it

    requested_hosts = set()
    page.on("request", lambda request: requested_hosts.add(urlparse(request.url).netloc))
    page.goto(f"/clusters/{cluster_id}/analytics/groups/billing/")
    for chart in ("#group-lag-chart", "#partition-lag-chart", "#consumption-chart"):
        expect(page.locator(chart)).to_have_attribute("data-drawn", "true")
        expect(page.locator(f"{chart} .main-svg").first).to_be_visible()
    traces = page.evaluate("['group-lag-chart', 'partition-lag-chart'].map(id => "
                           "document.getElementById(id).data.map(t => t.y.length))")
    assert traces == [[24], [24, 24]]              # one total, one line per partition, every point
    expect(page.locator("#group-lag-chart .rangeslider-container")).to_have_count(1)      # zoomable range
    expect(page.locator('h1 [data-status="WARN"]')).to_be_visible()
    # The boxes beside the charts read their newest points, dated, and say which run drew them.
    expect(page.locator("#total-lag")).to_contain_text(re.compile(r"^230 run finished .* ago · newest point .* ago$"))
    expect(page.locator("#consume-rate")).to_contain_text("2.5/s")
    expect(page.locator("[data-results-from]")).to_contain_text("from the run finished")
    assert requested_hosts == {urlparse(console_server.url).netloc}
    # On a phone the boxes' ages wrap: their lines are spaced as their small text, not as the figure.
    page.set_viewport_size(PHONE)
    pitches = page.wait_for_function("""() => {
        const pitch = id => { const small = document.querySelector(id + " small");
            if (!small) return null;
            const range = document.createRange(); range.selectNodeContents(small);
            const tops = [...new Set([...range.getClientRects()].map(r => Math.round(r.top)))].sort((a, b) => a - b);
            if (tops.length < 2) return null;
            return (tops[tops.length - 1] - tops[0]) / (tops.length - 1) / parseFloat(getComputedStyle(small).fontSize); };
        const both = ["#total-lag", "#consume-rate"].map(pitch);
        return both.every(p => p !== null) && both;
    }""").json_value()
    assert all(p < 1.5 for p in pitches), pitches


def test_an_operator_asks_for_a_retention_what_if_and_bad_input_is_explained(login):
    """The form on a topic's analytics page, in a real browser (CSRF token, server-side checks):
    bad input comes back with a readable message; good input queues a what-if run, which the
    page's live fragment shows right above the form."""
    page = login("operator")
    cluster_id = int(re.search(r"/clusters/(\d+)/", page.url).group(1))
    page.goto(f"/clusters/{cluster_id}/analytics/topics/orders/")
    expect(page.locator("#analytics-live")).to_have_attribute("data-live", "connected")
    page.fill("#what-if-form input[name=retention_ms]", "0")
    page.click("#what-if-form button[type=submit]")
    expect(page.locator("#what-if-form")).to_contain_text("retention.ms must be at least 1")
    page.fill("#what-if-form input[name=retention_ms]", "")
    page.fill("#what-if-form input[name=retention_bytes]", "1048576")
    page.click("#what-if-form button[type=submit]")
    expect(page.locator("body")).to_contain_text("queued: the estimate appears below when it is done")
    expect(page.locator("#what-if-result [data-run-state]")).to_contain_text("queued")
    # The form sits right under its heading and result, after the contents' charts.
    def layout():
        """The three boxes, once each is drawn (a live push may be redrawing the result)."""
        boxes = [page.locator(s).bounding_box() for s in ("#what-if-result", "#what-if-form", "#record-ages-chart")]
        return boxes if None not in boxes else None
    result, form, ages = wait_until(layout, timeout=30, message="the what-if's result, form and chart drawn")
    assert ages["y"] + ages["height"] <= result["y"] < form["y"] <= result["y"] + result["height"] + 60


PHONE = {"width": 390, "height": 844}


def test_charts_fit_a_phone_legends_under_the_plot_and_notes_wrapped(login, console_server):
    """At 390 px a legend that would share the title's line goes under the plot, and a chart's
    note (no data, one snapshot) wraps within the chart instead of running past both sides;
    at desktop width the legend stays on the title's line."""
    page = login("viewer", viewport=PHONE)
    cluster_id = int(re.search(r"/clusters/(\d+)/", page.url).group(1))
    minutes = [NOW + dt.timedelta(minutes=5 * i) for i in range(6)]
    write_result(console_server.lake, "partition_lag_5m", cluster_id,
                 [{L.GROUP: "phone", L.TOPIC: "shop-orders", L.PARTITION: p, L.BUCKET: t, L.LAG: 5 * i + p,
                   L.COMMITTED_OFFSET: 100 * i} for i, t in enumerate(minutes) for p in (0, 1, 2)])
    record_finished_run(console_server.env, cluster_id)
    page.goto(f"/clusters/{cluster_id}/analytics/groups/phone/")
    expect(page.locator("#partition-lag-chart")).to_have_attribute("data-drawn", "true")
    parts = assert_fits(page, "partition-lag-chart")
    assert parts["legendAt"] == "below" and parts["legend"]["top"] > parts["xtitle"]["bottom"] - 1
    empty = page.locator("#consumption-chart")                 # no consumption rows: a sentence, wrapped
    expect(empty).to_have_attribute("data-wrapped", "true")
    assert_fits(page, "consumption-chart")

    page.set_viewport_size({"width": 1280, "height": 900})    # wider: drawn again, the legend back on top
    expect(page.locator("#partition-lag-chart")).to_have_attribute("data-legend", "top")
    expect(empty).to_have_attribute("data-wrapped", "false")
    assert_fits(page, "partition-lag-chart")
    page.set_viewport_size(PHONE)
    expect(page.locator("#partition-lag-chart")).to_have_attribute("data-legend", "below")
    assert_fits(page, "partition-lag-chart")
