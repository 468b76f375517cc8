"""Messages in a real browser: browse, streamed search and stop, live tail, and hostile payloads
that must stay inert (a dialog handler fails the test if any script runs)."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.console.messages.conftest import create_topic, produce_confluent
from tests.support.txn_clients import committed_transaction, open_transaction

SLOW = 60_000   # ms: a bound for a loaded machine, not a performance threshold
XSS = ['<script>alert("k")</script>', '<img src=x onerror=alert("v")>', 'javascript:alert("h")',
       '{"a": "</script><script>alert(\'j\')</script>"}']


@pytest.fixture
def no_dialogs():
    """Attach to a page; any alert/confirm/prompt is recorded and fails the test."""
    seen: list[str] = []
    pages = []

    def watch(page):
        page.on("dialog", lambda dialog: (seen.append(dialog.message), dialog.dismiss()))
        pages.append(page)
        return page
    yield watch
    assert seen == [], f"a payload ran as script: {seen}"


def cluster_path(page) -> str:
    return re.search(r"/clusters/\d+/", page.url).group(0)


def search_until_finished(page, text: str) -> None:
    page.fill("#search-form input[name=text]", text)
    page.click("#search-start")
    expect(page.locator("#stat-state")).to_have_text("finished", timeout=SLOW)


@pytest.fixture(scope="module")
def hostile_topic(console_server):
    bootstrap = console_server.engine.bootstrap
    topic = create_topic(bootstrap, "browser-hostile")
    produce_confluent(bootstrap, topic, [{"key": p.encode(), "value": p.encode(), "headers": [(p, p.encode())]}
                                         for p in XSS])
    return topic


@pytest.fixture(scope="module")
def big_topic(console_server):
    """600k small records (enough that a search runs for a while) with 5 planted needles."""
    bootstrap = console_server.engine.bootstrap
    topic = create_topic(bootstrap, "browser-search", partitions=2)
    produce_confluent(bootstrap, topic, ({"partition": i % 2, "value": b"rec %d %s" % (
        i, b"NEEDLE" if i % 120_000 == 3 else b"plain")} for i in range(600_000)),
        **{"linger.ms": 50, "batch.num.messages": 5000})
    return topic


def test_browse_and_record_view_keep_payloads_inert(login, hostile_topic, no_dialogs):
    viewer = no_dialogs(login("viewer"))
    viewer.goto(f"{cluster_path(viewer)}topics/{hostile_topic}/")
    viewer.click("#topic-messages")
    viewer.goto(viewer.url + "?start=oldest")
    rows = viewer.locator("#messages tbody tr")
    expect(rows).to_have_count(len(XSS))
    expect(rows.nth(0).locator(".msg-value")).to_have_text(XSS[0])
    expect(rows.nth(1).locator(".msg-key")).to_have_text(XSS[1])
    assert viewer.locator("#messages img").count() == 0
    viewer.screenshot(path="/tmp/console-messages-browse.png", full_page=True)
    for i in range(len(XSS)):
        viewer.click(f'#messages tr[data-offset="{i}"] a')
        expect(viewer.locator("#record-value")).to_have_text(XSS[i])
        assert viewer.locator("main img, main a[href^='javascript']").count() == 0
        viewer.go_back()


def test_search_streams_results_and_stats_then_stop_ends_a_long_one(login, big_topic, hostile_topic, no_dialogs):
    viewer = no_dialogs(login("viewer"))
    base = f"{cluster_path(viewer)}topics/{big_topic}/messages/"
    viewer.goto(base + "search")
    search_until_finished(viewer, "NEEDLE")
    expect(viewer.locator("#search-results tbody tr")).to_have_count(5)
    expect(viewer.locator("#stat-records")).to_have_text("600,000")
    expect(viewer.locator("#stat-matches")).to_have_text("5")
    viewer.screenshot(path="/tmp/console-messages-search.png", full_page=True)

    # A regex gets no batch pre-check: every record is decoded. A records limit stops the scan
    # where it says; "Continue from here" picks up at those positions and finishes.
    viewer.select_option("#search-form select[name=mode]", "regex")
    viewer.fill("#search-form input[name=text]", "^rec 59999[0-9] plain$")
    viewer.fill("#search-form input[name=max_records]", "400000")
    viewer.click("#search-start")
    expect(viewer.locator("#stat-state")).to_have_text("stopped (records limit)", timeout=SLOW)
    assert 400_000 <= int(viewer.locator("#stat-records").get_attribute("data-value")) < 600_000
    expect(viewer.locator("#search-results tbody tr")).to_have_count(0)
    viewer.click("#search-continue")
    expect(viewer.locator("#stat-state")).to_have_text("finished", timeout=SLOW)
    expect(viewer.locator("#search-results tbody tr")).to_have_count(10)
    continued = int(viewer.locator("#stat-records").get_attribute("data-value"))
    assert 0 < continued <= 200_000

    # Stop, pressed at once, ends a search that has 600k records to go.
    viewer.fill("#search-form input[name=max_records]", "10000000")
    viewer.click("#search-start")
    viewer.click("#search-stop")
    expect(viewer.locator("#stat-state")).to_have_text("stopped (stop)", timeout=SLOW)
    assert int(viewer.locator("#stat-records").get_attribute("data-value")) < 600_000
    expect(viewer.locator("#search-continue")).to_be_visible()

    # Search results carry the hostile payloads as text only.
    viewer.goto(f"{cluster_path(viewer)}topics/{hostile_topic}/messages/search")
    search_until_finished(viewer, "alert")
    expect(viewer.locator("#search-results tbody tr")).to_have_count(len(XSS))
    expect(viewer.locator("#search-results tbody tr").nth(1).locator(".msg-value")).to_have_text(XSS[1])
    assert viewer.locator("#search-results img").count() == 0


def test_tail_shows_a_record_produced_after_the_page_opened(login, console_server, hostile_topic, no_dialogs):
    viewer = no_dialogs(login("viewer"))
    viewer.goto(f"{cluster_path(viewer)}topics/{hostile_topic}/messages/tail")
    expect(viewer.locator("#tail-form")).to_have_attribute("data-tailing", "true", timeout=SLOW)
    expect(viewer.locator("#tail-results tbody tr[data-offset]")).to_have_count(0)
    produce_confluent(console_server.engine.bootstrap, hostile_topic,
                      [{"key": b"live", "value": XSS[1].encode() + b" tailed"}])
    row = viewer.locator("#tail-results tbody tr[data-offset]")
    expect(row).to_have_count(1, timeout=SLOW)
    expect(row.locator(".msg-value")).to_have_text(XSS[1] + " tailed")
    assert viewer.locator("#tail-results img").count() == 0
    viewer.click("#tail-pause")
    expect(viewer.locator("#tail-state")).to_have_text("paused")


def test_search_and_tail_badge_records_by_their_transaction(login, console_server, no_dialogs):
    bootstrap = console_server.engine.bootstrap
    topic = create_topic(bootstrap, "browser-txn")
    committed_transaction(bootstrap, "browser-txn-c", [(topic, 0, b"c hit")])
    committed_transaction(bootstrap, "browser-txn-a", [(topic, 0, b"a hit")], commit=False)
    viewer = no_dialogs(login("viewer"))
    base = f"{cluster_path(viewer)}topics/{topic}/messages/"
    viewer.goto(base + "search")
    search_until_finished(viewer, "hit")
    expect(viewer.locator("#search-results tbody tr")).to_have_count(2)
    for value, badge in (("c hit", "committed"), ("a hit", "aborted")):
        row = viewer.locator(f'#search-results tr[data-transaction="{badge}"]')
        expect(row.locator(".msg-value")).to_have_text(value)
        expect(row.locator(".txn-badge")).to_have_text(badge)
    viewer.select_option("#search-form select[name=isolation]", "read_committed")
    viewer.click("#search-start")
    expect(viewer.locator("#stat-state")).to_have_text("finished", timeout=SLOW)
    expect(viewer.locator("#search-results tbody tr .msg-value")).to_have_text(["c hit"])

    # The tail (read_uncommitted) shows an open transaction's record as pending, then its commit.
    viewer.goto(base + "tail")
    expect(viewer.locator("#tail-form")).to_have_attribute("data-tailing", "true", timeout=SLOW)
    producer = open_transaction(bootstrap, "browser-txn-t", [(topic, 0, b"t live")])
    live = viewer.locator("#tail-results tr", has=viewer.locator(".msg-value", has_text="t live"))
    expect(live.locator(".txn-badge")).to_have_text("pending", timeout=SLOW)
    producer.commit_transaction(60)
    expect(live.locator(".txn-badge")).to_have_text("committed", timeout=SLOW)
    expect(viewer.locator('#tail-results tr[data-control="COMMIT"]')).to_contain_text("COMMIT marker")
    viewer.screenshot(path="/tmp/console-messages-tail-transactions.png", full_page=True)


def test_tail_of_a_busy_topic_caps_what_it_draws_and_says_how_much_it_skipped(login, console_server, no_dialogs):
    bootstrap = console_server.engine.bootstrap
    topic = create_topic(bootstrap, "browser-busy", partitions=3)
    viewer = no_dialogs(login("viewer"))
    viewer.goto(f"{cluster_path(viewer)}topics/{topic}/messages/tail")
    expect(viewer.locator("#tail-form")).to_have_attribute("data-tailing", "true", timeout=SLOW)
    produce_confluent(bootstrap, topic, ({"value": b"busy %d" % i} for i in range(100_000)),
                      **{"linger.ms": 20, "batch.num.messages": 5000})
    expect(viewer.locator("#tail-matches")).to_have_text("100,000", timeout=SLOW)
    shown, not_shown = (int(viewer.locator(f"#tail-{name}").get_attribute("data-value")) for name in ("shown", "not-shown"))
    assert shown + not_shown == 100_000 and not_shown > 0
    assert viewer.evaluate("1 + 1") == 2          # the page still answers
    assert 0 < viewer.locator("#tail-results tbody tr[data-offset]").count() <= 500


def test_an_operator_produces_from_the_form_and_browses_it(login, console_server, no_dialogs):
    topic = create_topic(console_server.engine.bootstrap, "browser-produce")
    operator = no_dialogs(login("operator"))
    operator.goto(f"{cluster_path(operator)}topics/{topic}/messages/")
    operator.click('[data-admin-action="produce"]')
    operator.fill("#produce-form textarea[name=key]", "order-1")
    operator.fill("#produce-form textarea[name=value]", '{"total": 12, "note": "<b>bold</b>"}')
    operator.select_option("#produce-form select[name=value_serializer]", "json")
    operator.fill("#produce-form textarea[name=headers]", "source=console")
    operator.fill("#produce-form input[name=copies]", "2")
    operator.click("#produce-form button[type=submit]")
    expect(operator.locator("#produced")).to_contain_text("Produced 2 records")
    operator.click("#messages-nav >> text=Browse")
    rows = operator.locator("#messages tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator(".msg-value .text")).to_have_text('{"total": 12, "note": "<b>bold</b>"}')
    expect(rows.nth(0).locator(".msg-headers")).to_have_text("source=console")
    assert operator.locator("#messages b").count() == 0
    operator.screenshot(path="/tmp/console-messages-produced.png", full_page=True)
