"""Numbers a Kafka operator acts on, in a real browser on a real engine: a group's lag with the
partitions that never committed, snapshots that never pass an old figure for a current one,
and charts that draw whatever their data (no data, one point, histograms in units, dark mode)."""
from __future__ import annotations

import datetime as dt
import re

from playwright.sync_api import expect

from console.analytics import lake as L
from console.analytics.jobs import rates, records, retention
from console.kafka_gateway import ConnectionSettings, open_gateway
from tests.browser.conftest import registered_cluster
from tests.support.console_process import manage
from tests.support.groups import create_topic, produce
from tests.support.lake_results import write_result
from tests.support.txn_clients import open_transaction
from tests.support.waiting import wait_until

SLOW = 60_000    # ms: a bound for a background collection under load, not a threshold
PHONE = {"width": 390, "height": 844}


def _cluster_path(page) -> str:
    return re.search(r"/clusters/\d+/", page.url).group(0)


def _commit(bootstrap: str, group_id: str, offsets: dict[tuple[str, int], int]) -> None:
    with open_gateway(ConnectionSettings(bootstrap_servers=bootstrap)) as gw:
        coordinator = gw.groups.find_coordinators([group_id]).found[group_id]
        assert gw.groups.commit_offsets(group_id, coordinator=coordinator,
                                        offsets={tp: (o, "") for tp, o in offsets.items()}) == {}



def test_a_groups_lag_lists_the_partitions_that_never_committed(login, console_server, shoot):
    """orders-lag: 12 partitions with 100 records each; the group committed on 4 of them."""
    bootstrap = console_server.engine.bootstrap
    create_topic(bootstrap, "orders-lag", 12)
    for partition in range(12):
        produce(bootstrap, "orders-lag", [b"o" * 40] * 100, partition=partition)
    _commit(bootstrap, "billing-lag", {("orders-lag", p): 100 - 25 * p for p in range(4)})

    page = login("viewer", color_scheme="dark")
    page.goto(_cluster_path(page) + "groups/billing-lag/")
    rows = page.locator("#partitions tbody tr")
    expect(rows).to_have_count(12)
    expect(page.locator("#partitions [data-committed-offset]:has-text('no commit')")).to_have_count(8)
    expect(page.locator("[data-figure=total-lag]")).to_have_text("150")          # 0 + 25 + 50 + 75
    note = page.locator("#lag-counting")
    expect(note).to_contain_text("counts the 4 partitions with a committed offset")
    expect(note).to_contain_text("not the 8 partitions without a commit")
    expect(note).to_contain_text("800 records to read from the earliest offset, or none from the latest")
    topic = page.locator('#topic-lag tr[data-topic="orders-lag"]')
    expect(topic.locator("[data-partitions]")).to_have_text("12")
    expect(topic.locator("[data-committed]")).to_have_text("4")
    expect(topic.locator("[data-uncommitted]")).to_have_text("8 partitions, 800 records")

    # The lag chart follows the dark theme, also after a live push redraws it.
    chart = page.locator("#partition-lag-chart")
    expect(chart).to_have_attribute("data-theme", "dark")
    panel = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--panel').trim()")
    background = lambda: page.evaluate("document.querySelector('#partition-lag-chart .main-svg').style.background")  # noqa: E731
    assert _rgb(background()) == _rgb(panel)
    expect(page.locator("#group-live")).to_have_attribute("data-live", "connected", timeout=SLOW)
    _commit(bootstrap, "billing-lag", {("orders-lag", 0): 50})          # a push redraws the chart
    expect(page.locator("[data-figure=total-lag]")).to_have_text("200", timeout=SLOW)
    expect(page.locator("#partition-lag-chart")).to_have_attribute("data-theme", "dark")
    assert _rgb(background()) == _rgb(panel)
    shoot(page, "group-lag-no-commit")


def _rgb(color: str) -> tuple[int, int, int]:
    """"#1c2227" or "rgb(28, 34, 39)" -> (28, 34, 39)."""
    if color.startswith("#"):
        return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(int(n) for n in re.findall(r"\d+", color)[:3])


