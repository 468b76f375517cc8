"""The console's pages and admin forms in Chromium, on a realistic cluster of its own: a shop
whose orders (JSON, keyed, 12 partitions), payments (Confluent-framed Avro), binary events, a
compacted customers topic and a transactional ledger (committed, aborted and one open
transaction) are written by real clients, read by four consumer groups (one with a live
member), with a client quota and a registered schema.

Forms and errors: the cluster's own checks refuse a bad value at the preview, refusals read as
sentences with Kafka's name and code (the audit log keeps the same sentence), deleting a group
asks once, the pickers, the key-ordering warning, the quota keys the engine enforces. Layout:
the topic tabs and the config search, broker configs edited and filtered, the healthy-cluster
overview live, the brokers table's counts, the audit log's filters, Schemas in the navigation,
the favicon, and the phone layout. Then every page in light and dark at 1280 and 390 px into
artifacts/screenshots/ (and one per page at 1280 px into artifacts/screenshots/docs/ for the
docs site), each phone page checked to fit its width."""
from __future__ import annotations

import datetime as dt
import io
import json
import re
import struct
import subprocess
import sys
from dataclasses import dataclass, field

import fastavro
import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError, expect

from console.analytics import lake as L
from console.analytics.jobs import lag, rates
from console.kafka_gateway import ConnectionSettings, open_gateway
from tests.browser.conftest import PASSWORDS, ROOT, SCREENSHOTS
from tests.console.conftest import STOPPABLE_ENGINE_CONFIGS
from tests.console.messages.conftest import produce_confluent
from tests.support.engine_process import EngineProcess
from tests.support.groups import GroupClient
from tests.support.lake_results import record_finished_run, write_result
from tests.support.txn_clients import committed_transaction, open_transaction
from tests.support.waiting import wait_until

SLOW = 60_000                     # ms: a bound for a loaded machine, not a performance threshold
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
SCHEMA_ID = 7101
PAYMENT_SCHEMA = json.dumps({"type": "record", "name": "Payment", "fields": [
    {"name": "order_id", "type": "long"}, {"name": "amount_cents", "type": "long"},
    {"name": "currency", "type": "string"}]})
NOW = dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0)


@dataclass
class Shop:
    path: str                      # /clusters/<id>/
    cluster_id: int
    engine: EngineProcess
    topics: dict[str, str] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    job_path: str = ""             # a generated reassignment plan, once a test made one


def _manage(env: dict, *args: str) -> str:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True).stdout


def _framed_payment(i: int) -> bytes:
    out = io.BytesIO()
    out.write(struct.pack(">bI", 0, SCHEMA_ID))
    fastavro.schemaless_writer(out, fastavro.parse_schema(json.loads(PAYMENT_SCHEMA)),
                               {"order_id": i, "amount_cents": 1999 + i, "currency": "NZD"})
    return out.getvalue()


def _fill(bootstrap: str, topics: dict[str, str]) -> None:
    """About 10,000 records: what the shop's services write."""
    stamp = int(NOW.timestamp() * 1000) - 3_600_000
    produce_confluent(bootstrap, topics["orders"], [
        {"key": f"customer-{i % 400:04d}".encode(), "timestamp": stamp + i * 300,
         "value": json.dumps({"order_id": i, "customer": f"customer-{i % 400:04d}", "status": "paid",
                              "lines": [{"sku": f"sku-{i % 37}", "qty": 1 + i % 3}]}).encode()}
        for i in range(8000)])
    produce_confluent(bootstrap, topics["payments"], [
        {"key": b"order-%d" % i, "value": _framed_payment(i), "timestamp": stamp + i * 1000} for i in range(600)])
    produce_confluent(bootstrap, topics["events"], [
        {"key": bytes([0xCA, 0xFE, i % 256]), "value": bytes((i + j) % 256 for j in range(64)),
         "timestamp": stamp + i * 2000} for i in range(800)])
    produce_confluent(bootstrap, topics["customers"], [
        {"key": f"customer-{i % 120:04d}".encode(), "value": json.dumps({"tier": "gold" if i % 7 else "silver",
                                                                          "version": i}).encode(),
         "timestamp": stamp + i * 500} for i in range(900)])
    for n in range(3):
        committed_transaction(bootstrap, f"ledger-writer-{n}", [(topics["ledger"], n % 2, b'{"entry": %d}' % n)])
    committed_transaction(bootstrap, "ledger-writer-aborted", [(topics["ledger"], 0, b'{"entry": "void"}')],
                          commit=False)


