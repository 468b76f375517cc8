"""Share groups (KIP-932) in a real browser: the groups list's type filter, a share group's page
updating live as its member acknowledges records, its configs changed, and its start offset
reset through the preview once the group is empty; then the group deleted."""
from __future__ import annotations

import re
import urllib.parse

from playwright.sync_api import expect

from tests.support.groups import create_topic, produce, set_group_configs
from tests.support.share import ACCEPT, RawShareMember, offsets_of

SLOW = 60_000   # ms: a bound for a live push, not a performance threshold


def _cluster_path(page) -> str:
    return re.search(r"/clusters/\d+/", page.url).group(0)


def test_a_share_group_page_updates_live_and_its_start_offset_resets_through_the_preview(login, console_server, shoot):
    engine = console_server.engine
    create_topic(engine.bootstrap, "browser-queue", 1)
    produce(engine.bootstrap, "browser-queue", [f"job-{i}".encode() for i in range(12)])
    set_group_configs(engine.bootstrap, "browser-workers", {"share.auto.offset.reset": "earliest"})
    member = RawShareMember(engine.ports[0], "browser-workers", "browser-queue", "worker-1")
    try:
        member.join()
        assert offsets_of(member.fetch()) == list(range(12))
        member.acknowledge([(0, 4, [ACCEPT])])
        member.start_heartbeats()
        admin = login("admin")
        path = _cluster_path(admin)

        admin.goto(path + "groups/?type=share")
        row = admin.locator('#groups tr[data-group="browser-workers"]')
        expect(row.locator("[data-type]")).to_have_text("share")
        expect(row.locator("[data-lag]")).to_have_text("7")
        shoot(admin, "share-groups-list")
        row.locator("a").first.click()

        expect(admin.locator("h1")).to_contain_text("browser-workers")
        live = admin.locator("#share-group-live")
        expect(live).to_have_attribute("data-live", "connected", timeout=SLOW)
        partition = live.locator('#share-partitions tr[data-partition="browser-queue-0"]')
        expect(partition.locator("[data-start-offset]")).to_have_text("5")
        expect(partition.locator("[data-acquired]")).to_have_text("7")
        expect(live.locator('#members tr[data-member="worker-1"]')).to_be_visible()
        member.acknowledge([(5, 8, [ACCEPT])])           # only a push can show this
        expect(partition.locator("[data-start-offset]")).to_have_text("9", timeout=SLOW)
        expect(partition.locator("[data-acquired]")).to_have_text("3", timeout=SLOW)
        shoot(admin, "share-group-page")

        admin.fill("#share-configs-form input[name=share_record_lock_duration_ms]", "20000")
        admin.click('[data-admin-action="save-configs"]')
        expect(admin.locator(".messages")).to_contain_text("saved")
        expect(admin.locator('#share-configs tr[data-config="share.record.lock.duration.ms"]')).to_contain_text("20 s")

        admin.select_option("#reset-offsets select[name=target]", "earliest")
        admin.click('[data-admin-action="reset-preview"]')
        expect(admin.locator("#reset-refusal")).to_contain_text("only while it has no members")
        member.stop_heartbeats()
        member.fetch(epoch=-1)
        member.heartbeat(epoch=-1)
        admin.reload()
        expect(admin.locator('#reset-preview tr[data-partition="browser-queue-0"] [data-new-offset]')).to_have_text("0")
        shoot(admin, "share-group-reset-preview")
        admin.click('[data-admin-action="apply-reset"]')
        expect(admin.locator(".messages")).to_contain_text("reset")
        expect(admin.locator('#share-partitions tr[data-partition="browser-queue-0"] [data-start-offset]')) \
            .to_have_text("0")
        expect(admin.locator("#empty-group")).to_be_visible()

        admin.click('[data-admin-action="delete-group"]')
        button = admin.locator("#delete-group button[type=submit]")
        admin.fill("input[name=confirmation]", "browser-worker")
        expect(button).to_be_disabled()
        admin.fill("input[name=confirmation]", "browser-workers")
        button.click()
        expect(admin.locator(".messages")).to_contain_text("deleted", timeout=SLOW)
        admin.goto("/audit/")
        for action in ("share_group.alter_configs", "share_group.reset_offsets", "share_group.delete"):
            expect(admin.locator("#audit")).to_contain_text(action)
        admin.goto(path + "share-groups/" + urllib.parse.quote("browser-workers", safe="") + "/")
        expect(admin.locator("body")).to_contain_text("no share group")
    finally:
        member.close()
