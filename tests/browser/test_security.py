"""Clickjacking, in a real browser: a page on another origin (another port of the same host)
tries to frame the console with the admin logged in, the attack that ran "elect all" as the
admin."""
from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import expect


@pytest.fixture
def attacker_site():
    """`attacker_site(html)` -> the URL of a page on another origin that serves `html`."""
    pages: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            body = pages.get("html", "").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def serve(html: str) -> str:
        pages["html"] = html
        return f"http://127.0.0.1:{server.server_address[1]}/prize"
    yield serve
    server.shutdown()
    server.server_close()


def test_a_page_on_another_origin_cannot_frame_the_console(login, attacker_site):
    admin = login("admin")
    overview = admin.url
    expect(admin.locator('[data-admin-action="elect-all"]')).to_be_visible()   # logged in: the button is there
    bait = attacker_site(f'<!doctype html><title>win a prize</title>'
                         f'<iframe id="bait" src="{overview}" width="900" height="600"></iframe>')
    with admin.expect_response(overview) as framed:
        admin.goto(bait)
    # The console answered the framed request, but with headers that forbid showing it in a
    # frame; Chromium shows its error page in the frame instead.
    assert framed.value.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in framed.value.headers["content-security-policy"]
    frame = next(f for f in admin.frames if f != admin.main_frame)
    frame.wait_for_load_state("load")
    assert re.match(r"chrome-error://|about:blank", frame.url), frame.url
    assert frame.locator('[data-admin-action="elect-all"]').count() == 0