def _groups(engine: EngineProcess, topics: dict[str, str]) -> tuple[dict[str, str], Consumer]:
    """billing: a live member that read most orders; analytics and audit: no members, behind
    (audit committed on a third of the partitions only); ledger-sync: caught up."""
    groups = {"billing": "billing", "analytics": "analytics", "audit": "audit", "ledger": "ledger-sync"}
    consumer = Consumer({"bootstrap.servers": engine.bootstrap, "group.id": groups["billing"],
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "client.id": "billing-service", "session.timeout.ms": 45000})
    consumer.subscribe([topics["orders"]])
    consumed = 0

    def read_some() -> bool:
        nonlocal consumed
        consumed += sum(not m.error() for m in consumer.consume(500, timeout=1))
        return consumed >= 6000
    wait_until(read_some, timeout=120, message="billing to read 6,000 orders")
    consumer.commit(asynchronous=False)
    for group, offsets in ((groups["analytics"], {(topics["orders"], p): 300 + 40 * p for p in range(12)}),
                           (groups["audit"], {(topics["customers"], p): 100 for p in range(1)}),
                           (groups["ledger"], {(topics["ledger"], 0): 1, (topics["ledger"], 1): 1})):
        client = GroupClient(engine, group)
        try:
            assert set(client.commit(offsets).values()) == {0}
        finally:
            client.close()
    return groups, consumer


@pytest.fixture(scope="module")
def shop(console_server, browser, tmp_path_factory):
    # Without the engine's admin interface, as Apache Kafka: the console registers no token for it.
    engine = EngineProcess(tmp_path_factory.mktemp("shop") / "engine", brokers=3, admin=False,
                           configs={**STOPPABLE_ENGINE_CONFIGS, "group.initial.rebalance.delay.ms": "0"}).start()
    consumer = open_producer = None
    cluster_id = None
    try:
        admin = AdminClient({"bootstrap.servers": engine.bootstrap})
        topics = {"orders": "shop-orders", "payments": "shop-payments", "events": "shop-events",
                  "customers": "shop-customers", "ledger": "shop-ledger"}
        specs = [NewTopic(topics["orders"], 12, 2), NewTopic(topics["payments"], 3, 2), NewTopic(topics["events"], 2, 1),
                 NewTopic(topics["customers"], 3, 2, config={"cleanup.policy": "compact"}),
                 NewTopic(topics["ledger"], 2, 2)]
        for future in admin.create_topics(specs).values():
            future.result(30)
        _fill(engine.bootstrap, topics)
        open_producer = open_transaction(engine.bootstrap, "ledger-writer-open", [(topics["ledger"], 1, b'{"entry": "pending"}')])
        groups, consumer = _groups(engine, topics)
        with open_gateway(ConnectionSettings(bootstrap_servers=engine.bootstrap)) as gw:
            gw.quotas.alter((("client-id", "reporting"),), set_values={"producer_byte_rate": 1048576})
            gw.quotas.alter((("user", None),), set_values={"controller_mutation_rate": 50})
        out = _manage(console_server.env, "cluster_add", "shop", engine.bootstrap)
        cluster_id = int(re.search(r"\(id (\d+)\)", out).group(1))
        _analytics_results(console_server, cluster_id)
        _register_schema(console_server, browser)
        yield Shop(path=f"/clusters/{cluster_id}/", cluster_id=cluster_id, engine=engine, topics=topics, groups=groups)
    finally:
        if consumer is not None:
            consumer.close()
        del open_producer
        if cluster_id is not None:     # the other tests find one cluster again
            _manage(console_server.env, "shell", "-c",
                    f"from console.clusters.models import Cluster; Cluster.objects.filter(pk={cluster_id}).delete()")
        engine.kill()


def _analytics_results(console_server, cluster_id: int) -> None:
    """billing's analytics as a finished run leaves them, and that run's row, finished 3 min ago
    (the jobs are tested in tests/console/analytics). The figures agree with each other: the
    group's lag is the sum of its partitions' at each bucket, its status is its worst
    partition's, and its status, catch-up and time lag rows carry the newest bucket's."""
    lake_dir = console_server.lake
    buckets = [NOW - dt.timedelta(minutes=4 + 5 * (23 - i)) for i in range(24)]     # read by the run
    partition_lag = {(i, p): 150 + 4 * i + p for i in range(24) for p in range(3)}
    total = [sum(partition_lag[i, p] for p in range(3)) for i in range(24)]
    write_result(lake_dir, "group_lag_5m", cluster_id,
                 [{L.GROUP: "billing", L.BUCKET: t, L.LAG: total[i]} for i, t in enumerate(buckets)])
    write_result(lake_dir, "partition_lag_5m", cluster_id,
                 [{L.GROUP: "billing", L.TOPIC: "shop-orders", L.PARTITION: p, L.BUCKET: t, L.LAG: partition_lag[i, p],
                   L.COMMITTED_OFFSET: 400 + 10 * i} for i, t in enumerate(buckets) for p in range(3)])
    write_result(lake_dir, "consumption_5m", cluster_id,
                 [{L.GROUP: "billing", L.BUCKET: t, rates.RATE: 18.5} for t in buckets])
    newest = len(buckets) - 1
    write_result(lake_dir, "partition_status", cluster_id,
                 [{L.GROUP: "billing", L.TOPIC: "shop-orders", L.PARTITION: p, lag.STATUS: "WARN", lag.SEVERITY: 1,
                   lag.REASON: f"lag grew at every snapshot, from {partition_lag[0, p]} to {partition_lag[newest, p]}",
                   L.LAG: partition_lag[newest, p]} for p in range(3)])
    write_result(lake_dir, "group_status", cluster_id,
                 [{L.GROUP: "billing", lag.STATUS: "WARN", lag.SEVERITY: 1, L.LAG: total[-1],
                   lag.REASON: "shop-orders-2: lag grew at every snapshot, from 152 to 244"}])
    committed = 400 + 10 * newest            # behind by its lag, produced at 20.9/s over 3 partitions
    write_result(lake_dir, "time_lag", cluster_id,
                 [{L.GROUP: "billing", L.TOPIC: "shop-orders", L.PARTITION: p, L.COMMITTED_OFFSET: committed,
                   L.LOG_END_OFFSET: committed + partition_lag[newest, p],
                   lag.TIME_LAG_SECONDS: round(partition_lag[newest, p] / (20.9 / 3), 1)} for p in range(3)])
    write_result(lake_dir, "catch_up", cluster_id,
                 [{L.GROUP: "billing", L.LAG: total[-1], L.MEMBERS: 1, rates.CONSUME_RATE: 18.5,
                   rates.PRODUCE_RATE: 20.9, rates.CATCH_UP_SECONDS: None}])
    record_finished_run(console_server.env, cluster_id, minutes_ago=3)


