"""Scenarios in a real browser against a real console (daphne + Redis channel layer + engine)."""
from __future__ import annotations

import re

from playwright.sync_api import expect

TOPIC = "browser-orders"
SLOW = 60_000   # ms: a bound for a controlled shutdown or an ISR catching up, not a performance threshold


def cell(page, topic: str, column: str):
    """A cell of the topics table by its data-col: partitions, replication, preferred, size, messages, ..."""
    return page.locator(f'tr[data-topic="{topic}"] td[data-col="{column}"]')


def test_operator_story_create_watch_a_broker_stop_live_elect_and_delete(login, console_server):
    admin = login("admin")
    expect(admin).to_have_url(re.compile(r"/clusters/\d+/$"))
    overview_url = admin.url
    cluster_path = re.search(r"/clusters/\d+/", overview_url).group(0)

    # Create a topic through the form; the list shows its stats.
    admin.goto(cluster_path + "topics/")
    admin.click('[data-admin-action="create-topic"]')
    admin.fill("input[name=name]", TOPIC)
    admin.fill("input[name=partitions]", "6")
    admin.fill("input[name=replication_factor]", "3")
    admin.click('[data-admin-action="preview-topic"]')       # the cluster checks it first
    admin.click('[data-admin-action="create-topic"]')
    expect(admin.locator(".messages")).to_contain_text(f"Topic {TOPIC} created.")
    admin.goto(cluster_path + "topics/")
    expect(cell(admin, TOPIC, "partitions")).to_have_text("6")
    expect(cell(admin, TOPIC, "replication")).to_have_text("3")
    expect(cell(admin, TOPIC, "preferred")).to_have_text("100")

    # The overview, with a marker that a reload would wipe out.
    admin.goto(overview_url)
    expect(admin.locator("#overview-live")).to_have_attribute("data-live", "connected")
    admin.evaluate("window.notReloaded = true")
    expect(admin.locator("#ov-brokers-down")).to_have_text("0")

    # Stop broker 2 from the brokers page, in another tab.
    brokers = admin.context.new_page()
    brokers.goto(cluster_path + "brokers/")
    questions = []
    brokers.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))
    brokers.click('tr[data-broker="2"] [data-admin-action="stop-broker"]', timeout=SLOW)
    expect(brokers.locator('tr[data-broker="2"] [data-admin-action="start-broker"]')).to_be_visible(timeout=SLOW)

    expect(admin.locator("#ov-brokers-down")).to_have_text("1", timeout=SLOW)
    assert questions and questions[0].startswith("Stop broker 2 (127.0.0.1:")
    expect(admin.locator("#ov-brokers-up")).to_have_text("2")
    expect(admin.locator('#ov-brokers tr[data-broker="2"]')).to_have_attribute("data-up", "false")
    expect(admin.locator("#ov-under-replicated")).not_to_have_text("0", timeout=SLOW)
    assert admin.evaluate("window.notReloaded") is True

    # Start it again and wait for the ISRs to fill, still live.
    brokers.click('tr[data-broker="2"] [data-admin-action="start-broker"]', timeout=SLOW)
    expect(admin.locator("#ov-brokers-down")).to_have_text("0", timeout=SLOW)
    expect(admin.locator("#ov-under-replicated")).to_have_text("0", timeout=SLOW)
    assert admin.evaluate("window.notReloaded") is True

    # Leaders moved off broker 2 and stay off (no automatic rebalance): elect from the UI.
    admin.goto(cluster_path + "topics/")
    expect(cell(admin, TOPIC, "preferred")).not_to_have_text("100")
    admin.goto(f"{cluster_path}topics/{TOPIC}/")
    admin.click('[data-admin-action="elect"]', timeout=SLOW)
    admin.goto(cluster_path + "topics/")
    expect(cell(admin, TOPIC, "preferred")).to_have_text("100")

    # Delete its records, every partition: the button waits for the typed name as well.
    admin.goto(f"{cluster_path}topics/{TOPIC}/")
    admin.click('[data-admin-action="delete-records"]')
    expect(admin.locator("#partition-ranges tbody tr")).to_have_count(6)
    button = admin.locator("#delete-records button[type=submit]")
    expect(button).to_be_disabled()
    admin.fill("#delete-records input[name=confirmation]", TOPIC)
    expect(button).to_be_enabled()
    button.click()
    expect(admin.locator("body")).to_contain_text(f"Records of {TOPIC} deleted: partitions now start at 0: 0,")

    # Delete it: the button waits for the typed name.
    admin.goto(f"{cluster_path}topics/{TOPIC}/")
    admin.click('[data-admin-action="delete-topic"]')
    button = admin.locator("#delete-topic button[type=submit]")
    admin.fill("input[name=confirmation]", TOPIC[:-1])
    expect(button).to_be_disabled()
    admin.fill("input[name=confirmation]", TOPIC)
    expect(button).to_be_enabled()
    button.click()
    admin.goto(cluster_path + "topics/")
    expect(admin.locator(f'tr[data-topic="{TOPIC}"]')).to_have_count(0)


