"""The message viewer as an operator uses it every day, in Chromium, on real data: JSON over
three partitions, Confluent-framed Avro, binary keys and values, a compacted topic and
transactions. Newest first and the order switch, the record's tree with its raw switch and
copy buttons, decoders kept when a record opens, Confluent framing said, binary keys as hex,
search state in the address with marked matches merged by timestamp, exact match limits, a
restarted tail that misses nothing, the produce form, the export's words, and screenshots in
light and dark at 1280 and 390 px."""
from __future__ import annotations

import io
import json
import re
import struct
import threading

import fastavro
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError, expect

from console.messages.deserializers import group_hex, parse_avro_schema
from tests.console.messages.conftest import create_topic, produce_confluent
from tests.support.txn_clients import committed_transaction

SLOW = 60_000   # ms: a bound for a loaded machine, not a performance threshold
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
BASE_TS = 1_767_225_600_000          # 2026-01-01T00:00:00Z
SCHEMA_ID = 4242
ORDER_SCHEMA = json.dumps({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
        {"name": "name", "type": "string"}, {"name": "country", "type": "string"}]}},
    {"name": "items", "type": {"type": "array", "items": "string"}}]})


def cluster_path(page) -> str:
    return re.search(r"/clusters/\d+/", page.url).group(0)


def framed_avro(value: dict) -> bytes:
    out = io.BytesIO()
    out.write(struct.pack(">bI", 0, SCHEMA_ID))
    fastavro.schemaless_writer(out, parse_avro_schema(ORDER_SCHEMA), value)
    return out.getvalue()


@pytest.fixture(scope="module")
def viewer_data(console_server, browser):
    """The topics, written once by real clients; the Avro schema registered through the page."""
    bootstrap = console_server.engine.bootstrap
    topics = {"json": create_topic(bootstrap, "viewer-orders-json", partitions=3),
              "avro": create_topic(bootstrap, "viewer-orders-avro"),
              "binary": create_topic(bootstrap, "viewer-binary"),
              "compacted": create_topic(bootstrap, "viewer-compacted", config={"cleanup.policy": "compact"}),
              "txn": create_topic(bootstrap, "viewer-txn")}
    # Timestamps interleave the partitions: a merged timeline alternates 0, 1, 2.
    produce_confluent(bootstrap, topics["json"], [
        {"partition": i % 3, "key": f"customer-{i:04d}-with-a-long-unbroken-identifier".encode(),
         "value": json.dumps({"id": i, "status": "needle" if i % 10 == 0 else "plain",
                              "customer": {"name": f"n{i}", "country": "NZ"}, "items": ["pen", "ink"]}).encode(),
         "headers": [("trace", f"t{i}".encode())], "timestamp": BASE_TS + i * 1000} for i in range(60)])
    produce_confluent(bootstrap, topics["avro"], [
        {"key": b"order-%d" % i, "value": framed_avro({"id": i, "customer": {"name": "ann", "country": "NZ"},
                                                        "items": ["pen"] * (i + 1)}),
         "timestamp": BASE_TS + i} for i in range(5)])
    produce_confluent(bootstrap, topics["binary"], [
        {"key": bytes([1, i]), "value": bytes(range(i, i + 40)), "timestamp": BASE_TS + i} for i in range(4)])
    produce_confluent(bootstrap, topics["compacted"], [
        {"key": b"k%d" % (i % 3), "value": b'{"v": %d}' % i, "timestamp": BASE_TS + i} for i in range(9)])
    committed_transaction(bootstrap, "viewer-txn-c", [(topics["txn"], 0, b'{"txn": "committed"}')])
    committed_transaction(bootstrap, "viewer-txn-a", [(topics["txn"], 0, b'{"txn": "aborted"}')], commit=False)

    context = browser.new_context(base_url=console_server.url)
    page = context.new_page()
    page.goto("/login/")
    page.fill("input[name=username]", "operator")
    from tests.browser.conftest import PASSWORDS
    page.fill("input[name=password]", PASSWORDS["operator"])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)
    page.goto("/schemas/")
    page.fill("input[name=schema_id]", str(SCHEMA_ID))
    page.fill("input[name=subject]", "orders-value")
    page.fill("textarea[name=schema]", ORDER_SCHEMA)
    page.click("form.stacked button[type=submit]")
    expect(page.locator("#schemas")).to_contain_text("orders-value")
    context.close()
    return topics