def _register_schema(console_server, browser) -> None:
    context = browser.new_context(base_url=console_server.url)
    try:
        page = context.new_page()
        page.goto("/login/")
        page.fill("input[name=username]", "operator")
        page.fill("input[name=password]", PASSWORDS["operator"])
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/login/" not in url)
        page.goto("/schemas/")
        if page.locator("#schemas td", has_text="shop-payments-value").count() == 0:
            page.fill("input[name=schema_id]", str(SCHEMA_ID))
            page.fill("input[name=subject]", "shop-payments-value")
            page.fill("textarea[name=schema]", PAYMENT_SCHEMA)
            page.click("form.stacked button[type=submit]")
            expect(page.locator("#schemas")).to_contain_text("shop-payments-value")
    finally:
        context.close()


def no_dialogs(page) -> list[str]:
    seen: list[str] = []
    page.on("dialog", lambda dialog: (seen.append(dialog.message), dialog.dismiss()))
    return seen


def form_error(page) -> str:
    return page.locator(".form-errors p.error").inner_text()


def side_by_side(page, *selectors: str) -> None:
    """The buttons (and links) stand in one row, left to right, none touching the next."""
    boxes = [page.locator(selector).bounding_box() for selector in selectors]
    assert len({round(box["y"] + box["height"] / 2) for box in boxes}) == 1, boxes
    assert all(left["x"] + left["width"] < right["x"] for left, right in zip(boxes, boxes[1:])), boxes



# --- forms and errors --------------------------------------------------------------------------

def test_the_preview_refuses_what_the_cluster_refuses_in_kafkas_words(login, shop, shoot):
    operator = login("operator", viewport=DESKTOP)
    dialogs = no_dialogs(operator)
    operator.goto(shop.path + "topics/shop-orders/configs")
    operator.fill("#configs-filter", "retention")
    # retention.ms and .bytes, delete.retention.ms, tiered storage's local.retention.ms and .bytes
    expect(operator.locator("#configs tbody tr:visible")).to_have_count(5)
    expect(operator.locator('[data-filter-count="configs"]')).to_have_text(re.compile(r"^5 of \d+ shown$"))
    operator.locator('#configs tr[data-config="retention.ms"] [data-admin-action="edit-config"]').click()
    operator.fill("input[name=value]", "-5")
    operator.click('[data-admin-action="preview-config"]')
    assert form_error(operator) == ("The cluster refused the change to topic shop-orders with INVALID_CONFIG (40): "
                                    "Invalid value -5 for configuration retention.ms: Value must be at least -1.")
    expect(operator.locator('[data-admin-action="save-config"]')).to_have_count(0)   # no Save for a refused value
    shoot(operator, "form-config-refused")
    operator.fill("input[name=value]", "3d")
    operator.click('[data-admin-action="preview-config"]')
    expect(operator.locator("#config-diff p:first-of-type ins")).to_have_text("259200000")
    side_by_side(operator, '[data-admin-action="save-config"]', '[data-admin-action="preview-config"]',
                 "#config-actions a")
    expect(operator.locator("input[name=reset]")).to_have_count(0)      # retention.ms is no override yet
    operator.click('[data-admin-action="save-config"]')
    expect(operator.locator(".messages")).to_contain_text("retention.ms of shop-orders set to 259200000.")

    operator.goto(shop.path + "topics/create")
    operator.fill("input[name=name]", "shop-returns")
    operator.fill("input[name=partitions]", "6")
    operator.fill("textarea[name=configs]", "cleanup.policy=compact,delete,bogus")
    operator.click('[data-admin-action="preview-topic"]')
    assert form_error(operator) == ("The cluster refused creating topic shop-returns with INVALID_CONFIG (40): "
                                    "Invalid value bogus for configuration cleanup.policy: String must be one of: "
                                    "compact, delete.")
    operator.fill("textarea[name=configs]", "cleanup.policy=compact,delete\nretention.ms=14d")
    operator.click('[data-admin-action="preview-topic"]')
    expect(operator.locator("#create-preview")).to_contain_text("shop-returns with 6 partitions")
    side_by_side(operator, '[data-admin-action="create-topic"]', '[data-admin-action="preview-topic"]')
    shoot(operator, "form-topic-create-preview")
    operator.click('[data-admin-action="create-topic"]')
    expect(operator.locator("#topic-tabs a[aria-current=page]")).to_have_text("Overview")
    expect(operator.locator(".messages")).to_contain_text("Topic shop-returns created.")
    assert dialogs == []


