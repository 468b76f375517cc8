"""The Connect section in a real browser, on a real distributed Connect worker: an admin
registers the Connect cluster, an operator creates a connector from the plugin's form (Connect's
errors shown per field first), sees it RUNNING with its topic linked, edits its config as JSON, pauses it after the
browser's confirmation, and resumes and pauses it with the buttons of the page's live part; a failed task arrives
on the Connect cluster's live page, its trace one click away; a viewer reads the pages at phone width."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.console.connect.conftest import CONSOLE_WORKER
from tests.support.connect_worker import ConnectWorker


@pytest.fixture(scope="module")
def browser_connect(console_server, tmp_path_factory):
    worker = ConnectWorker(tmp_path_factory.mktemp("browser-connect"), console_server.engine.bootstrap,
                           group="browser-connect", settings=CONSOLE_WORKER, name="browser-worker").start()
    yield worker
    if worker.alive():
        worker.terminate()


def test_register_create_pause_and_read_a_failed_trace(login, console_server, browser_connect, shoot, tmp_path):
    admin = login("admin")
    cluster_path = re.search(r"/clusters/\d+/", admin.url).group(0)
    admin.get_by_role("link", name="Connect", exact=True).click()
    expect(admin.locator("#no-connect")).to_be_visible()
    admin.locator("#add-connect").click()
    admin.fill("#id_name", "dc-browser")
    admin.fill("#id_url", browser_connect.url)
    admin.get_by_role("button", name="Save").click()
    expect(admin.locator("h1")).to_contain_text("dc-browser")

    operator = login("operator")
    dialogs: list[str] = []

    def answer(dialog):
        dialogs.append(dialog.message)
        dialog.accept()
    operator.on("dialog", answer)
    operator.goto(cluster_path + "connect/")
    operator.locator('[data-admin-action="new-connector"]').first.click()
    # connect_new.js binds the change handler at the end of the page; wait_for_url waits for "load".
    operator.wait_for_url("**/connect/*/new")
    operator.select_option("#plugin", "org.apache.kafka.connect.file.FileStreamSourceConnector")
    expect(operator.locator("#connector-form")).to_be_visible()      # connect_new.js opened the plugin's form
    source = tmp_path / "lines.txt"
    source.write_text("one\ntwo\nthree\n")
    operator.fill('input[name="name"]', "browser-source")
    operator.fill('input[name="file"]', str(source))
    operator.locator("#validate").click()
    expect(operator.locator('p.field[data-key="topic"] .field-error')).to_contain_text(
        'Missing required configuration "topic" which has no default value.')
    shoot(operator, "connect-new-errors")
    operator.fill('input[name="topic"]', "browser-lines")
    operator.locator("#create").click()
    expect(operator.locator(".messages")).to_contain_text("Connector browser-source created")
    # The state and the tasks come live, without a reload; the topics Connect lists need one.
    expect(operator.locator('#tasks [data-state="RUNNING"]')).to_be_visible(timeout=60000)
    expect(operator.locator('#connector-state [data-state="RUNNING"]')).to_be_visible()
    for _ in range(60):
        if operator.locator("#connector-topics a").count():
            break
        operator.wait_for_timeout(500)
        operator.reload()
    expect(operator.locator("#connector-topics a")).to_have_attribute("href", f"{cluster_path}topics/browser-lines/")
    shoot(operator, "connect-connector")

    operator.locator("#edit-config").click()
    document = json.loads(operator.input_value("#id_document"))
    assert document["topic"] == "browser-lines" and document["name"] == "browser-source"
    # A secret typed with a mistake comes back hidden, with a warning that names it.
    operator.fill("#id_document", json.dumps({**document, "batch.size": "x", "sftp.password": "browser-s3cret"},
                                             indent=2))
    operator.locator("#validate").click()
    expect(operator.locator(".messages")).to_contain_text("Secrets are not shown back (sftp.password)")
    assert json.loads(operator.input_value("#id_document"))["sftp.password"] == "[hidden]"
    assert "browser-s3cret" not in operator.content()
    shoot(operator, "connect-config-secret")
    operator.fill("#id_document", json.dumps({**document, "batch.size": "100"}, indent=2))
    operator.locator("#validate").click()
    expect(operator.locator("#validated")).to_be_visible()
    shoot(operator, "connect-config")
    operator.locator("#save").click()
    expect(operator.locator(".messages")).to_contain_text("The configuration of browser-source is saved")
    expect(operator.locator("#connector-config")).to_contain_text("batch.size")
    # The same page in the plugin's form, filled with the saved values.
    operator.locator("#edit-config").click()
    operator.locator("#form-mode").click()
    expect(operator.locator('#connector-config-form input[name="batch.size"]')).to_have_value("100")
    expect(operator.locator('#connector-config-form input[name="topic"]')).to_have_value("browser-lines")
    operator.fill('#connector-config-form input[name="batch.size"]', "250")
    shoot(operator, "connect-config-form")
    operator.locator("#save").click()
    expect(operator.locator(".messages")).to_contain_text("The configuration of browser-source is saved")
    expect(operator.locator("#connector-config")).to_contain_text("250")

    operator.locator('[data-action="pause"]').click()
    expect(operator.locator(".messages")).to_contain_text("browser-source is pausing.")
    assert dialogs and dialogs[-1].startswith("Pause browser-source?")
    live = operator.locator("#connector-live")
    expect(live).to_have_attribute("data-live", "connected")
    expect(live.locator('#connector-state [data-state="PAUSED"]')).to_be_visible(timeout=60000)
    # Resume and pause again with the buttons of live pushes: their forms post with the page's
    # CSRF token (a form without one is refused 403 and shows no message).
    live.locator('[data-action="resume"]').click()
    expect(operator.locator(".messages")).to_contain_text("browser-source is resuming.")
    expect(live).to_have_attribute("data-live", "connected")
    expect(live.locator('#connector-state [data-state="RUNNING"]')).to_be_visible(timeout=60000)
    live.locator('[data-action="pause"]').click()
    expect(operator.locator(".messages")).to_contain_text("browser-source is pausing.")
    expect(live.locator('#connector-state [data-state="PAUSED"]')).to_be_visible(timeout=60000)
    connector_page = operator.url

    # A connector whose task fails: the list shows it, with the trace one click away.
    operator.goto(cluster_path + "connect/")
    operator.locator('[data-admin-action="new-connector"]').first.click()
    operator.locator("#json-mode").click()
    operator.fill("#id_document", '{"name": "browser-failing", "config": {"connector.class": "CountingSource", '
                                  '"topic": "browser-count", "fail.after": "3"}}')
    operator.get_by_role("button", name="Create").click()
    # The Connect cluster's page: its connectors table is live, so the failure arrives unasked.
    operator.goto(connector_page)
    operator.locator("h1 small a").first.click()
    expect(operator.locator("#connectors-live")).to_have_attribute("data-live", "connected")
    expect(operator.locator('#connectors-live tr[data-connector="browser-failing"][data-worst="FAILED"]')
           ).to_be_visible(timeout=60000)
    operator.goto(cluster_path + "connect/")
    failing = operator.locator('tr[data-connector="browser-failing"]')
    failing.locator("summary", has_text="task 0 trace").click()
    expect(failing.locator("pre")).to_contain_text("counting task 0 gave up at 3 on purpose")
    shoot(operator, "connect-list")

    viewer = login("viewer", viewport={"width": 390, "height": 844})
    viewer.goto(connector_page)
    expect(viewer.locator("#connector-live")).to_have_attribute("data-live", "connected")
    expect(viewer.locator('#connector-state [data-state="PAUSED"]')).to_be_visible()
    expect(viewer.locator("#connector-live form")).to_have_count(0)       # viewers' pushes carry no actions
    viewer.goto(cluster_path + "connect/")
    expect(viewer.locator('tr[data-connector="browser-source"] [data-state="PAUSED"]')).to_be_visible()
    expect(viewer.locator("[data-admin-action]")).to_have_count(0)
    assert viewer.evaluate("document.documentElement.scrollWidth") <= 390
    shoot(viewer, "connect-list")