def messages_url(page, topic: str, query: str = "") -> str:
    return f"{cluster_path(page)}topics/{topic}/messages/{query}"


def timestamps(rows) -> list[int]:
    return [int(t) for t in rows.evaluate_all("rows => rows.map(r => r.dataset.timestamp)")]


def test_browse_lists_newest_first_from_newest_and_the_switch_flips_the_order(login, viewer_data):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, viewer_data["json"]))
    rows = viewer.locator("#messages tbody tr")
    expect(rows).to_have_count(50)
    newest = timestamps(rows)
    assert newest == sorted(newest, reverse=True) and newest[0] == BASE_TS + 59_000
    assert [int(p) for p in rows.evaluate_all("rs => rs.slice(0, 3).map(r => r.dataset.partition)")] == [2, 1, 0]
    viewer.click("#order-switch")
    expect(rows.first).to_have_attribute("data-timestamp", str(BASE_TS + 10_000))
    assert timestamps(rows) == sorted(newest)
    expect(viewer.locator("#order-switch")).to_contain_text("show newest first")
    # Sizes have units; keys are not broken inside a word.
    expect(rows.first.locator("td.num").last).to_have_text(re.compile(r"^\d+ B$"))
    key = rows.first.locator(".msg-key")
    assert key.evaluate("td => getComputedStyle(td).whiteSpace") == "nowrap"
    lines = key.evaluate("""td => { const text = td.querySelector(".text").firstChild;
                                    const range = document.createRange(); range.selectNodeContents(text);
                                    return new Set([...range.getClientRects()].map(r => r.top)).size; }""")
    assert lines == 1


def test_the_export_says_it_exports_the_whole_topic(login, viewer_data):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, viewer_data["json"], "?count=5"))
    expect(viewer.locator("#export-links")).to_contain_text(
        "Export every record of all 3 partitions (about 60 records), not only this page")
    viewer.goto(messages_url(viewer, viewer_data["json"], "?partition=1&count=5"))
    expect(viewer.locator("#export-links")).to_contain_text("every record of partition 1 (about 20 records)")
    href = viewer.locator("#export-links a").first.get_attribute("href")
    assert "partition=1" in href


def test_a_record_opens_with_its_decoder_as_a_tree_with_raw_switch_and_copy_buttons(login, viewer_data, shoot):
    viewer = login("viewer", viewport=DESKTOP, permissions=["clipboard-read", "clipboard-write"])
    viewer.goto(messages_url(viewer, viewer_data["avro"]))
    viewer.select_option("#browse-form select[name=value_format]", "avro")
    viewer.click("#browse-form button[type=submit]")
    first = viewer.locator("#messages tbody tr").first
    expect(first.locator(".msg-value .fmt:not(.schema-tag)")).to_have_text("avro")
    expect(first.locator(".msg-value .schema-tag")).to_have_text(f"schema {SCHEMA_ID} · orders-value")
    first.locator("td.num a").click()
    assert "value_format=avro" in viewer.url
    expect(viewer.locator("#value-format")).to_have_text("avro")
    tree = viewer.locator("#value-tree")
    expect(tree).to_be_visible()
    expect(tree.locator(".j-key", has_text='"customer"')).to_have_count(1)
    expect(tree.locator(".j-string", has_text='"ann"')).to_have_count(1)
    customer = tree.locator("details.j-node details.j-node").first
    customer.locator("summary").click()                        # collapse
    expect(customer).not_to_have_attribute("open", "")
    expect(customer.locator("summary .j-count")).to_be_visible()
    expect(viewer.locator("#record-value")).to_be_hidden()
    viewer.click("#value-raw-switch")
    expect(viewer.locator("#record-value")).to_be_visible()
    assert json.loads(viewer.locator("#record-value").text_content())["customer"]["name"] == "ann"
    viewer.click("#value-raw-switch")
    expect(tree).to_be_visible()

    viewer.click("button.copy[data-copy=value]")
    expect(viewer.locator("#copied")).to_contain_text("Copied the value")
    assert json.loads(viewer.evaluate("navigator.clipboard.readText()"))["id"] == 4
    viewer.click("button.copy[data-copy=key]")
    expect(viewer.locator("#copied")).to_contain_text("Copied the key")
    assert viewer.evaluate("navigator.clipboard.readText()") == "order-4"
    viewer.click("#copy-record")
    record = json.loads(viewer.evaluate("navigator.clipboard.readText()"))
    assert (record["topic"], record["offset"], record["key"], record["value"]["items"]) == \
        (viewer_data["avro"], 4, "order-4", ["pen"] * 5)
    # This record has no headers: nothing to copy, so no Copy headers button.
    expect(viewer.locator("button.copy[data-copy=headers]")).to_have_count(0)
    assert record["headers"] == []
    shoot(viewer, "message-record")