def test_refusals_read_as_sentences_on_the_page_and_in_the_audit_log(login, shop, shoot):
    operator = login("operator", viewport=DESKTOP)
    operator.goto(shop.path + "topics/shop-customers/delete-records")
    operator.fill("input[name=confirmation]", "shop-customers")
    operator.click("#delete-records button[type=submit]")
    refusal = form_error(operator)
    assert refusal == ("The cluster refused deleting records of shop-customers-0, shop-customers-1, shop-customers-2 "
                       "with POLICY_VIOLATION (44): the request breaks a policy of the cluster. Kafka deletes records "
                       "only from a topic whose cleanup.policy includes delete; a compact-only topic keeps them until "
                       "compaction removes them.")
    shoot(operator, "form-delete-records-refused")

    operator.goto(shop.path + "quotas/set?ip=10.0.0.1&key=connection_creation_rate&value=3000000000")
    quota_refusal = form_error(operator)
    assert quota_refusal.startswith("The cluster refused it with INVALID_REQUEST (42):")
    assert "malformed" not in quota_refusal
    enforced = {row.get_attribute("data-key"): row.locator("td[data-enforced]").get_attribute("data-enforced")
                for row in operator.locator("#quota-keys tbody tr").all()}
    assert enforced == {"producer_byte_rate": "true", "consumer_byte_rate": "true", "request_percentage": "true",
                        "controller_mutation_rate": "true", "connection_creation_rate": "true"}

    admin = login("admin", viewport=DESKTOP)
    admin.goto("/audit/?action=topic.delete_records&target=shop-customers")
    expect(admin.locator("#audit tbody tr")).to_have_count(1)
    expect(admin.locator("#audit td.details")).to_have_text(
        "Delete every record of every partition of shop-customers. Refused: " + refusal)


def test_deleting_offsets_and_a_group_asks_once_with_the_typed_id(login, shop):
    operator = login("operator", viewport=DESKTOP)
    dialogs = no_dialogs(operator)
    operator.goto(shop.path + "groups/audit/delete-offsets?topic=shop-customers")
    button = operator.locator("#delete-offsets button[type=submit]")
    expect(button).to_be_disabled()
    operator.fill("input[name=confirmation]", "audi")
    expect(button).to_be_disabled()
    operator.fill("input[name=confirmation]", "audit")
    button.click()
    expect(operator.locator(".messages")).to_contain_text("Committed offsets of 1 partition of shop-customers deleted.")
    operator.goto(shop.path + "groups/audit/delete")
    operator.fill("input[name=confirmation]", "audit")
    operator.click("#delete-group button[type=submit]")
    expect(operator.locator(".messages")).to_contain_text("Group audit deleted.")
    assert dialogs == []                       # the typed id was the one confirmation


def test_pickers_and_the_key_ordering_warning(login, shop, shoot):
    operator = login("operator", viewport=DESKTOP)
    operator.goto(shop.path + "groups/analytics/")
    form = operator.locator("#reset-offsets")
    form.locator("select[name=scope]").select_option("topic")
    topic = form.locator("input[name=topic]")
    expect(topic).to_have_attribute("list", "reset-topics")
    assert operator.locator("#reset-topics option").evaluate_all("os => os.map(o => o.value)") == ["shop-orders"]
    form.locator("select[name=target]").select_option("datetime")
    picker = form.locator("input[name=datetime]")
    expect(picker).to_have_attribute("type", "datetime-local")
    topic.fill("shop-orders")
    picker.fill("2026-01-01T00:00")
    form.locator('[data-admin-action="reset-preview"]').click()
    expect(operator.locator("#reset-preview tbody tr")).to_have_count(12)
    zone = operator.evaluate("new URL(location.href).searchParams.get('zone')")
    assert re.fullmatch(r"[+-]\d\d:\d\d", zone)                 # the browser's offset went with the picker's time

    operator.goto(shop.path + "topics/shop-orders/partitions")
    operator.fill("input[name=total_partitions]", "16")
    operator.click('[data-admin-action="preview-add-partitions"]')
    expect(operator.locator("#key-ordering-warning")).to_contain_text("shop-orders holds keyed records")
    expect(operator.locator('[data-admin-action="confirm-add-partitions"]')).to_have_text("Add 4 partitions")
    side_by_side(operator, '[data-admin-action="confirm-add-partitions"]',
                 '[data-admin-action="preview-add-partitions"]')
    shoot(operator, "form-add-partitions-keyed")

    operator.goto(shop.path + "reassignments/")
    boxes = operator.locator("#generate-form input[name=brokers]")
    assert boxes.evaluate_all("bs => bs.map(b => b.type + ':' + b.value)") == ["checkbox:0", "checkbox:1", "checkbox:2"]
    operator.fill("#generate-form input[name=name]", "empty broker 2")
    operator.select_option("#generate-form select[name=scenario]", "decommission")
    operator.check('#generate-form input[name=brokers][value="2"]')
    operator.click('[data-admin-action="generate"]')
    expect(operator.locator("#moves tbody tr")).not_to_have_count(0)
    shop.job_path = operator.url.split(shop.path, 1)[1]


