"""Static files as `make run` serves them (collected first): a page with a chart loads
plotly.js's basic bundle under a hashed name, gzip-compressed, cached for good; a second load
takes it from the browser's cache."""
from __future__ import annotations

import re

from playwright.sync_api import expect


FOREVER = "max-age=315360000, public, immutable"


def test_a_chart_page_loads_compressed_hashed_files_cached_for_good(login, collected_console):
    page = login("viewer", console=collected_console)
    cluster = re.search(r"/clusters/\d+/", page.url).group(0)
    responses = []
    page.on("response", lambda response: responses.append(response))
    page.goto(cluster + "brokers/")
    expect(page.locator("#broker-load-chart")).to_have_attribute("data-drawn", "true")
    [plotly] = [r for r in responses if "/vendor/plotly/" in r.url]
    assert re.search(r"/static/vendor/plotly/plotly-basic\.min\.[0-9a-f]{12}\.js$", plotly.url), plotly.url
    headers = plotly.all_headers()
    assert headers["content-encoding"] == "gzip" and headers["cache-control"] == FOREVER
    assert int(headers["content-length"]) < 0.4 * len(plotly.body())         # sent compressed
    scripts = [r for r in responses if r.url.endswith(".js")]
    assert scripts and all(re.search(r"\.[0-9a-f]{12}\.js$", r.url) for r in scripts), [r.url for r in scripts]
    assert all(r.all_headers()["cache-control"] == FOREVER for r in scripts)

    # Again, in the same browser: plotly.js comes from its cache, the server never sees the request.
    asked = _plotly_requests(collected_console.log_path)
    page.goto(cluster + "topics/")
    page.goto(cluster + "brokers/")
    expect(page.locator("#broker-load-chart")).to_have_attribute("data-drawn", "true")
    assert asked == 1 and _plotly_requests(collected_console.log_path) == 1


def _plotly_requests(log_path) -> int:
    """GETs of plotly.js in daphne's access log."""
    return len(re.findall(r'"GET /static/vendor/plotly/plotly-basic\.min\.[0-9a-f]{12}\.js"', log_path.read_text()))
