"""The Quotas page in a real browser: an operator sets a client quota through the form, the
cluster's validate-only preview and the confirming button, then removes it after the browser's
confirmation; a viewer sees the quota and no button, and which entity that client id's quota
comes from; a hostile client id shows as text; the page fits a phone's width."""
from __future__ import annotations

import re

from playwright.sync_api import expect

from console.kafka_gateway import ConnectionSettings, open_gateway

CLIENT_ID = '<img src=x onerror=alert(1)>'
RATE = "controller_mutation_rate"


def _quotas(bootstrap: str) -> dict:
    with open_gateway(ConnectionSettings(bootstrap_servers=bootstrap)) as gw:
        return {q.entity: dict(q.values) for q in gw.quotas.describe()}


def test_operator_sets_a_quota_through_the_preview_and_removes_it(login, console_server, shoot):
    bootstrap = console_server.engine.bootstrap
    operator = login("operator")
    dialogs: list[str] = []

    def answer(dialog):
        dialogs.append(dialog.type)
        dialog.accept()
    operator.on("dialog", answer)
    cluster_path = re.search(r"/clusters/\d+/", operator.url).group(0)
    operator.get_by_role("link", name="Quotas", exact=True).click()
    expect(operator.locator("h1")).to_contain_text("Client quotas")
    operator.locator('[data-admin-action="set-quota"]').click()

    operator.fill("#id_client_id", CLIENT_ID)
    operator.select_option("#id_key", RATE)
    operator.fill("#id_value", "25")
    operator.locator('[data-admin-action="preview-quota"]').click()
    preview = operator.locator("#quota-preview")
    expect(preview).to_contain_text("not set")
    expect(preview).to_contain_text("25 mutations/s")
    shoot(operator, "quota-preview")
    assert _quotas(bootstrap) == {}                      # the preview changed nothing

    operator.locator('[data-admin-action="apply-quota"]').click()
    operator.wait_for_url(re.compile(re.escape(cluster_path) + r"quotas/$"))
    expect(operator.locator(".messages")).to_contain_text("set to 25 mutations/s")
    row = operator.locator(f'#quotas tr[data-key="{RATE}"]')
    expect(row).to_have_count(1)
    expect(row).to_contain_text(CLIENT_ID)
    assert operator.locator("#quotas img").count() == 0
    # Change… and Remove… as one group: two buttons of one height on one line, left to right.
    change, remove = (row.locator(f'[data-admin-action="{a}"]').bounding_box() for a in ("change-quota", "remove-quota"))
    assert abs(change["height"] - remove["height"]) < 1 and abs(change["y"] - remove["y"]) < 1, (change, remove)
    assert change["x"] + change["width"] < remove["x"] < change["x"] + change["width"] + 16
    shoot(operator, "quotas")
    assert _quotas(bootstrap) == {(("client-id", CLIENT_ID),): {RATE: 25.0}}

    viewer = login("viewer", viewport={"width": 390, "height": 844})
    viewer.goto(cluster_path + "quotas/")
    expect(viewer.locator(f'#quotas tr[data-key="{RATE}"]')).to_contain_text("25 mutations/s")
    expect(viewer.locator("[data-admin-action]")).to_have_count(0)
    # Which quotas that client id gets, for a client that did not log in.
    viewer.fill("#id_who_client_id", CLIENT_ID)
    viewer.get_by_role("button", name="Find its quotas").click()
    applied = viewer.locator(f'#quota-resolution tr[data-key="{RATE}"]')
    expect(applied.locator("[data-source]")).to_have_text(f"client-id '{CLIENT_ID}'")
    expect(applied.locator("[data-value]")).to_have_text("25 mutations/s")
    expect(viewer.locator("#quota-who-subject")).to_contain_text("ANONYMOUS")
    assert viewer.evaluate("document.documentElement.scrollWidth") <= 390     # no sideways scroll at phone width
    shoot(viewer, "quotas")

    row.locator('[data-admin-action="remove-quota"]').click()
    expect(operator.locator(".messages")).to_contain_text("removed (it was 25 mutations/s)")
    expect(operator.locator(f'#quotas tr[data-key="{RATE}"]')).to_have_count(0)
    assert _quotas(bootstrap) == {}
    assert dialogs == ["confirm"]                        # the removal's question, and no alert