# --- layout and pages --------------------------------------------------------------------------

def test_the_topic_page_has_tabs(login, shop):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(shop.path + "topics/shop-orders/")
    tabs = viewer.locator("#topic-tabs a")
    assert tabs.all_inner_texts() == ["Overview", "Messages", "Consumers", "Configs", "Analytics"]
    for name, shows in (("Messages", "#messages-nav"), ("Consumers", '#groups tr[data-group="billing"]'),
                        ("Configs", '#configs tr[data-config="cleanup.policy"]'), ("Analytics", "#analytics-live"),
                        ("Overview", "#partitions")):
        viewer.locator("#topic-tabs a", has_text=name).click()
        expect(viewer.locator("#topic-tabs a[aria-current=page]")).to_have_text(name)
        expect(viewer.locator(shows).first).to_be_visible()
    expect(viewer.locator('[data-admin-action]')).to_have_count(0)


def test_broker_configs_are_filtered_and_edited_after_the_clusters_check(login, shop, shoot):
    operator = login("operator", viewport=DESKTOP)
    operator.goto(shop.path + "brokers/1/")
    # A config set in server.properties: its source and the read-only tag on one line, the tag unbroken.
    static = operator.locator('#broker-configs tr[data-config="broker.id"]')
    expect(static.locator("td.source .tag")).to_have_text("read-only")
    assert static.locator("td.source .tag").evaluate("t => t.getClientRects().length") == 1
    assert static.locator("td.source").bounding_box()["height"] < 35          # one line, as its neighbours
    rows = operator.locator("#broker-configs tbody tr:visible")
    everything = rows.count()
    operator.select_option("#broker-configs-kind", "dynamic")
    assert 0 < rows.count() < everything
    operator.fill("#broker-configs-filter", "segment.delete")
    expect(rows).to_have_count(1)
    rows.first.locator('[data-admin-action="edit-broker-config"]').click()
    operator.fill("input[name=value]", "abc")
    operator.click('[data-admin-action="preview-broker-config"]')
    expect(operator.locator("#broker-config-edit")).to_contain_text("is not a duration")
    operator.fill("input[name=value]", "2min")
    operator.click('[data-admin-action="preview-broker-config"]')
    expect(operator.locator("#config-diff ins")).to_contain_text("120000")
    side_by_side(operator, '[data-admin-action="save-broker-config"]', '[data-admin-action="preview-broker-config"]')
    expect(operator.locator("input[name=reset]")).to_have_count(0)      # Kafka's default: no override to remove
    shoot(operator, "form-broker-config-diff")
    operator.click('[data-admin-action="save-broker-config"]')
    expect(operator.locator(".messages")).to_contain_text("log.segment.delete.delay.ms of broker 1 set to 120000.")
    row = operator.locator('#broker-configs tr[data-config="log.segment.delete.delay.ms"]')
    expect(row.locator("td.source")).to_contain_text("this broker")
    expect(row.locator("td.value")).to_have_text("2 min")

    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(shop.path + "brokers/1/")
    expect(viewer.locator('[data-admin-action="edit-broker-config"]')).to_have_count(0)
    assert viewer.goto(shop.path + "brokers/1/configs/log.segment.delete.delay.ms").status == 403


def test_the_overview_says_whether_the_cluster_is_healthy_and_stays_live(login, shop):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(shop.path)
    expect(viewer.locator("#overview-live")).to_have_attribute("data-live", "connected")
    expect(viewer.locator("#ov-controller a")).to_have_text(re.compile(r"^broker \d$"))
    expect(viewer.locator("#ov-lagging a")).to_have_text(re.compile(r"^[1-9]"))
    expect(viewer.locator("#ov-disk")).to_have_text(re.compile(r"^\d[\d.]* (KiB|MiB)"))
    expect(viewer.locator('#ov-lagging-groups tr[data-group="analytics"]')).to_be_visible()
    versions = viewer.locator("#ov-brokers td.version").all_inner_texts()
    assert len(versions) == 3 and all(re.fullmatch(r"\d+\.\d+", v) for v in versions), versions
    produce_confluent(shop.engine.bootstrap, shop.topics["events"], [{"value": b"e%d" % i} for i in range(3000)])
    # Measured between two background collections, pushed without a reload.
    expect(viewer.locator("#ov-records-in")).to_have_text(re.compile(r"^[1-9][\d,.]*(\.\d+)?/s$"), timeout=SLOW)
    expect(viewer.locator("#ov-health-age time[data-ago]")).to_have_count(1)


def test_the_brokers_table_counts_instead_of_listing_partitions(login, shop):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(shop.path + "brokers/")
    table = viewer.locator("#brokers-data table.data")
    expect(table).not_to_contain_text("__consumer_offsets")
    link = table.locator('tr[data-broker="0"] a[data-topics]')
    expect(link).to_have_text(re.compile(r"^\d+ topics?$"))
    link.click()
    expect(viewer.locator("#broker-partitions")).to_contain_text("shop-orders")


