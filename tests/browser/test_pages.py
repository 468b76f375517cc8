"""The console as a person sees it: a stopped broker, the live overview over a minute, the
configs table, sortable tables at desktop and phone width, dark mode, and screenshots of the
main pages (light and dark, 1280 and 390 px) in artifacts/screenshots/."""
from __future__ import annotations

import re
import time

import pytest
from kafka.admin import KafkaAdminClient, NewTopic
from playwright.sync_api import expect

from tests.engine.cluster.helpers import list_brokers, start_broker
from tests.support.groups import produce

SLOW = 60_000            # ms: a bound for a controlled shutdown or a broker start, not a threshold
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def cluster_path(page) -> str:
    return re.search(r"/clusters/\d+/", page.url).group(0)


def make_topic(bootstrap: str, name: str, assignments: dict[int, list[int]]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, replica_assignments=assignments)])
    finally:
        admin.close()


def engine_broker_running(engine, broker_id: int) -> bool:
    return next(b for b in list_brokers(engine) if b["id"] == broker_id)["running"]


def start_broker_if_stopped(engine, broker_id: int) -> None:
    """Leave the shared engine whole for the next test, whatever happened in this one."""
    if not engine_broker_running(engine, broker_id):
        start_broker(engine, broker_id)


@pytest.fixture(scope="module")
def topics(console_server):
    """One topic per broker (a partition each, no other replica): stopping broker 0 takes
    `lonely-0`'s only partition offline. `orders` has configs and records to look at."""
    bootstrap = console_server.engine.bootstrap
    make_topic(bootstrap, "lonely-0", {0: [0]})
    make_topic(bootstrap, "orders", {0: [0, 1], 1: [1, 2], 2: [2, 0]})
    produce(bootstrap, "orders", [b"order" * 20] * 30, partition=0)
    produce(bootstrap, "orders", [b"order" * 20] * 10, partition=2)
    make_topic(bootstrap, "archive", {0: [1], 1: [2]})
    produce(bootstrap, "archive", [b"old"] * 5, partition=1)
    return {"lonely": "lonely-0", "orders": "orders", "archive": "archive"}