def test_snapshots_older_than_they_may_be_are_renewed_before_they_are_shown(login, snapshot_console, shoot):
    """A console with the background snapshots on: a transaction opened and records written after
    its last collection show on the next page, never the old zero as current."""
    bootstrap = snapshot_console.engine.bootstrap
    create_topic(bootstrap, "fresh-txn", 1)
    page = login("viewer", console=snapshot_console)
    path = _cluster_path(page)
    page.goto(path + "transactions/")
    expect(page.locator("#producers-age")).to_contain_text("Open transactions on partitions as of", timeout=SLOW)
    before = _count(page.locator("#open-on-partitions"))
    producer = open_transaction(bootstrap, "fresh-txn-producer", [("fresh-txn", 0, b"open")])
    opened = dt.datetime.now(dt.timezone.utc)
    try:
        def shown_open() -> bool:
            """The page shows the transaction; until it does, every page says that its figures
            are being renewed or that they are as of before the transaction opened."""
            page.goto(path + "transactions/")
            if _count(page.locator("#open-on-partitions")) == before + 1:
                return True
            assert page.locator("#producers-age[data-renewing]").count() or _as_of(page, "#producers-age") <= opened
            return False
        wait_until(shown_open, timeout=SLOW / 1000, message="the open transaction on the page")
        shoot(page, "transactions-fresh")
    finally:
        producer.abort_transaction(60)

    create_topic(bootstrap, "fresh-sizes", 1)
    with open_gateway(ConnectionSettings(bootstrap_servers=bootstrap)) as gw:
        leader = gw.metadata(["fresh-sizes"]).topic("fresh-sizes").partitions[0].leader
    cell = page.locator(f'tr[data-broker="{leader}"] [data-log-dir-size]')
    page.goto(path + "brokers/")
    expect(page.locator("#log-dirs-age")).to_contain_text("Log dir sizes as of", timeout=SLOW)
    size_before = int(cell.get_attribute("data-log-dir-size"))
    produce(bootstrap, "fresh-sizes", [b"s" * 1000] * 500)
    written = dt.datetime.now(dt.timezone.utc)

    def grown() -> bool:
        page.goto(path + "brokers/")
        if int(cell.get_attribute("data-log-dir-size") or 0) >= size_before + 500_000:
            return True
        assert page.locator("#log-dirs-age[data-renewing]").count() or _as_of(page, "#log-dirs-age") <= written
        return False
    wait_until(grown, timeout=SLOW / 1000, message="the new size on the brokers page")
    expect(cell).to_have_text(re.compile(r"^\d+(\.\d)? (KiB|MiB)$"))


def _count(locator) -> int:
    return int(locator.inner_text().split()[0].replace(",", ""))


def _as_of(page, note: str) -> dt.datetime:
    """When the figures under a snapshot note were collected (its <time datetime>)."""
    return dt.datetime.fromisoformat(page.locator(f"{note} time[data-when]").get_attribute("datetime"))


def _finished_runs(console, cluster_id: int, *kinds: str) -> None:
    """Finished runs of these kinds for the cluster, as the analytics worker records them."""
    manage(console.env, "shell", "-c",
           "import datetime as dt; from console.analytics.models import AnalyticsRun as R; "
           "now = dt.datetime.now(dt.timezone.utc); "
           f"[R.objects.create(cluster_id={cluster_id}, kind=k, state=R.DONE, started_at=now - dt.timedelta(seconds=12), "
           f"finished_at=now) for k in {list(kinds)!r}]")


def test_charts_draw_with_no_data_one_snapshot_and_bins_in_units(login, console_server, shoot):
    # A cluster of its own (the same engine), so that its finished runs below are no other test's.
    with registered_cluster(console_server, "charts", console_server.engine.bootstrap) as path:
        _charts_draw(login("viewer"), path, console_server, shoot)


def box_height_between(low: int, high: int) -> str:
    """A wait_for_function test: the element's box is between `low` and `high` px high."""
    return f"""selector => {{
        const element = document.querySelector(selector);
        const box = element && element.getBoundingClientRect();
        return Boolean(box) && box.height >= {low} && box.height <= {high};
    }}"""


