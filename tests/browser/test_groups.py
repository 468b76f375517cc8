"""Consumer group pages in a real browser: live lag, reset through the preview, XSS group ids."""
from __future__ import annotations

import re
import threading
import urllib.parse

from kafka import KafkaConsumer
from playwright.sync_api import expect

from console.kafka_gateway import ConnectionSettings, open_gateway
from tests.support.groups import assigned_consumer_protocol_member, create_topic, produce
from tests.support.waiting import wait_until

SLOW = 60_000   # ms: a bound for a rebalance or a poll, not a performance threshold
XSS_IDS = ['<img src=x onerror=alert(1)>', '"><script>alert(1)</script>']


def _commit(bootstrap: str, group_id: str, offsets: dict[tuple[str, int], int], metadata: str = "") -> None:
    with open_gateway(ConnectionSettings(bootstrap_servers=bootstrap)) as gw:
        coordinator = gw.groups.find_coordinators([group_id]).found[group_id]
        assert gw.groups.commit_offsets(group_id, coordinator=coordinator,
                                        offsets={tp: (o, metadata) for tp, o in offsets.items()}) == {}


def _cluster_path(page) -> str:
    return re.search(r"/clusters/\d+/", page.url).group(0)


def _group_url(cluster_path: str, group_id: str) -> str:
    return f"{cluster_path}groups/{urllib.parse.quote(group_id, safe='')}/"


def test_xss_group_ids_show_as_text_and_open_no_dialog(login, console_server):
    bootstrap = console_server.engine.bootstrap
    create_topic(bootstrap, "browser-xss", 1)
    for group in XSS_IDS:
        _commit(bootstrap, group, {("browser-xss", 0): 0}, metadata=group)   # shown in the live fragment
    admin = login("admin")
    dialogs: list[str] = []
    admin.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    path = _cluster_path(admin)

    admin.goto(path + "groups/?q=" + urllib.parse.quote("<"))
    for group in XSS_IDS[:1]:
        expect(admin.locator("#groups")).to_contain_text(group)
    admin.goto(path + "groups/?q=" + urllib.parse.quote('">'))
    expect(admin.locator("#groups")).to_contain_text(XSS_IDS[1])
    admin.goto(path + "groups/?sort=lag")
    expect(admin.locator("#groups")).to_contain_text(XSS_IDS[1])
    admin.screenshot(path="/tmp/console-groups.png", full_page=True)
    for group in XSS_IDS:
        admin.goto(_group_url(path, group))
        expect(admin.locator("h1")).to_contain_text(group)
        live = admin.locator("#group-live")
        expect(live).to_have_attribute("data-live", "connected", timeout=SLOW)
        # Empty the fragment, then change the group: only a websocket push can refill it.
        admin.evaluate("document.getElementById('group-live').innerHTML = ''")
        _commit(bootstrap, group, {("browser-xss", 0): 1}, metadata=group)
        expect(live.locator("#partitions")).to_contain_text(group, timeout=SLOW)
        assert live.locator("img").count() == 0
        # A reset through the form puts the id in the audit log too.
        admin.select_option("#reset-offsets select[name=target]", "latest")
        admin.click('[data-admin-action="reset-preview"]')
        admin.click('[data-admin-action="apply-reset"]')
        expect(admin.locator(".messages")).to_contain_text("reset")
    admin.goto(path + "topics/browser-xss/consumers")
    expect(admin.locator("#groups")).to_contain_text(XSS_IDS[0])
    assert admin.locator("#groups img").count() == 0
    admin.goto("/audit/")
    expect(admin.locator("#audit")).to_contain_text(XSS_IDS[1])
    assert admin.locator("#audit img").count() == 0
    assert dialogs == []


def test_reset_to_earliest_through_the_preview_brings_the_lag_back(login, console_server):
    bootstrap = console_server.engine.bootstrap
    create_topic(bootstrap, "browser-reset", 2)
    produce(bootstrap, "browser-reset", [b"a"] * 7, partition=0)
    produce(bootstrap, "browser-reset", [b"b"] * 5, partition=1)
    _commit(bootstrap, "browser-reset-group", {("browser-reset", 0): 7, ("browser-reset", 1): 5})
    operator = login("operator")
    operator.goto(_group_url(_cluster_path(operator), "browser-reset-group"))
    expect(operator.locator('[data-figure="total-lag"]')).to_have_text("0")
    expect(operator.locator("#empty-group")).to_be_visible()

    form = operator.locator("#reset-offsets")
    expect(form.locator("input[name=shift]")).to_be_hidden()       # only the chosen target's fields show
    operator.select_option("#reset-offsets select[name=target]", "shift")
    expect(form.locator("input[name=shift]")).to_be_visible()
    expect(form.locator("input[name=datetime]")).to_be_hidden()
    operator.select_option("#reset-offsets select[name=target]", "earliest")
    operator.click('[data-admin-action="reset-preview"]')
    preview = operator.locator("#reset-preview")
    operator.screenshot(path="/tmp/console-group-reset.png", full_page=True)
    expect(preview.locator('tr[data-partition="browser-reset-0"] [data-new-offset]')).to_have_text("0")
    expect(preview.locator('tr[data-partition="browser-reset-1"] [data-new-offset]')).to_have_text("0")
    operator.click('[data-admin-action="apply-reset"]')
    expect(operator.locator('[data-figure="total-lag"]')).to_have_text("12")
    expect(operator.locator('#partitions tr[data-partition="browser-reset-0"] [data-lag]')).to_have_text("7")
    operator.screenshot(path="/tmp/console-group.png", full_page=True)
    # On a phone the lag is within the screen: one topic, so no topic column, and no read_committed ones.
    phone = login("viewer", viewport={"width": 390, "height": 844})
    phone.goto(operator.url)
    lag = phone.locator('#partitions tr[data-partition="browser-reset-0"] [data-lag]')
    expect(lag).to_have_text("7")
    # The table is live: a push may replace the row between two looks, so look until one lands.
    assert wait_until(lambda: right_edge(lag), timeout=30, message="the lag cell laid out") <= 390
    expect(phone.locator("#partitions th.topic")).to_be_hidden()
    # A field with an error stays beside its error, even when the chosen target does not use it.
    operator.goto(_group_url(_cluster_path(operator), "browser-reset-group")
                  + "reset?target=earliest&scope=all&offset=abc")
    form = operator.locator("#reset-offsets")
    expect(form.locator(".errorlist")).to_have_text("Enter a whole number.")
    expect(form.locator("input[name=offset]")).to_be_visible()
    expect(form.locator("input[name=shift]")).to_be_hidden()