def test_auto_says_confluent_framing_and_binary_keys_show_as_hex(login, viewer_data):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, viewer_data["avro"], "0/0/?value_format=auto"))
    expect(viewer.locator("#value-note")).to_have_text(
        f"Confluent wire format, schema id {SCHEMA_ID} (orders-value), read as Avro")
    expect(viewer.locator("#value-format")).to_have_text("avro")
    viewer.goto(messages_url(viewer, viewer_data["binary"], "?start=oldest"))
    keys = viewer.locator("#messages tbody .msg-key")
    expect(keys).to_have_count(4)
    expect(keys.first).to_have_text("01 00 hex")
    expect(keys.nth(3)).to_have_text("01 03 hex")
    expect(viewer.locator("#messages tbody .msg-value .fmt").first).to_have_text("hex")


def test_compacted_and_transactional_topics_browse_with_their_marks(login, viewer_data):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, viewer_data["compacted"], "?start=oldest"))
    expect(viewer.locator("#messages tbody tr")).to_have_count(9)
    viewer.goto(messages_url(viewer, viewer_data["txn"]))
    expect(viewer.locator('#messages tr[data-transaction="aborted"] .msg-value')).to_contain_text("aborted")
    expect(viewer.locator('#messages tr[data-control="COMMIT"]')).to_have_count(1)


def test_search_state_lives_in_the_address_matches_are_marked_and_merged_by_time(login, viewer_data):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, viewer_data["json"], "search"))
    viewer.fill("#search-form input[name=text]", "needle")
    viewer.click("#search-start")
    expect(viewer.locator("#stat-state")).to_have_text("finished", timeout=SLOW)
    rows = viewer.locator("#search-results tbody tr")
    expect(rows).to_have_count(6)
    assert timestamps(rows) == [BASE_TS + i * 1000 for i in range(0, 60, 10)]
    assert [int(p) for p in rows.evaluate_all("rs => rs.map(r => r.dataset.partition)")] == [0, 1, 2, 0, 1, 2]
    expect(rows.locator("mark")).to_have_count(6)
    expect(rows.first.locator("mark")).to_have_text("needle")
    assert "text=needle" in viewer.url and "mode=substring" in viewer.url

    shared = viewer.url
    other = login("viewer", viewport=DESKTOP)
    other.goto(shared)                                   # a shared link runs the same search
    expect(other.locator("#search-form input[name=text]")).to_have_value("needle")
    expect(other.locator("#stat-state")).to_have_text("finished", timeout=SLOW)
    expect(other.locator("#search-results tbody tr")).to_have_count(6)
    link = other.locator("#search-results tbody tr").first.locator("td.num a")
    assert "value_format=" in link.get_attribute("href")


def test_a_search_stops_at_exactly_the_matches_asked_for(login, console_server):
    topic = create_topic(console_server.engine.bootstrap, "viewer-many-matches")
    produce_confluent(console_server.engine.bootstrap, topic, [{"value": b"hit %d" % i} for i in range(1200)],
                      **{"linger.ms": 500, "batch.num.messages": 5000})
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, topic, "search?text=hit&max_matches=500"))
    expect(viewer.locator("#stat-state")).to_have_text("stopped (matches limit)", timeout=SLOW)
    expect(viewer.locator("#search-results tbody tr")).to_have_count(500)
    expect(viewer.locator("#stat-matches")).to_have_attribute("data-value", "500")
    viewer.click("#search-continue")
    expect(viewer.locator("#stat-state")).to_have_text("stopped (matches limit)", timeout=SLOW)
    expect(viewer.locator("#search-results tbody tr")).to_have_count(1000)
    offsets = sorted(int(o) for o in viewer.locator("#search-results tbody tr").evaluate_all(
        "rs => rs.map(r => r.dataset.offset)"))
    assert offsets == list(range(1000))


