"""A corrupt batch on disk, seen in a real browser: the broker page names the partition the log
cleaner gave up on, and the message browser shows the records it cannot decode as a row of
their own, with their offset, between the readable ones."""
from __future__ import annotations


import pytest
from playwright.sync_api import expect

from tests.browser.conftest import registered_cluster
from tests.support.waiting import wait_until


@pytest.fixture
def poisoned_path(console_server, poisoned_engine):
    with registered_cluster(console_server, "poisoned", poisoned_engine.engine.bootstrap) as path:
        yield poisoned_engine, path


def test_the_broker_page_and_the_browser_show_what_cannot_be_read(login, poisoned_path, shoot):
    planted, path = poisoned_path
    viewer = login("viewer")

    def reported():
        viewer.goto(f"{path}brokers/0/")
        return viewer.locator("#uncleanable-partitions").get_attribute("data-count") == "1"
    wait_until(reported, message="the broker page naming the uncleanable partition")
    expect(viewer.locator("#uncleanable-partitions")).to_contain_text(f"{planted.topic}-0")
    viewer.locator("#uncleanable-partitions").scroll_into_view_if_needed()
    shoot(viewer, "broker-uncleanable")

    answer = viewer.goto(f"{path}topics/{planted.topic}/messages/?partition=0&start=oldest&count=50")
    assert answer.status == 200
    bad = viewer.locator('#messages tr[data-undecodable="true"]')
    expect(bad).to_have_count(1)
    expect(bad).to_have_attribute("data-offset", str(planted.offset + 1))
    expect(bad).to_contain_text("could not be decoded")
    expect(viewer.locator(f'#messages tr[data-offset="{planted.offset}"]')).to_contain_text("fine")
    shoot(viewer, "messages-undecodable")