def test_lag_falls_to_zero_live_while_a_consumer_reads(login, console_server):
    bootstrap = console_server.engine.bootstrap
    create_topic(bootstrap, "browser-live", 2)
    produce(bootstrap, "browser-live", [b"x"] * 9, partition=0)
    produce(bootstrap, "browser-live", [b"y"] * 6, partition=1)
    _commit(bootstrap, "browser-live-group", {("browser-live", 0): 0, ("browser-live", 1): 0})
    operator = login("operator")
    operator.goto(_group_url(_cluster_path(operator), "browser-live-group"))
    expect(operator.locator("#group-live")).to_have_attribute("data-live", "connected", timeout=SLOW)
    expect(operator.locator('[data-figure="total-lag"]')).to_have_text("15")
    operator.evaluate("window.notReloaded = true")

    stop = threading.Event()
    consumed: list[int] = []

    def consume() -> None:
        consumer = KafkaConsumer("browser-live", bootstrap_servers=bootstrap, group_id="browser-live-group",
                                 client_id="live-reader", enable_auto_commit=True, auto_commit_interval_ms=200,
                                 session_timeout_ms=10000, heartbeat_interval_ms=300)
        try:
            while not stop.is_set():
                for records in consumer.poll(timeout_ms=200).values():
                    consumed.extend(r.offset for r in records)
        finally:
            consumer.close()
    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    try:
        expect(operator.locator('[data-figure="total-lag"]')).to_have_text("0", timeout=SLOW)
        expect(operator.locator("#members")).to_contain_text("live-reader", timeout=SLOW)
        assert operator.evaluate("window.notReloaded") is True
        expect(operator.locator("#partition-lag-chart")).to_have_attribute("data-drawn", "true")
    finally:
        stop.set()
        reader.join(30)
    assert len(consumed) == 15
    # The consumer left: the page says so, still without a reload.
    expect(operator.locator("#empty-group")).to_be_visible(timeout=SLOW)
    assert operator.evaluate("window.notReloaded") is True


def test_a_consumer_protocol_groups_configs_are_changed_from_its_page(login, console_server, shoot):
    """A KIP-848 group: its session timeout set from the page, shown as the group's own, and a
    value outside the brokers' bounds answered with Kafka's refusal in words."""
    bootstrap = console_server.engine.bootstrap
    create_topic(bootstrap, "kip848-configs", 2)
    with assigned_consumer_protocol_member(bootstrap, "kip848-configs-group", "kip848-configs", 2):
        operator = login("operator")
        operator.goto(_group_url(_cluster_path(operator), "kip848-configs-group"))
        session = operator.locator('#group-configs tr[data-config="consumer.session.timeout.ms"]')
        expect(session).to_contain_text("45 s")
        expect(session).to_contain_text("the brokers'")
        # Nothing committed and nothing to read: the lag chart says so rather than drawing an empty frame.
        expect(operator.locator("#partition-lag-chart")).to_contain_text("they hold no records: no lag to draw")

        operator.fill("#group-configs-form input[name=consumer_session_timeout_ms]", "50s")
        operator.click('[data-admin-action="save-configs"]')
        expect(operator.locator(".messages")).to_contain_text("Configs of consumer group kip848-configs-group saved.")
        expect(session).to_contain_text("50 s")
        expect(session).to_contain_text("this group")
        expect(operator.locator("#group-configs-form input[name=consumer_session_timeout_ms]")).to_have_value("50000")
        shoot(operator, "group-kip848-configs")

        operator.fill("#group-configs-form input[name=consumer_session_timeout_ms]", "10s")
        operator.click('[data-admin-action="save-configs"]')
        expect(operator.locator("#group-configs-form")).to_contain_text("must be in [45000, 60000]")
        shoot(operator, "group-kip848-configs-refused")


def right_edge(locator) -> float | None:
    """Where the element ends on the page's x axis; None while it is not laid out (replaced)."""
    box = locator.bounding_box()
    return None if box is None else box["x"] + box["width"]