def test_a_viewer_sees_no_admin_buttons_and_is_refused_admin_posts(login):
    admin = login("admin")
    cluster_path = re.search(r"/clusters/\d+/", admin.url).group(0)
    viewer = login("viewer")
    for path in ("", "brokers/", "topics/"):
        admin.goto(cluster_path + path)
        viewer.goto(cluster_path + path)
        # The admin's copy of the page proves the selector would find the buttons.
        assert admin.locator("[data-admin-action]").count() > 0
        expect(viewer.locator("[data-admin-action]")).to_have_count(0)

    csrf = next(c["value"] for c in viewer.context.cookies() if c["name"] == "csrftoken")
    response = viewer.request.post(cluster_path + "topics/elect", headers={"X-CSRFToken": csrf,
                                                                          "Referer": viewer.url})
    assert response.status == 403
    assert "needs the operator role" in response.text()


def error_page(page) -> dict:
    """What an error page says: its title, its headings, the text of <main>, and the way back."""
    return {"title": page.title(), "headings": page.locator("main h1").all_inner_texts(),
            "main": page.locator("main").inner_text(), "back": page.locator("#error-back").get_attribute("href")}


def test_a_refusal_says_once_what_was_refused_which_role_it_needs_and_links_back(login, browser, console_server,
                                                                                   shoot):
    viewer = login("viewer")
    cluster_path = re.search(r"/clusters/\d+/", viewer.url).group(0)
    viewer.goto(cluster_path + "topics/")
    assert viewer.goto(cluster_path + "topics/create", referer=viewer.url).status == 403
    page = error_page(viewer)
    assert page["title"] == "Not allowed · Kafka console" and page["headings"] == ["Not allowed"]
    assert page["main"].count("403") == 1 and "Forbidden" not in page["main"]
    assert "This page needs the operator role." in page["main"]
    assert "You are signed in as viewer, with the viewer role; a console admin can give you the operator role." \
        in page["main"]
    assert page["back"].endswith(cluster_path + "topics/")
    shoot(viewer, "error-403")
    viewer.click("#error-back")
    expect(viewer.locator("h1")).to_contain_text("Topics")

    # A form whose CSRF token is gone gets the same page (not Django's "Forbidden (403)"), saying what to do.
    anonymous = browser.new_context(base_url=console_server.url)
    try:
        login_page = anonymous.new_page()
        login_page.goto("/login/")
        login_page.evaluate("document.querySelector('input[name=csrfmiddlewaretoken]').value = 'stale'")
        anonymous.clear_cookies()
        login_page.fill("input[name=username]", "viewer")
        login_page.fill("input[name=password]", "whatever")
        login_page.click("button[type=submit]")
        page = error_page(login_page)
        assert page["title"] == "Not allowed · Kafka console" and page["headings"] == ["Not allowed"]
        assert page["main"].count("403") == 1 and "Reload the form's page and send it again." in page["main"]
        assert "CSRF verification failed" not in login_page.content()
        shoot(login_page, "error-csrf")
    finally:
        anonymous.close()

    assert viewer.goto(cluster_path + "topics/no-such-topic/").status == 404
    page = error_page(viewer)
    assert page["title"] == "Not found · Kafka console" and page["headings"] == ["Not found"]
    assert page["main"].count("404") == 1 and page["back"] == cluster_path
    shoot(viewer, "error-404")


def test_charts_draw_with_plotly_served_by_the_console_itself(login, console_server):
    viewer = login("viewer")
    hosts, refused = set(), []
    viewer.on("request", lambda request: hosts.add(re.match(r"[a-z]+://[^/]+", request.url).group(0)))
    viewer.on("console", lambda message: refused.append(message.text)
              if "Content Security Policy" in message.text else None)
    cluster_path = re.search(r"/clusters/\d+/", viewer.url).group(0)

    viewer.goto(cluster_path + "brokers/")
    chart = viewer.locator("#broker-load-chart")
    expect(chart).to_have_attribute("data-drawn", "true")
    expect(chart.locator("svg.main-svg").first).to_be_visible()
    expect(chart.locator("g.trace.bars")).to_have_count(2)        # replicas and leaders
    assert viewer.evaluate("typeof window.Plotly.newPlot") == "function"
    assert hosts == {console_server.url}
    assert refused == []          # plotly draws under the console's strict CSP
