"""The Alerts page and the navigation badge in a real browser: an operator adds a rule through
the form; beat and a worker (real Celery on the console's Redis and database) fire it on a real
lagging group, and the badge on a page opened before counts it live; the operator acknowledges
and silences it, and the badge no longer counts it; the group catches up and the page, told
live, shows it resolved. A viewer sees no buttons."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.kafka_gateway import ConnectionSettings, open_gateway
from tests.support.celery_worker import CeleryBeat, CeleryWorker
from tests.support.partition_io import send_values

ENV = {"ALERTS_EVALUATION_SECONDS": "1", "ALERTS_DELIVERY_SWEEP_SECONDS": "2", "SNAPSHOT_SECONDS": "86400",
       "ANALYTICS_RUN_SECONDS": "86400", "ANALYTICS_RECORDS_SECONDS": "86400", "METRICS_MAX_AGE_SECONDS": "0"}
TOPIC, GROUP = "browser-alerts", "browser-alerts-billing"


def _commit(bootstrap: str, offset: int) -> None:
    with open_gateway(ConnectionSettings(bootstrap_servers=bootstrap)) as gw:
        coordinator = gw.groups.find_coordinators([GROUP]).found[GROUP]
        assert gw.groups.commit_offsets(GROUP, coordinator=coordinator, offsets={(TOPIC, 0): (offset, "")}) == {}


@pytest.fixture
def celery(console_server, tmp_path):
    env = {k: v for k, v in console_server.env.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    common = dict(broker_url=console_server.env["REDIS_URL"], database_url=console_server.env["DATABASE_URL"],
                  extra_env={**env, **ENV, "DJANGO_SETTINGS_MODULE": "console.settings"})
    worker = CeleryWorker(log_path=tmp_path / "worker.log", queues=("celery", "alerts"), pool="solo", concurrency=1,
                          **common)
    beat = CeleryBeat(log_path=tmp_path / "beat.log", **common)
    yield worker, beat
    beat.stop()
    worker.stop()


def test_a_rule_fires_the_badge_goes_live_and_the_page_lists_it(login, console_server, shoot, celery):
    bootstrap = console_server.engine.bootstrap
    with open_gateway(ConnectionSettings(bootstrap_servers=bootstrap)) as gw:
        gw.create_topic(name=TOPIC, num_partitions=1, replication_factor=1)
    send_values(bootstrap, TOPIC, [b"v"] * 40)
    _commit(bootstrap, 10)

    operator = login("operator")
    cluster_path = re.search(r"/clusters/\d+/", operator.url).group(0)
    operator.get_by_role("link", name=re.compile("^Alerts")).click()
    expect(operator.locator("h1")).to_contain_text("Alerts")
    operator.locator('[data-admin-action="add-rule"]').click()
    operator.fill("#id_name", "billing behind")
    operator.select_option("#id_kind", "group_lag")
    operator.select_option("#id_target_type", "prefix")
    operator.fill("#id_target", "browser-alerts-")
    operator.fill("#id_threshold", "20")
    operator.fill("#id_for_seconds", "0")
    shoot(operator, "alert-rule-form")
    operator.locator('[data-admin-action="save-rule"]').click()
    operator.wait_for_url(re.compile(re.escape(cluster_path) + r"alerts/$"))
    expect(operator.locator('#rules tr[data-rule="billing behind"]')).to_contain_text("names starting with")

    watcher = login("viewer")                       # a page opened before anything fires
    watcher.goto(cluster_path + "topics/")
    badge = watcher.locator("[data-alerts-badge]")
    expect(badge).to_have_attribute("data-live", "connected")
    expect(operator.locator("[data-alerts-badge]")).to_have_attribute("data-live", "connected")
    expect(badge.locator("[data-firing]")).to_have_attribute("data-firing", "0")

    worker, beat = celery
    worker.start()
    beat.start()
    expect(badge.locator("[data-firing]")).to_have_attribute("data-firing", "1", timeout=90_000)
    expect(badge).to_contain_text("1")
    shoot(watcher, "alerts-badge")

    # The operator is still on the Alerts page, which reloads itself when the count changes
    # (alerts.js): a goto here could collide with that reload.
    firing = operator.locator('#open-alerts tr[data-state="firing"]')
    expect(firing).to_contain_text(GROUP, timeout=30_000)
    expect(firing).to_contain_text("30")
    expect(operator.locator('#rules tr[data-rule="billing behind"] svg.sparkline')).to_have_count(1)
    operator.locator('[data-admin-action="acknowledge"]').click()
    expect(operator.locator(".messages")).to_contain_text("acknowledged")
    expect(operator.locator("#open-alerts")).to_contain_text("operator")
    operator.fill('#silence-form [name="reason"]', "deploying the billing fix")
    operator.locator('[data-admin-action="silence"]').click()
    expect(operator.locator("#silences")).to_contain_text("deploying the billing fix")
    # Silenced: not counted as firing any more, on the watcher's page too; the row says until when,
    # in the reader's time zone with the time left beside it (units.js).
    expect(badge.locator("[data-firing]")).to_have_attribute("data-silenced", "1", timeout=30_000)
    expect(badge.locator("[data-firing]")).to_have_attribute("data-firing", "0")
    expect(operator.locator("[data-alerts-badge] [data-firing]")).to_have_attribute("data-firing", "0")
    silenced = operator.locator("#open-alerts tr[data-silenced-until] [data-silenced]")
    expect(silenced).to_contain_text(re.compile(r"silenced until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d in 1 h"))
    expect(operator.locator('#rules tr[data-rule="billing behind"]')).to_contain_text("1 silenced")
    expect(operator.locator("#open-alerts")).not_to_contain_text("minutes")
    shoot(operator, "alerts")

    _commit(bootstrap, 40)                          # the group catches up
    expect(badge.locator("[data-firing]")).to_have_attribute("data-firing", "0", timeout=90_000)
    # The operator's Alerts page reloads itself when the firing count changes (alerts.js): no goto,
    # which could collide with that reload.
    expect(operator.locator('#history tr[data-kind="resolved"]')).to_have_count(1, timeout=90_000)
    expect(operator.locator("#rules")).to_contain_text(re.compile(r"\d{4}-\d\d-\d\d"))   # last fired

    viewer = login("viewer", viewport={"width": 390, "height": 844})
    viewer.goto(cluster_path + "alerts/")
    expect(viewer.locator("#rules")).to_contain_text("billing behind")
    expect(viewer.locator("[data-admin-action]")).to_have_count(0)
    shoot(viewer, "alerts")
