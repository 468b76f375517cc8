"""The Transactions page in a real browser: a hanging transaction (its coordinator's state lost)
listed, aborted by an admin through the confirmation page; roles; escaped ids; and the
message browser's isolation switch on the same partition."""
from __future__ import annotations


import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import expect

from tests.browser.conftest import registered_cluster
from tests.console.transactions.conftest import TXN_ENGINE_CONFIGS
from tests.support.engine_process import EngineProcess
from tests.support.txn_clients import committed_transaction, end_offsets, hanging_transaction

TOPIC = "browser-txn"
XSS_ID = '<img src=x onerror=alert(1)>'


@pytest.fixture
def txn_cluster_path(console_server, tmp_path):
    """A private engine with a hanging transaction on TOPIC-0 (offsets 1-2, after one plain
    record), registered in the console; its /clusters/<id>/ path."""
    engine = EngineProcess(tmp_path / "engine", brokers=1, configs=TXN_ENGINE_CONFIGS).start()
    try:
        admin = AdminClient({"bootstrap.servers": engine.bootstrap})   # kept: its futures need the handle
        admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
        admin.create_topics([NewTopic("browser-xss", 1, 1)])["browser-xss"].result(30)
        committed_transaction(engine.bootstrap, "browser-ok", [(TOPIC, 0, b"committed")])
        hanging_transaction(engine, "browser-lost", [(TOPIC, 0, b"open-1"), (TOPIC, 0, b"open-2")])
        # After the coordinator lost its state, so that this one is known.
        committed_transaction(engine.bootstrap, XSS_ID, [("browser-xss", 0, b"x")])
        with registered_cluster(console_server, "txn-browser", engine.bootstrap) as path:
            yield engine, path
    finally:
        engine.kill()


def test_admin_aborts_a_hanging_transaction_from_the_page(login, txn_cluster_path, shoot):
    engine, path = txn_cluster_path
    assert end_offsets(engine.bootstrap, TOPIC, 0) == (2, 4)   # committed at 0, its marker at 1, open from 2

    viewer = login("viewer")
    dialogs: list[str] = []
    viewer.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    viewer.goto(path)
    viewer.get_by_role("link", name="Transactions").click()
    expect(viewer.locator("h1")).to_contain_text("Transactions")
    hanging = viewer.locator(f'#partition-transactions tr[data-partition="{TOPIC}-0"]')
    expect(hanging).to_contain_text("No coordinator knows this producer id")
    expect(hanging.locator("a", has_text="Abort")).to_have_count(0)         # viewers cannot abort
    expect(viewer.locator("#transactions")).to_contain_text(XSS_ID)         # shown as text
    assert viewer.locator("#transactions img").count() == 0 and dialogs == []

    # The isolation switch on the same partition: the open transaction's records are marked,
    # then hidden by read_committed.
    viewer.goto(f"{path}topics/{TOPIC}/messages/?partition=0&start=oldest")
    expect(viewer.locator('#messages tr[data-transaction="open"]')).to_have_count(2)
    expect(viewer.locator('#messages tr[data-control="COMMIT"]')).to_have_count(1)
    viewer.select_option("#isolation", "read_committed")
    viewer.locator("#browse-form button[type=submit]").click()
    expect(viewer.locator("#isolation-note")).to_contain_text("read_committed")
    expect(viewer.locator("#messages tbody tr")).to_have_count(1)
    expect(viewer.locator("#messages")).to_contain_text("committed")
    expect(viewer.locator("#messages")).not_to_contain_text("open-1")

    operator = login("operator")
    answer = operator.goto(f"{path}transactions/abort?topic={TOPIC}&partition=0&start_offset=2")
    assert answer.status == 403

    admin = login("admin")
    admin.goto(f"{path}transactions/")
    shoot(admin, "transactions")
    admin.locator(f'#partition-transactions tr[data-partition="{TOPIC}-0"] a', has_text="Abort").click()
    expect(admin.locator("#abort-summary")).to_contain_text("starts at offset 2")
    assert end_offsets(engine.bootstrap, TOPIC, 0) == (2, 4)                 # nothing yet
    admin.get_by_role("button", name="Abort the transaction").click()
    expect(admin.locator("body")).to_contain_text(f"on {TOPIC}-0 (from offset 2) aborted")
    expect(admin.locator(f'#partition-transactions tr[data-partition="{TOPIC}-0"][data-hanging]')).to_have_count(0)
    assert end_offsets(engine.bootstrap, TOPIC, 0) == (5, 5)
    admin.goto("/audit/")
    expect(admin.locator("body")).to_contain_text("transaction.abort")