def test_with_broker_0_stopped_every_page_works_live_and_start_brings_it_back(login, console_server, topics, shoot):
    admin = login("admin", viewport=DESKTOP)
    path = cluster_path(admin)
    opened = time.monotonic()
    overview = admin                                  # stays on the overview: the live socket, watched
    expect(overview.locator("#overview-live")).to_have_attribute("data-live", "connected")
    brokers = admin.context.new_page()
    try:
        brokers.goto(path + "brokers/")
        asked = []
        brokers.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
        brokers.click('tr[data-broker="0"] [data-admin-action="stop-broker"]')
        expect(brokers.locator('tr[data-broker="0"] [data-admin-action="start-broker"]')).to_be_visible(timeout=SLOW)
        assert asked and asked[0].startswith("Stop broker 0 (127.0.0.1:") and "offline" in asked[0]
        expect(brokers.locator('tr[data-broker="0"] td[data-state]')).to_have_text("stopped")
        expect(brokers.locator("#offline-partitions")).not_to_have_text("0")
        shoot(brokers, "brokers-broker-0-stopped")
        # Eleven columns and the Start/Stop buttons fit a 1280 px screen: the table does not scroll.
        assert brokers.locator("#brokers-data table.data").evaluate("t => t.scrollWidth <= t.clientWidth")

        # The first bootstrap broker is down, and every page still answers.
        for page_path in ("", "topics/", f"topics/{topics['lonely']}/", "brokers/0/"):
            response = brokers.goto(path + page_path)
            assert response.status == 200, page_path
        brokers.goto(path + f"topics/{topics['lonely']}/")
        expect(brokers.locator("#offline-partitions")).to_have_text("1")
        expect(brokers.locator("#under-replicated")).to_have_text("1")
        expect(brokers.locator('#partitions tr[data-partition="0"] td:nth-child(2)')).to_have_text("offline (no leader)")
        shoot(brokers, "topic-offline-partition")
        brokers.goto(path + "topics/?q=lonely")
        # Its only partition is offline: counted, and no live broker holds it (spread 0 %, not 150 %).
        expect(brokers.locator('tr[data-topic="lonely-0"] td[data-col="offline"]')).to_have_text("1")
        expect(brokers.locator('tr[data-topic="lonely-0"] td[data-col="spread"]')).to_have_text("0")

        # The overview saw it live, without a reload.
        expect(overview.locator('#ov-brokers tr[data-broker="0"]')).to_have_attribute("data-state", "stopped",
                                                                                       timeout=SLOW)
        expect(overview.locator("#ov-offline")).not_to_have_text("0")
        expect(overview.locator("#ov-brokers th.sortable").first).to_be_visible()   # the pushed table sorts too

        brokers.goto(path + "brokers/")
        brokers.click('tr[data-broker="0"] [data-admin-action="start-broker"]')
        expect(brokers.locator('tr[data-broker="0"] td[data-state]')).to_have_text("up", timeout=SLOW)
        expect(overview.locator('#ov-brokers tr[data-broker="0"]')).to_have_attribute("data-state", "up",
                                                                                       timeout=SLOW)
    finally:
        start_broker_if_stopped(console_server.engine, 0)

    # One socket for the whole story, and for at least a minute (a socket that drops every few seconds fails here).
    remaining = 61 - (time.monotonic() - opened)
    if remaining > 0:
        overview.wait_for_timeout(remaining * 1000)
    expect(overview.locator("#overview-live")).to_have_attribute("data-live", "connected")
    assert overview.locator("#overview-live").get_attribute("data-connects") == "1"


def test_topic_configs_table_edits_one_value_after_showing_the_diff(login, topics, shoot):
    admin = login("admin", viewport=DESKTOP)
    admin.goto(cluster_path(admin) + f"topics/{topics['orders']}/configs")
    row = admin.locator('#configs tr[data-config="retention.ms"]')
    expect(row.locator("span.help")).to_have_attribute("title", re.compile(r"^How long records are kept"))
    expect(row.locator("td.source")).to_have_text("default")
    shoot(admin, "topic-configs")
    row.locator('[data-admin-action="edit-config"]').click()
    admin.fill("input[name=value]", "3600000")
    admin.click('[data-admin-action="preview-config"]')
    expect(admin.locator("#config-diff p:first-of-type del")).to_have_text("604800000")
    expect(admin.locator("#config-diff p:first-of-type ins")).to_have_text("3600000")
    expect(admin.locator("#config-diff-human")).to_have_text(re.compile(r"7 d\s*→\s*1 h"))
    shoot(admin, "topic-config-diff")
    admin.click('[data-admin-action="save-config"]')
    expect(admin.locator(".messages")).to_contain_text("retention.ms of orders set to 3600000.")
    expect(row.locator("td.value")).to_have_text("1 h")
    expect(row.locator("td.value span")).to_have_attribute("title", "3600000 ms (1 h)")
    expect(row.locator("td.source")).to_have_text("topic")


