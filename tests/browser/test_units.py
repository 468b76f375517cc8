"""static/js/units.js writes numbers as console/formatting.py does (the same cases, run in
Chromium), keeps times in the reader's own time zone, and previews the raw value an input sends."""
from __future__ import annotations

import re

from kafka.admin import KafkaAdminClient, NewTopic
from playwright.sync_api import expect

from console import formatting
from tests.console.test_formatting import CASES, PARSE_CASES, RATE_NOUN_CASES, SIZE_CASES

JS_NAMES = {"duration": "duration", "size": "size", "count": "count", "rate": "rate", "percent": "percent",
            "percent_change": "percentChange"}


def test_the_browser_formats_and_parses_as_the_server_does(login):
    page = login("viewer", timezone_id="Asia/Kolkata")
    shown = page.evaluate("cases => cases.map(c => window.consoleUnits[c[0]](c[1]))",
                          [[JS_NAMES[name], argument] for name, argument, _ in CASES])
    assert shown == [expected for _, _, expected in CASES]
    rates = page.evaluate("cases => cases.map(x => window.consoleUnits.rate(x, 'record'))",
                          [x for x, _ in RATE_NOUN_CASES])
    assert rates == [expected for _, expected in RATE_NOUN_CASES]
    parsed = page.evaluate("cases => cases.map(c => window.consoleUnits.parseDuration(c[0], c[1]))",
                           [[text, unit] for text, unit, _ in PARSE_CASES])
    assert parsed == [expected for _, _, expected in PARSE_CASES]
    sizes = page.evaluate("cases => cases.map(c => window.consoleUnits.parseSize(c))", [t for t, _ in SIZE_CASES])
    assert sizes == [expected for _, expected in SIZE_CASES]
    errors = page.evaluate("""() => ["3x", "1.5ms"].map(t => {
        try { window.consoleUnits.parseDuration(t, "ms"); return null; } catch (e) { return e.message; } })""")
    server = []
    for text in ("3x", "1.5ms"):
        try:
            formatting.parse_duration(text, "ms")
        except formatting.UnitError as error:
            server.append(str(error))
    assert errors == server
    # The reader's time zone (India: +05:30), whatever the server's; the age beside a time is
    # written in the browser (the server's HTML stays the same from one render to the next).
    local = page.evaluate("window.consoleUnits.timestamp(new Date('2026-11-23T14:03:05Z'))")
    assert local == "2026-11-23 19:33:05 +05:30"
    written = page.evaluate("""() => {
        const moment = new Date(Date.now() - 125000).toISOString();
        const holder = document.createElement("p");
        holder.innerHTML = `<time datetime="${moment}" data-when></time> <time datetime="${moment}" data-ago></time>`;
        document.body.append(holder);
        window.consoleUnits.refresh(holder);
        return [...holder.querySelectorAll("time")].map(t => t.textContent);
    }""")
    assert written[0].endswith(" +05:30") and written[1] == "2 min ago"


def test_a_config_input_takes_3d_and_shows_the_raw_value_it_sends(login, console_server):
    admin = KafkaAdminClient(bootstrap_servers=console_server.engine.bootstrap)
    try:
        admin.create_topics([NewTopic("units-retention", 1, 1, topic_configs={"retention.ms": "259200000"})])
    finally:
        admin.close()
    page = login("operator")
    cluster = re.search(r"/clusters/\d+/", page.url).group(0)
    page.goto(f"{cluster}topics/units-retention/configs")
    row = page.locator('tr[data-config="retention.ms"]')
    expect(row.locator("td.value")).to_have_text("3 d")
    assert row.locator("td.value span").get_attribute("title") == "259200000 ms (3 d)"
    page.goto(f"{cluster}topics/units-retention/configs/retention.ms")
    expect(page.locator("#config-default")).to_contain_text("168 h (7 d)")
    value = page.locator("input[name=value]")
    value.fill("2d")
    expect(page.locator(".raw-preview")).to_have_text("Sends 172800000 ms (2 d)")
    value.fill("2 days and a bit")
    expect(page.locator(".raw-preview")).to_contain_text("is not a duration")
    value.fill("2d")
    page.click("[data-admin-action=preview-config]")
    diff = page.locator("#config-diff")
    expect(diff).to_contain_text(re.compile(r"259200000\s*→\s*172800000"))
    expect(page.locator("#config-diff-human")).to_have_text(re.compile(r"In a person's units: 3 d\s*→\s*2 d"))
    page.click("[data-admin-action=save-config]")
    expect(page.locator('tr[data-config="retention.ms"] td.value')).to_have_text("2 d")