def test_restarting_a_live_tail_misses_no_record_produced_meanwhile(login, console_server):
    topic = create_topic(console_server.engine.bootstrap, "viewer-tail-restart", partitions=2)
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, topic, "tail"))
    expect(viewer.locator("#tail-form")).to_have_attribute("data-tailing", "true", timeout=SLOW)
    produced = threading.Event()

    def produce_slowly():
        for i in range(100):
            produce_confluent(console_server.engine.bootstrap, topic, [{"partition": i % 2, "value": b"live %d" % i}])
        produced.set()
    writer = threading.Thread(target=produce_slowly)
    writer.start()
    restarts = 0
    while not produced.is_set() or restarts < 3:         # restart the tail again and again while records arrive
        viewer.click("#tail-start")
        expect(viewer.locator("#tail-form")).to_have_attribute("data-tailing", "true", timeout=SLOW)
        restarts += 1
    writer.join()
    values = viewer.locator("#tail-results tbody tr[data-offset] .msg-value .text")
    expect(values).to_have_count(100, timeout=SLOW)
    assert sorted(int(v.split()[1]) for v in values.all_text_contents()) == list(range(100))
    expect(viewer.locator("#tail-results tr.tail-restart")).to_have_count(restarts + 1)


def test_the_produce_form_keeps_its_values_and_links_to_the_record(login, viewer_data):
    operator = login("operator", viewport=DESKTOP)
    operator.goto(messages_url(operator, viewer_data["compacted"], "produce"))
    operator.fill("#produce-form textarea[name=key]", "k1")
    operator.fill("#produce-form textarea[name=value]", '{"v": "from the form"}')
    operator.select_option("#produce-form select[name=value_serializer]", "json")
    operator.click("#produce-form button[type=submit]")
    expect(operator.locator("#produced")).to_contain_text("Produced 1 record: partition 0, offset 9")
    expect(operator.locator("#produce-form textarea[name=value]")).to_have_value('{"v": "from the form"}')
    expect(operator.locator("#produce-form textarea[name=key]")).to_have_value("k1")
    operator.click("#produced-link")
    expect(operator.locator("h2")).to_contain_text("Partition 0, offset 9")
    expect(operator.locator("#value-tree .j-string")).to_have_text('"from the form"')


def test_the_produce_form_has_key_and_value_side_by_side_and_stacks_on_a_phone(login, viewer_data):
    operator = login("operator", viewport=DESKTOP)
    operator.goto(messages_url(operator, viewer_data["json"], "produce"))
    key, value = operator.locator("#produce-key").bounding_box(), operator.locator("#produce-value").bounding_box()
    assert key["x"] + key["width"] <= value["x"] and abs(key["y"] - value["y"]) < 2      # side by side
    editor = operator.locator("#produce-form textarea[name=value]").bounding_box()
    assert editor["width"] >= 500 and operator.locator("#produce-form textarea[name=key]").bounding_box()["width"] >= 300
    label = operator.locator("#produce-value label[for=id_value_serializer]").bounding_box()
    select = operator.locator("#produce-value select[name=value_serializer]").bounding_box()
    assert label["y"] + label["height"] <= select["y"] + 1 and abs(label["x"] - select["x"]) < 2   # label above
    expect(operator.get_by_label("Value:", exact=True)).to_have_count(1)    # the editor keeps its (hidden) label
    expect(operator.locator("#produce-value")).to_contain_text("(empty: <topic>-value, TopicNameStrategy)")
    operator.set_viewport_size(PHONE)
    key, value = operator.locator("#produce-key").bounding_box(), operator.locator("#produce-value").bounding_box()
    assert value["y"] >= key["y"] + key["height"] - 1                                    # stacked
    assert operator.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_binary_values_that_start_with_a_zero_byte_read_as_hex_in_byte_pairs(login, viewer_data):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, viewer_data["binary"], "?start=oldest"))
    first = viewer.locator("#messages tbody tr").first
    # 00 01 02 03 04: no schema 16909060 chip and no registry error on the row, whatever the registry says.
    expect(first.locator(".msg-value .text")).to_have_text(re.compile(r"^00 01 02 03 04 05 06 07 08 09 0a 0b"))
    expect(viewer.locator("#messages .schema-tag")).to_have_count(0)
    expect(viewer.locator("#messages .msg-value .bad")).to_have_count(0)
    assert viewer.locator("#registry-note").count() <= 1
    lines = first.locator(".msg-value .text").evaluate(
        "el => { const r = document.createRange(); r.selectNodeContents(el);"
        " return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }")
    assert lines == 2                       # 40 bytes: their first 32, 16 a line, then "…"