def on_screen(page, selector: str) -> bool:
    """The element is drawn and ends within the phone's width (no sideways scrolling to see it)."""
    expect(page.locator(selector)).to_be_visible()
    # A live page may be redrawing its fragment: the box is read again until it is on screen,
    # and one that never is fails after the wait.
    try:
        page.wait_for_function(
            """selector => { const el = document.querySelector(selector); if (!el) return false;
                             const r = el.getBoundingClientRect();
                             return r.width > 0 && r.left >= 0 && r.right <= innerWidth; }""",
            arg=selector, timeout=10_000)
    except PlaywrightTimeoutError:
        return False
    return True


def test_on_a_phone_lag_members_broker_state_and_transactions_need_no_sideways_scrolling(login, shop):
    """A phone shows what an operator opens these pages for: each group's lag on the groups
    list, a member's client id and host, a broker's state on the overview, a log dir's size, a
    group's partitions in its analytics, and whether an open transaction hangs."""
    viewer = login("viewer", viewport=PHONE)
    viewer.goto(shop.path + "groups/")
    billing = '#groups tr[data-group="billing"]'
    assert on_screen(viewer, f"{billing} td[data-lag]") and on_screen(viewer, f"{billing} td:nth-child(3)")
    viewer.goto(shop.path + "groups/billing/")
    member = "#members tbody tr:first-child"
    expect(viewer.locator(member)).to_contain_text("billing-service")
    assert all(on_screen(viewer, f"{member} td:nth-child({n})") for n in (1, 3, 4))   # member id, client id, host
    assert on_screen(viewer, f'#topic-lag tr[data-topic="{shop.topics["orders"]}"] td[data-lag]')     # its lag per topic
    viewer.goto(shop.path)
    assert on_screen(viewer, '#ov-brokers tr[data-broker="2"] td[data-broker-state]')
    expect(viewer.locator('#ov-brokers tr[data-broker="2"] td[data-broker-state]')).to_have_text("up")
    viewer.goto(shop.path + "brokers/")
    assert on_screen(viewer, '#brokers-data tr[data-broker="2"] td[data-state]')
    # A broker's log dir: its size beside the path, however long the path.
    viewer.goto(shop.path + "brokers/1/")
    assert on_screen(viewer, "#broker-log-dirs tbody tr:first-child td:nth-child(3)")
    # A group's analytics: each partition's status, the worst of which is the group's, and how
    # far behind in time each partition's commit is.
    viewer.goto(shop.path + "analytics/groups/billing/")
    expect(viewer.locator("#partition-status tbody tr")).to_have_count(3)
    expect(viewer.locator("#partition-status tbody tr").last).to_contain_text("from 152 to 244")
    expect(viewer.locator("#time-lag tbody tr").last).to_contain_text("35 s")
    assert on_screen(viewer, '#time-lag tbody tr:last-child td[data-label="Time behind"]')
    assert on_screen(viewer, '#partition-status tbody tr:last-child td[data-label="Lag"]')
    # A table with no rows says why within the screen, not under headings wider than it.
    viewer.goto(shop.path + "analytics/")
    expect(viewer.locator("#log-dirs td[colspan]")).to_contain_text("found no log dir")
    assert on_screen(viewer, "#log-dirs td[colspan]") and on_screen(viewer, "#topic-retention td[colspan]")
    # Transactions: each open transaction on a partition a card whose every line, whether it
    # hangs too, is within the screen; each transactional id one line, its start's age beside it.
    viewer.goto(shop.path + "transactions/")
    open_txn = f'#partition-transactions tr[data-partition="{shop.topics["ledger"]}-1"]'
    for label in ("Partition", "Start offset", "Transactional id", "Hanging?"):
        assert on_screen(viewer, f'{open_txn} td[data-label="{label}"]'), label
    expect(viewer.locator(f'{open_txn} td[data-label="Hanging?"]')).to_have_text("no")
    started = viewer.locator('#transactions tr[data-transactional-id="ledger-writer-open"] td.started')
    expect(started.locator("[data-ago]")).not_to_be_empty()
    row_heights = viewer.locator("#transactions tbody tr").evaluate_all(
        "rows => rows.map(r => r.getBoundingClientRect().height)")
    assert len(row_heights) == 5 and max(row_heights) < 40, row_heights


