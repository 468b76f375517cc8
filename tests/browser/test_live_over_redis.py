"""The live overview updates from an event that crossed Redis, between two console processes.

The page is served by a console that never polls (tests/browser/conftest.py `quiet_console`);
the topic is created through the other one. Nothing but the topic.created event, published on
Redis by one process and received by the other, can bring the new count to the page."""
from __future__ import annotations

import re

from playwright.sync_api import expect

TOPIC = "browser-live-over-redis"
SLOW = 60_000   # ms: a bound for a hung server, not a performance threshold


def test_a_topic_created_in_one_console_process_updates_the_overview_served_by_another(login, quiet_console):
    watcher = login("viewer", quiet_console)
    expect(watcher).to_have_url(re.compile(r"/clusters/\d+/$"))
    cluster_path = re.search(r"/clusters/\d+/", watcher.url).group(0)
    expect(watcher.locator("#overview-live")).to_have_attribute("data-live", "connected", timeout=SLOW)
    before = int(watcher.locator("#ov-topics").inner_text())

    admin = login("admin")   # the polling console: its own process, the same database and Redis
    admin.goto(cluster_path + "topics/")
    admin.click('[data-admin-action="create-topic"]')
    admin.fill("input[name=name]", TOPIC)
    admin.fill("input[name=partitions]", "2")
    admin.fill("input[name=replication_factor]", "1")
    admin.click('[data-admin-action="preview-topic"]')       # the cluster checks it first
    admin.click('[data-admin-action="create-topic"]')

    expect(watcher.locator("#ov-topics")).to_have_text(str(before + 1), timeout=SLOW)
    assert watcher.evaluate("document.readyState") == "complete"

    admin.goto(f"{cluster_path}topics/{TOPIC}/")   # clean up for the other browser tests
    admin.click('[data-admin-action="delete-topic"]')
    admin.fill("input[name=confirmation]", TOPIC)
    admin.locator("#delete-topic button[type=submit]").click()
    expect(watcher.locator("#ov-topics")).to_have_text(str(before), timeout=SLOW)