def binary_records() -> list[dict]:
    """A short value (one line of hex), one of 40 bytes (two lines, cut), one of 150 bytes (cut
    by the websocket's preview before the page cuts it), and a key longer than a row shows.
    Headers: text, binary (hex in byte pairs), and binary longer than a row shows."""
    return [{"key": b"\x00", "value": bytes([0, 1, 2, 3, 4]), "headers": [("source", b"console")]},
            {"key": bytes([0xCA, 0xFE]), "value": bytes(range(200, 240)), "headers": [("trace", bytes([0xCA, 0xFE, 1]))]},
            {"key": bytes(range(60)), "value": bytes(range(150)),
             "headers": [("source", b"console"), ("blob", bytes(range(40)))]}]


def drawn_rows(page, table: str) -> dict[int, list]:
    """Per offset: the key's and the value's text as the row draws them, whether the value is
    marked as hex, how its lines break (CSS white-space), and whether it is on one line only or
    sticks out of its cell: a long value neither runs on unbroken nor overflows. Then each
    header's tag (hex values marked "hex:"), and the age beside the timestamp ("N s ago")."""
    return {int(row[0]): row[1:] for row in page.locator(f"{table} tbody tr[data-offset]").evaluate_all("""
        rows => rows.map(r => {
            const key = r.querySelector(".msg-key .text"), value = r.querySelector(".msg-value .text");
            const range = document.createRange(); range.selectNodeContents(value);
            const lines = new Set([...range.getClientRects()].map(x => Math.round(x.top))).size;
            const cell = value.closest("td");
            const headers = [...r.querySelectorAll(".msg-headers .tag.header")].map(
                t => (t.querySelector(".hex") ? "hex:" : "") + t.textContent);
            const ago = r.querySelector(".msg-time small.ago time[data-ago]");
            return [r.dataset.offset, key.textContent, value.textContent, value.classList.contains("hex"),
                    getComputedStyle(value).whiteSpace, lines === 1 ? "one line" : "lines",
                    cell.scrollWidth > cell.clientWidth ? "overflows" : "fits", headers,
                    ago && /^(just now|\\d+ (s|min) ago)$/.test(ago.textContent) ? "aged" : "no age"];
        })""")}


def phone_rows(page, table: str) -> list[list]:
    """On a phone, per record row: the labels of its key's and value's cells, and whether each
    cell and the text in it end within the screen; then whether the table's box or the page scrolls sideways."""
    page.set_viewport_size(PHONE)
    try:
        return page.evaluate("""table => {
            const inside = el => { const r = el.getBoundingClientRect();
                                   return r.width > 0 && r.left >= 0 && r.right <= innerWidth; };
            const rows = [...document.querySelectorAll(table + " tbody tr[data-offset]")].map(r => {
                const key = r.querySelector("td.msg-key"), value = r.querySelector("td.msg-value");
                return [key.dataset.label, inside(key), value.dataset.label, inside(value),
                        inside(value.querySelector(".text"))]; });
            const box = document.querySelector(table).closest(".table-scroll");
            const wide = box.scrollWidth > box.clientWidth || document.documentElement.scrollWidth > innerWidth;
            return [rows, wide ? "scrolls" : "fits"];
        }""", table)
    finally:
        page.set_viewport_size(DESKTOP)


CARD_FIRST_LINES = """table => {
    const rows = [...document.querySelectorAll(table + " tbody tr[data-offset]")].map(r => {
        const cells = [...r.querySelectorAll("td[data-label]")], boxes = cells.map(c => c.getBoundingClientRect());
        const top = Math.min(...boxes.map(b => b.top));
        return cells.filter((c, i) => boxes[i].width > 0 && Math.abs(boxes[i].top - top) < 2).map(c => c.dataset.label);
    });
    return rows;
}"""