def test_the_audit_log_filters_and_speaks_in_sentences(login, shop):
    # The entry to find: an operator's config change, made here so that the test stands alone.
    operator = login("operator", viewport=DESKTOP)
    operator.goto(shop.path + "topics/shop-payments/configs/retention.ms")
    operator.fill("input[name=value]", "2d")
    operator.click('[data-admin-action="preview-config"]')
    operator.click('[data-admin-action="save-config"]')
    expect(operator.locator(".messages")).to_contain_text("retention.ms of shop-payments set to 172800000.")

    admin = login("admin", viewport=DESKTOP)
    admin.goto("/audit/")
    # Targets (topic names, broker configs, schema subjects, ACL bindings) show one or two lines,
    # the whole of a longer one on hover.
    lines = admin.locator("#audit td.target .clamp-2").evaluate_all(
        """spans => spans.map(s => Math.round(s.getBoundingClientRect().height
                                              / parseFloat(getComputedStyle(s).lineHeight)))""")
    assert lines and max(lines) <= 2, lines
    clamped = admin.locator("#audit td.target .clamp-2").first
    assert clamped.get_attribute("title") == clamped.text_content()
    # An ACL binding's length, put in the newest entry's cell: cut at two lines.
    clamped.evaluate("(s, text) => { s.textContent = text; }",
                     "User:" + "a-long-principal-name-" * 8 + " ALLOW Read on TOPIC orders")
    assert clamped.evaluate("s => s.scrollHeight > s.clientHeight")
    assert round(clamped.bounding_box()["height"] / clamped.evaluate(
        "s => parseFloat(getComputedStyle(s).lineHeight)")) == 2
    # The table fits the screen beside the sentences, however long the actions and targets.
    newest = admin.locator("#audit tbody tr").first
    assert newest.locator("td.action code wbr").count() >= 1          # topic.<wbr>config_set
    newest.locator("td.action code").evaluate("c => { c.textContent = 'topic.elect_preferred_leaders'; }")
    newest.locator("td[data-cluster]").evaluate("td => { td.innerHTML = '— <small>Local schemas</small>'; }")
    newest.locator("td.target .clamp-2").evaluate("s => { s.textContent = 'dc-browser/browser-failing-connector-of-orders'; }")
    newest.locator("td.details").evaluate("(td, text) => { td.textContent = text; }",
                                          "Preferred leader election for orders: every partition moved. " * 6)
    box = admin.locator("#audit").bounding_box()
    assert box["x"] + box["width"] <= DESKTOP["width"], box
    # A time's age sits under the time, which keeps the When column narrow.
    when = admin.locator("#audit tbody tr").first.locator("td").first
    expect(when.locator(".ago time")).not_to_be_empty()
    assert when.locator(".ago").bounding_box()["y"] >= when.locator("time[data-when]").bounding_box()["y"] + 10
    admin.select_option("#audit-filters select[name=actor]", "operator")
    admin.select_option("#audit-filters select[name=action]", "topic.config_set")
    admin.fill("#audit-filters input[name=target]", "shop-payments")
    admin.click("#audit-filters button[type=submit]")
    details = admin.locator("#audit td.details")
    expect(details).to_have_text(
        ["Set retention.ms of shop-payments from 604800000 ms (7 d) to 172800000 ms (2 d)."])
    for text in admin.locator("#audit td.details").all_inner_texts():
        assert "None" not in text and "{" not in text
    admin.fill("#audit-filters input[name=target]", "no-such-target")
    admin.click("#audit-filters button[type=submit]")
    expect(admin.locator("#audit tbody")).to_have_text("No entry matches these filters.")

    # On a phone each entry is a card, its sentence within the screen.
    admin.set_viewport_size(PHONE)
    admin.goto("/audit/")
    sentence = admin.locator('#audit td[data-label="What happened"]').first
    expect(sentence).not_to_be_empty()
    box = sentence.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"], box
    assert admin.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_schemas_in_the_navigation_a_favicon_and_a_navigation_that_folds_on_phones(login, shop):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(shop.path)
    viewer.locator("nav.user-nav a", has_text="Local schemas").click()
    expect(viewer.locator("#schemas")).to_contain_text("shop-payments-value")
    # A long schema stays on one line, cut with an ellipsis; the whole of it is its title.
    schema = viewer.locator("#schemas tr", has_text="shop-payments-value").locator("td.schema-text code")
    assert schema.evaluate("c => c.scrollWidth > c.clientWidth && getComputedStyle(c).textOverflow === 'ellipsis'")
    assert json.loads(schema.get_attribute("title")) == json.loads(PAYMENT_SCHEMA)
    assert schema.bounding_box()["height"] < 30
    icon = viewer.locator("link[rel=icon]").get_attribute("href")
    assert viewer.request.get(icon).status == 200
    assert viewer.request.get("/favicon.ico").headers["content-type"].startswith("image/svg")

    viewer.set_viewport_size(PHONE)
    viewer.goto(shop.path + "topics/")
    brokers = viewer.locator('nav.cluster-nav a', has_text="Brokers")
    expect(brokers).to_be_hidden()
    viewer.click("label.nav-toggle-label")
    expect(brokers).to_be_visible()
    brokers.click()
    expect(viewer.locator("h1")).to_contain_text("Brokers")
    expect(viewer.locator('nav.cluster-nav a', has_text="Topics")).to_be_hidden()     # folded again on a new page
    assert viewer.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


# --- every page, light and dark, desktop and phone -------------------------------------------

