"""Reassignment in a real browser: generate a plan, review it, run it on a real Celery worker
under a throttle, and watch the bytes copied move and the job reach "done" without reloading
the page: then Pause and Cancel are gone and no move says "pending"."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.kafka_gateway import ConnectionSettings, open_gateway
from tests.browser.chart_fit import assert_fits
from tests.support.celery_worker import CeleryWorker
from tests.support.partition_io import send_values

TOPIC = "browser-reassign"
SLOW = 120_000   # ms: a bound for a throttled copy, not a performance threshold


@pytest.fixture
def worker(console_server, tmp_path):
    env = console_server.env
    worker = CeleryWorker(broker_url=env["REDIS_URL"], database_url=env["DATABASE_URL"],
                          log_path=tmp_path / "worker.log",
                          extra_env={"ENGINE_BOOTSTRAP": env["ENGINE_BOOTSTRAP"], "REASSIGNMENT_POLL_SECONDS": "0.3"})
    yield worker.start()
    worker.stop()


def test_generate_review_run_and_watch_progress_reach_100_percent(login, console_server, worker, shoot):
    bootstrap = console_server.engine.bootstrap
    with open_gateway(ConnectionSettings(bootstrap_servers=bootstrap)) as gw:
        gw.create_topic(name=TOPIC, assignments={p: [p % 2, (p + 1) % 2] for p in range(4)})
    for p in range(4):
        # 3 MiB a partition: more than a replica fetch carries (1 MiB), so a throttled copy
        # shows its bytes grow step by step.
        send_values(bootstrap, TOPIC, [bytes(1024) for _ in range(3072)], partition=p, acks="all")

    page = login("operator")
    cluster_path = re.search(r"/clusters/\d+/", page.url).group(0)
    page.goto(cluster_path + "reassignments/")
    # Every field's label is above its input, the schedule's one-time field as the others.
    beside = page.evaluate("""() => [...document.querySelectorAll(
            "#generate-form label[for], #import-form label[for], #schedule-form label[for]")]
        .map((label) => [label, label.parentElement.querySelector("#" + CSS.escape(label.htmlFor))])
        .filter(([, input]) => input && input.type !== "checkbox" && input.type !== "radio")
        .filter(([label, input]) => label.getBoundingClientRect().bottom > input.getBoundingClientRect().top + 1)
        .map(([label]) => label.textContent)""")
    assert beside == [], beside
    page.fill("#generate-form input[name=name]", "fill broker 2")
    page.select_option("#generate-form select[name=scenario]", "add")
    page.fill("#generate-form input[name=topics]", TOPIC)
    page.check('#generate-form input[name=brokers][value="2"]')          # the broker multi-select
    page.click('[data-admin-action="generate"]')

    # Review: moves, totals, the chart, and an ETA that follows the throttle typed in.
    expect(page.locator("#moves tbody tr")).not_to_have_count(0)
    expect(page.locator('#brokers tr[data-broker="2"]')).to_be_visible()
    expect(page.locator("#plan-load-chart")).to_have_attribute("data-drawn", "true")
    page.fill("#id_throttle", "0.25")
    expect(page.locator("#id_throttle + .raw-preview")).to_contain_text("is not a size")
    page.fill("#id_throttle", "1MiB")
    expect(page.locator("#id_throttle + .raw-preview")).to_have_text("Sends 1048576 bytes (1 MiB)")
    expect(page.locator("#eta-throttle")).to_have_text("1 MiB/s per broker")
    expect(page.locator("#eta-estimate")).to_have_text(re.compile(r"^\d+(\.\d)? s$|^\d+ min( \d+ s)?$"))
    total = page.locator("#total-bytes").inner_text()
    assert re.fullmatch(r"\d+(\.\d)? (KiB|MiB)", total), total
    # The per-broker bytes say what they count; the chart's legend keeps off its title.
    expect(page.locator("#brokers th", has_text="Copied in")).to_have_attribute("title", re.compile("copies in"))
    assert_fits(page, "plan-load-chart")
    shoot(page, "reassignment-plan")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(page.locator("#plan-load-chart")).to_have_attribute("data-wrapped", "true")     # drawn again: its title wraps
    expect(page.locator("#plan-load-chart")).to_have_attribute("data-legend", "below")
    assert_fits(page, "plan-load-chart")
    shoot(page, "reassignment-plan")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.click('[data-admin-action="run"]')
    expect(page.locator("#job-live")).to_have_attribute("data-live", "connected")
    # The bytes copied, as the page shows them while the job runs.
    page.evaluate("""() => {
        window.notReloaded = true;
        window.bytesSeen = [];
        const done = document.getElementById("job-bytes-done");
        new MutationObserver(() => window.bytesSeen.push(Number(done.dataset.bytes)))
            .observe(done, {childList: true, characterData: true, subtree: true});
    }""")
    # With a throttle set, the plan's estimate stays computed after the run starts.
    expect(page.locator("#eta-estimate")).to_have_text(re.compile(r"^\d+(\.\d)? s$|^\d+ min( \d+ s)?$"))
    expect(page.locator("#eta-throttle")).to_have_text("1 MiB/s per broker")
    expect(page.locator("#job-eta")).not_to_have_text("—")
    expect(page.locator('[data-admin-action="cancel"]')).to_be_visible()
    expect(page.locator("#job-state")).to_have_text("done", timeout=SLOW)
    expect(page.locator("#job-percent")).to_have_text(re.compile(r"^100(\.0)?$"))
    expect(page.locator("#job-progress-bar")).to_have_attribute("style", re.compile(r"width: 100%"))
    expect(page.locator("#job-bytes-done")).to_have_text(total)
    # Done: the actions and the moves table follow without a reload.
    expect(page.locator('[data-admin-action="pause"], [data-admin-action="cancel"]')).to_have_count(0)
    expect(page.locator("[data-move-state=pending], [data-move-state=in_flight]")).to_have_count(0)
    # ... and the ETA gives way to how long the job took and when it ended.
    expect(page.locator("#job-eta")).to_have_count(0)
    expect(page.locator("#job-elapsed")).to_have_text(re.compile(r"^\d+(\.\d)? s$|^\d+ min( \d+ s)?$"))
    expect(page.locator("#job-ended")).to_contain_text(re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"))
    expect(page.locator("#job-started")).to_contain_text(re.compile(r"\d{4}-\d\d-\d\d"))
    assert page.locator("[data-move-state=done]").count() == page.locator("#moves tbody tr").count() > 0
    assert page.evaluate("window.notReloaded") is True, worker.log_text()
    seen = page.evaluate("window.bytesSeen")
    assert any(0 < b < seen[-1] for b in seen), seen          # the bytes moved before the end
    shoot(page, "reassignment-done")

    with open_gateway(ConnectionSettings(bootstrap_servers=bootstrap)) as gw:
        replicas = [p.replicas for p in gw.metadata([TOPIC]).topic(TOPIC).partitions]
    assert sum(2 in r for r in replicas) >= 2