def card_first_lines(page, table: str) -> list[list[str]]:
    """On a phone, per record row: the labels of the cells on the first line of its card. Read
    once every card's first line holds its partition and offset (a live page may be redrawing)."""
    page.set_viewport_size(PHONE)
    try:
        try:
            page.wait_for_function(f"""table => {{ const rows = ({CARD_FIRST_LINES})(table);
                return rows.length > 0 && rows.every(r => r.includes("Partition") && r.includes("Offset")); }}""",
                                   arg=table, timeout=5000)
        except PlaywrightTimeoutError:
            pass                                    # the assertion below shows what the cards hold
        return page.evaluate(CARD_FIRST_LINES, table)
    finally:
        page.set_viewport_size(DESKTOP)


def test_search_and_tail_rows_show_binary_values_as_the_browse_page_does(login, console_server, shoot):
    """Rows drawn by the scripts (search, tail) group, wrap and cut hex exactly as the rows the
    server draws (browse), and a short value reads as on the record's own page."""
    bootstrap = console_server.engine.bootstrap
    topic = create_topic(bootstrap, "viewer-binary-rows")
    produce_confluent(bootstrap, topic, binary_records())
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, topic, "?start=oldest"))
    browse = drawn_rows(viewer, "#messages")
    drawn = ["pre-line", "lines", "fits"]
    blob = group_hex(bytes(range(40)).hex())[:59] + "…"
    assert browse[0] == ["00", "00 01 02 03 04", True, "pre-line", "one line", "fits", ["source=console"], "aged"]
    assert browse[1] == ["ca fe", group_hex(bytes(range(200, 232)).hex()) + " …", True, *drawn,
                         ["hex:trace=ca fe 01"], "aged"]
    assert browse[2][1:] == [group_hex(bytes(range(32)).hex()) + " …", True, *drawn,
                             ["source=console", "hex:blob=" + blob], "aged"]
    assert browse[2][0] == group_hex(bytes(range(60)).hex())[:79] + "…"
    # A phone shows each record as a card: its key and value within the screen, no sideways scrolling.
    on_phone = [["Key", True, "Value", True, True]] * 3
    assert phone_rows(viewer, "#messages") == [on_phone, "fits"]
    # Partition, offset and size share a card's first line, so a phone shows more records.
    first_line = [["Partition", "Offset", "Size"]] * 3
    assert card_first_lines(viewer, "#messages") == first_line

    viewer.goto(messages_url(viewer, topic, "search"))
    viewer.click("#search-start")
    expect(viewer.locator("#stat-state")).to_have_text("finished", timeout=SLOW)
    expect(viewer.locator("#search-results tbody tr[data-offset]")).to_have_count(3)
    assert drawn_rows(viewer, "#search-results") == browse
    shoot(viewer, "messages-search-binary")

    viewer.goto(messages_url(viewer, topic, "0/0/"))
    assert viewer.locator("#record-value").text_content() == browse[0][1]
    viewer.goto(messages_url(viewer, topic, "0/2/"))
    assert viewer.locator("#record-headers pre").all_text_contents() == [
        "console", group_hex(bytes(range(40)).hex())]                    # hex in byte pairs, 16 a line

    viewer.goto(messages_url(viewer, topic, "tail"))
    expect(viewer.locator("#tail-form")).to_have_attribute("data-tailing", "true", timeout=SLOW)
    produce_confluent(bootstrap, topic, binary_records())                      # offsets 3, 4, 5
    expect(viewer.locator("#tail-results tbody tr[data-offset]")).to_have_count(3, timeout=SLOW)
    tail = drawn_rows(viewer, "#tail-results")
    assert {offset - 3: row for offset, row in tail.items()} == browse
    assert phone_rows(viewer, "#tail-results") == [on_phone, "fits"]
    assert card_first_lines(viewer, "#tail-results") == first_line
    expect(viewer.locator("#tail-rate")).to_have_text(re.compile(r"^[\d,.]+ records?/s$"), timeout=SLOW)
    shoot(viewer, "messages-tail-binary")