def test_tables_sort_and_scroll_in_their_box_at_phone_width(login, topics, shoot):
    admin = login("admin", viewport=DESKTOP)
    path = cluster_path(admin)
    admin.goto(path + "topics/?internal=1")
    names = lambda: admin.locator("#topics tbody tr td:first-child a").all_inner_texts()   # noqa: E731
    header = admin.locator("#topics th", has_text=re.compile(r"^Topic$"))
    header.click()
    ascending = names()
    assert ascending == sorted(ascending, key=str.lower) and len(ascending) >= 3
    expect(header).to_have_attribute("aria-sort", "ascending")
    header.click()
    assert names() == ascending[::-1]
    admin.locator("#topics th", has_text="Messages").click()
    messages = [int(t) for t in admin.locator('#topics td[data-col="messages"]').all_inner_texts() if t.isdigit()]
    assert messages == sorted(messages) and {0, 5, 40} <= set(messages)     # as numbers: 5 before 40
    # Retention is a figure like size and messages: aligned to the right, in tabular digits.
    aligned = admin.locator('#topics td[data-col="retention"]').evaluate_all(
        "cells => cells.map(c => [getComputedStyle(c).textAlign, getComputedStyle(c).fontVariantNumeric])")
    assert aligned and set(map(tuple, aligned)) == {("right", "tabular-nums")}
    # The health columns come right after Replication: seen at 1280 px without scrolling the table.
    table = admin.locator("#topics").bounding_box()
    for health in ("Under-replicated %", "Offline"):
        cell = admin.locator("#topics th", has_text=re.compile(f"^{re.escape(health)}")).bounding_box()
        assert cell["x"] + cell["width"] <= table["x"] + table["width"], health
    shoot(admin, "topics")

    admin.set_viewport_size(PHONE)
    admin.goto(path + "topics/")
    page_width = admin.evaluate("document.documentElement.scrollWidth")
    box = admin.evaluate("(() => { const t = document.getElementById('topics'); "
                         "return [t.scrollWidth, t.clientWidth]; })()")
    assert page_width <= PHONE["width"]                      # the page itself does not scroll sideways
    assert box[0] > box[1]                                   # the wide table scrolls in its own box
    shoot(admin, "topics")

    missing = admin.goto(path + "topics/no-such-topic/")
    assert missing.status == 404
    admin.click("label.nav-toggle-label")                    # the navigation, folded on a phone
    expect(admin.locator('nav[aria-label="Cluster"] a', has_text="Brokers")).to_be_visible()


def test_dark_mode_follows_the_system_is_remembered_and_charts_follow(login, topics):
    admin = login("admin", viewport=DESKTOP, color_scheme="dark")
    admin.goto(cluster_path(admin) + "brokers/")
    root = admin.locator("html")
    expect(root).to_have_attribute("data-theme", "dark")
    chart = admin.locator("#broker-load-chart")
    expect(chart).to_have_attribute("data-drawn", "true")
    paper = lambda: admin.evaluate(   # noqa: E731
        "getComputedStyle(document.querySelector('#broker-load-chart .main-svg')).backgroundColor")
    assert paper() == "rgb(28, 34, 39)"                      # --panel of the dark theme
    admin.click("#theme-switch")                             # auto -> dark (chosen)
    admin.click("#theme-switch")                             # dark -> light
    expect(root).to_have_attribute("data-theme", "light")
    expect(chart).to_have_attribute("data-theme", "light")
    assert paper() == "rgb(255, 255, 255)"
    admin.reload()
    expect(root).to_have_attribute("data-theme", "light")    # remembered over the system's dark
    expect(admin.locator("#theme-switch")).to_have_text("Theme: light")


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_screenshots_of_the_main_pages(login, topics, shoot, color_scheme, viewport):
    admin = login("admin", viewport=viewport, color_scheme=color_scheme)
    path = cluster_path(admin)
    for name, page_path in (("overview", ""), ("brokers", "brokers/"), ("broker", "brokers/1/"),
                            ("topics", "topics/"), ("topic", f"topics/{topics['orders']}/"),
                            ("configs", f"topics/{topics['orders']}/configs"), ("clusters", "/clusters/")):
        response = admin.goto(page_path if page_path.startswith("/") else path + page_path)
        assert response.status == 200, page_path
        expect(admin.locator("html")).to_have_attribute("data-theme", color_scheme)
        if admin.locator("[data-chart]").count():
            expect(admin.locator("[data-chart]").first).to_have_attribute("data-drawn", "true")
        assert shoot(admin, name).stat().st_size > 1000