def _charts_draw(page, path: str, console_server, shoot) -> None:
    cluster_id = int(re.search(r"/clusters/(\d+)/", path).group(1))
    lake = console_server.lake
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    for job in ("topic_bytes_1h", "production_5m", "record_sizes", "record_ages", "topic_growth",
                "effective_retention", "compaction"):
        write_result(lake, job, cluster_id, [])

    # No data: a sentence, no axes (never a "Jan-Nov 2000" date axis).
    page.goto(f"{path}analytics/topics/uncharted/")
    for chart in ("#topic-bytes-chart", "#topic-production-chart", "#record-sizes-chart", "#record-ages-chart"):
        expect(page.locator(chart)).to_have_attribute("data-drawn", "true")
        expect(page.locator(f"{chart} .xtick")).to_have_count(0)
    expect(page.locator("#topic-bytes-chart")).to_contain_text("No snapshot in the lake yet")
    # ... in a box of a few lines, not a blank one of a chart's height (read again while the
    # page's live refresh may be redrawing it; it fails only if the box is never that short).
    for chart in ("#topic-bytes-chart", "#record-ages-chart"):
        page.wait_for_function(box_height_between(1, 120), arg=chart, timeout=10_000)
    expect(page.locator("#record-sizes-chart")).to_contain_text("No contents analysis yet")
    expect(page.locator("#analytics-run")).to_contain_text("no run has finished yet")
    assert "2000" not in page.locator("#topic-bytes-chart").inner_text()

    # One snapshot: its point is drawn and the chart says so; sizes on the axis in units.
    write_result(lake, "topic_bytes_1h", cluster_id, [{L.TOPIC: "charted", L.BUCKET: now, L.SIZE_BYTES: 2_000_000}])
    # Two bins of 100 bytes, and ages over three hours; growth below zero.
    write_result(lake, "record_sizes", cluster_id, [{"topic": "charted", "size_bin_bytes": 200, "count": 7},
                                                    {"topic": "charted", "size_bin_bytes": 300, "count": 3}])
    write_result(lake, "record_ages", cluster_id, [{"topic": "charted", "age_bin_seconds": h * 3600, "count": h + 1}
                                                   for h in range(3)])
    write_result(lake, "compaction", cluster_id, [{
        L.TOPIC: "charted", records.RECORDS: 10, records.DISTINCT_KEYS: 4, records.TOMBSTONES: 1,
        records.NULL_KEYS: 0, records.RECORD_BYTES: 2_700, records.COMPACTED_BYTES: 1_100,
        records.SAVED_BYTES: 1_600}])
    # Growth over ten minutes: not projected to a day (the page says so, and over what).
    write_result(lake, "topic_growth", cluster_id, [{L.TOPIC: "charted", retention.GROWTH_PER_DAY: -299_056_761.0,
                                                     retention.WRITTEN_PER_DAY: 1_300_000_000.0,
                                                     retention.SPAN_SECONDS: 600.0, retention.SNAPSHOTS: 21}])
    write_result(lake, "effective_retention", cluster_id, [{L.TOPIC: "charted", retention.OLDEST_AGE_MS: 540_000,
                                                            L.RETENTION_MS: 604_800_000, retention.RETENTION_USED: None}])
    write_result(lake, "production_5m", cluster_id,
                 [{L.TOPIC: "charted", L.BUCKET: now - dt.timedelta(minutes=5 * i), rates.RATE: 40.0 + 30 * i}
                  for i in range(4)])
    # The runs that wrote them: the page says when, not "no run has finished yet" over figures.
    _finished_runs(console_server, cluster_id, "lake", "records")
    page.goto(f"{path}analytics/topics/charted/")
    bytes_chart = page.locator("#topic-bytes-chart")
    expect(bytes_chart).to_have_attribute("data-drawn", "true")
    expect(bytes_chart).to_contain_text("One snapshot so far")
    expect(bytes_chart.locator(".point")).to_have_count(1)
    # with data, a chart's full height again
    page.wait_for_function(box_height_between(250, 10_000), arg="#topic-bytes-chart", timeout=10_000)
    x_range = page.evaluate("(ax => ax.range.map(v => ax.r2l(v)))("
                            "document.getElementById('topic-bytes-chart')._fullLayout.xaxis)")
    assert x_range[1] - x_range[0] >= 30 * 60_000           # a window before the point, not a millisecond
    assert x_range[1] == now.timestamp() * 1000              # ending at the point: no future on the axis
    assert "MiB" in bytes_chart.locator(".ytick").all_text_contents()[-1]

    sizes = page.locator("#record-sizes-chart")
    expect(sizes).to_have_attribute("data-drawn", "true")
    assert sizes.locator(".xtick").all_text_contents() == ["200 B", "250 B", "300 B", "350 B", "400 B"]
    assert page.evaluate("document.getElementById('record-sizes-chart')._fullLayout.xaxis.range") == [200, 400]
    ages = page.locator("#record-ages-chart").locator(".xtick").all_text_contents()
    assert ages[0] == "0 s" and ages[-1] == "3 h", ages
    # The last edge's label is drawn, not hidden for passing the chart's edge.
    expect(sizes.locator(".xtick text", has_text="400 B")).to_be_visible()
    expect(page.locator("#record-ages-chart .xtick text", has_text="3 h")).to_be_visible()

    # Y axes fit their data: the production line's top (130/s) is inside the axis.
    top = page.evaluate("document.getElementById('topic-production-chart')._fullLayout.yaxis.range[1]")
    assert top >= 130
    expect(page.locator("#growth-per-day")).to_have_text("needs 1 h of snapshots")
    expect(page.locator("#written-per-day")).to_have_text("needs 1 h of snapshots")
    expect(page.locator("#growth-span")).to_have_text(
        "Over 10 min, 21 snapshots: a projection to a day needs 1 h of snapshots.")
    expect(page.locator("#growth-note")).to_have_count(0)
    expect(page.locator("#retention-ms")).to_have_text("7 d")
    expect(page.locator('#analytics-run [data-run-kind="lake"]')).to_contain_text("took 12 s")
    expect(page.locator('#topic-compaction [data-saved-bytes="1600"]')).to_have_text("1.6 KiB")
    shoot(page, "analytics-topic-charts")
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size(PHONE)
    expect(bytes_chart).to_have_attribute("data-wrapped", "true")        # drawn again for the width: its note wraps
    shoot(page, "analytics-topic-charts")