# (file name, path: under the cluster's, or absolute when it starts with "/"). Admin forms are
# shot in their first state here; their previews are shot by the tests above that reach them.
PAGES = [
    ("overview", ""), ("brokers", "brokers/"), ("broker", "brokers/1/"),
    ("broker-config-edit", "brokers/1/configs/log.segment.delete.delay.ms"),
    ("topics", "topics/"), ("topic-overview", "topics/shop-orders/"),
    ("topic-messages", "topics/shop-orders/messages/"), ("topic-consumers", "topics/shop-orders/consumers"),
    ("topic-configs", "topics/shop-orders/configs"), ("topic-analytics", "analytics/topics/shop-orders/"),
    ("messages-payments", "topics/shop-payments/messages/"), ("messages-events", "topics/shop-events/messages/"),
    ("messages-ledger", "topics/shop-ledger/messages/"), ("message", "topics/shop-orders/messages/0/0/"),
    ("messages-search", "topics/shop-orders/messages/search"), ("messages-tail", "topics/shop-orders/messages/tail"),
    ("messages-produce", "topics/shop-orders/messages/produce"),
    ("groups", "groups/"), ("group", "groups/billing/"), ("group-lagging", "groups/analytics/"),
    ("group-reset", "groups/analytics/reset?target=earliest&scope=all"),
    ("group-delete-offsets", "groups/analytics/delete-offsets?topic=shop-orders"),
    ("group-delete", "groups/analytics/delete"),
    ("reassignments", "reassignments/"),
    ("analytics", "analytics/"), ("analytics-group", "analytics/groups/billing/"),
    ("transactions", "transactions/"), ("quotas", "quotas/"),
    ("quota-set", "quotas/set?client_id=reporting&key=producer_byte_rate&value=2097152"),
    ("topic-create", "topics/create"), ("topic-config-edit", "topics/shop-orders/configs/retention.ms"),
    ("topic-partitions", "topics/shop-orders/partitions"),
    ("topic-delete-records", "topics/shop-orders/delete-records"), ("topic-delete", "topics/shop-orders/delete"),
    ("audit-log", "/audit/"), ("schemas", "/schemas/"), ("clusters", "/clusters/"), ("cluster-add", "/clusters/add"),
]
# One picture per console page for the docs site (docs/console/img/), from the desktop light pass.
DOC_PAGES = {"overview": "overview", "brokers": "brokers", "broker": "broker", "topics": "topics",
             "topic-overview": "topic", "topic-configs": "topic-configs", "groups": "groups", "group": "group",
             "reassignments": "reassignments", "analytics-group": "analytics", "transactions": "transactions",
             "quotas": "quotas", "audit-log": "audit-log", "schemas": "schemas"}
VIEWS = [("light", DESKTOP), ("dark", DESKTOP), ("light", PHONE), ("dark", PHONE)]


def settle(page) -> None:
    """Charts drawn and live fragments connected before the picture."""
    charts = page.locator("[data-chart]")
    for i in range(charts.count()):
        if charts.nth(i).is_visible():
            expect(charts.nth(i)).to_have_attribute("data-drawn", "true", timeout=SLOW)
    live = page.locator("[data-live-fragment]")
    if live.count():
        expect(live.first).to_have_attribute("data-live", "connected", timeout=SLOW)


def test_every_page_in_light_and_dark_on_desktop_and_phone(browser, console_server, shop):
    """One browser page for all 4 x len(PAGES) pictures: the theme follows the emulated
    system setting, the width the viewport. Every page answers 200, fits a phone's width (wide
    tables scroll in their own box), and asks for nothing that is missing (the favicon too)."""
    (SCREENSHOTS / "docs").mkdir(parents=True, exist_ok=True)
    context = browser.new_context(base_url=console_server.url, viewport=DESKTOP)
    context.set_default_timeout(30_000)
    missing: list[str] = []
    too_wide: list[tuple[str, int]] = []
    page = context.new_page()
    page.on("response", lambda r: r.status == 404 and missing.append(r.url))
    dialogs = no_dialogs(page)
    try:
        for theme, viewport in VIEWS:
            page.emulate_media(color_scheme=theme)
            page.set_viewport_size(viewport)
            page.context.clear_cookies()
            page.goto("/login/")
            expect(page.locator("html")).to_have_attribute("data-theme", theme)
            page.screenshot(path=str(SCREENSHOTS / f"login-{theme}-{viewport['width']}.png"), full_page=True)
            page.fill("input[name=username]", "admin")
            page.fill("input[name=password]", PASSWORDS["admin"])
            page.click("button[type=submit]")
            page.wait_for_url(lambda url: "/login/" not in url)
            pages = PAGES + ([("reassignment", shop.job_path)] if shop.job_path else [])
            for name, path in pages:
                response = page.goto(path if path.startswith("/") else shop.path + path)
                assert response.status == 200, (name, response.status)
                expect(page.locator("html")).to_have_attribute("data-theme", theme)
                settle(page)
                if viewport is PHONE:
                    width = page.evaluate("document.documentElement.scrollWidth")
                    if width > PHONE["width"]:
                        too_wide.append((name, width))
                page.screenshot(path=str(SCREENSHOTS / f"{name}-{theme}-{viewport['width']}.png"), full_page=True)
                if theme == "light" and viewport is DESKTOP and name in DOC_PAGES:
                    page.screenshot(path=str(SCREENSHOTS / "docs" / f"{DOC_PAGES[name]}.png"))
    finally:
        context.close()
    assert too_wide == [] and missing == [] and dialogs == []