def test_the_tail_says_its_rate_in_records_per_second_once_it_has_measured_one(login, console_server, shoot):
    """Until the running tail's first report the rate says it is waiting (no "0/s" that was never
    measured); then "N records/s"; paused, a dash. The tail's reports are held back on their way
    to the page, so the placeholder is seen for certain."""
    bootstrap = console_server.engine.bootstrap
    topic = create_topic(bootstrap, "viewer-tail-rate")
    viewer = login("viewer", viewport=DESKTOP)
    holding = {"stats": True}

    def hold_reports(ws):
        server = ws.connect_to_server()
        server.on_message(lambda message: None if holding["stats"] and '"tail_stats"' in str(message)
                          else ws.send(message))
    viewer.route_web_socket(re.compile(r"/ws/clusters/\d+/topics/[^/]+/messages/$"), hold_reports)
    viewer.goto(messages_url(viewer, topic, "tail"))
    rate = viewer.locator("#tail-rate")
    expect(viewer.locator("#tail-stats dt").nth(1)).to_have_text("Rate")
    expect(viewer.locator("#tail-form")).to_have_attribute("data-tailing", "true", timeout=SLOW)
    produce_confluent(bootstrap, topic, [{"value": b"counted %d" % i} for i in range(20)])
    expect(viewer.locator("#tail-results tbody tr[data-offset]")).to_have_count(20, timeout=SLOW)
    expect(rate).to_have_text("waiting…")                     # records shown, but no rate reported yet
    assert rate.get_attribute("data-value") is None
    shoot(viewer, "messages-tail-waiting")

    holding["stats"] = False
    expect(rate).to_have_text(re.compile(r"^[\d,.]+ records?/s$"), timeout=SLOW)
    assert rate.get_attribute("data-value") is not None
    produce_confluent(bootstrap, topic, [{"value": b"counted %d" % i} for i in range(20, 2000)])
    expect(viewer.locator("#tail-matches")).to_have_text("2,000", timeout=SLOW)
    expect(rate).to_have_text(re.compile(r"^[\d,.]+ records/s$"))
    shoot(viewer, "messages-tail-rate")
    viewer.click("#tail-pause")
    expect(rate).to_have_text("—")
    viewer.click("#tail-pause")
    expect(rate).to_have_text(re.compile(r"^[\d,.]+ records?/s$"), timeout=SLOW)


def test_paging_links_follow_the_table_and_a_record_links_its_neighbours(login, viewer_data):
    viewer = login("viewer", viewport=DESKTOP)
    viewer.goto(messages_url(viewer, viewer_data["json"], "?count=12&partition=1"))
    table = viewer.locator("#messages").bounding_box()
    bottom = viewer.locator("#paging-bottom").bounding_box()
    assert bottom["y"] >= table["y"] + table["height"]
    newest = viewer.locator("#messages tbody tr").first.get_attribute("data-offset")
    viewer.click("#page-prev-bottom")
    expect(viewer.locator("#messages tbody tr").first).not_to_have_attribute("data-offset", newest)

    viewer.goto(messages_url(viewer, viewer_data["avro"], "0/2/?value_format=avro"))
    expect(viewer.locator("#key-size")).to_have_text("7 B")
    expect(viewer.locator("#value-schema")).to_have_text(f"schema {SCHEMA_ID} · orders-value")
    viewer.click("#record-next")
    expect(viewer.locator("h2")).to_contain_text("Partition 0, offset 3")
    assert "value_format=avro" in viewer.url
    viewer.click("#record-prev")
    viewer.click("#record-prev")
    expect(viewer.locator("h2")).to_contain_text("Partition 0, offset 1")


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_screenshots_of_the_viewer(login, viewer_data, shoot, color_scheme, viewport):
    operator = login("operator", viewport=viewport, color_scheme=color_scheme)
    json_topic = viewer_data["json"]
    pages = [("messages-browse", messages_url(operator, json_topic, "?count=12")),
             ("messages-record", messages_url(operator, viewer_data["avro"], "0/2/?value_format=avro")),
             ("messages-search", messages_url(operator, json_topic, "search?text=needle")),
             ("messages-tail", messages_url(operator, json_topic, "tail")),
             ("messages-produce", messages_url(operator, json_topic, "produce")),
             ("messages-binary", messages_url(operator, viewer_data["binary"])),
             ("messages-transactions", messages_url(operator, viewer_data["txn"]))]
    for name, url in pages:
        assert operator.goto(url).status == 200, url
        expect(operator.locator("html")).to_have_attribute("data-theme", color_scheme)
        if name == "messages-search":
            expect(operator.locator("#stat-state")).to_have_text("finished", timeout=SLOW)
        if name == "messages-tail":
            expect(operator.locator("#tail-form")).to_have_attribute("data-tailing", "true", timeout=SLOW)
        # Nothing wider than the screen: wide tables scroll in their own box.
        assert operator.evaluate("document.documentElement.scrollWidth") <= viewport["width"], name
        assert shoot(operator, name).stat().st_size > 1000
