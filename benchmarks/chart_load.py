"""The first load of a page with a chart, in Chromium with a cold cache, over loopback: from the
start of the navigation to the chart drawn (static/js/charts.js stamps `data-drawn-at` with
`performance.now()`), with the bytes the page transferred.

Two console servers on the same database and cluster, measured in the same run:
- "collected": static files as `make run` serves them (collectstatic first: hashed names,
  gzip copies, cached for good; console/staticfiles.py);
- "not collected": the plain files from the finders, uncompressed (how tests and
  `runserver` serve them).
Each load is a fresh browser context, logged in through the API and with the browser cache
cleared, so every static file is fetched.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def console_server(env: dict, log_path: Path, *, collect: bool):
    """daphne serving the console; with `collect`, after collectstatic into its own STATIC_ROOT."""
    static_root = log_path.with_suffix(".static")
    env = {**env, "STATIC_ROOT": str(static_root), "ALLOWED_HOSTS": "127.0.0.1", "PYTHONUNBUFFERED": "1"}
    if collect:
        subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"], cwd=ROOT,
                       env=env, check=True)
    port = _free_port()
    with open(log_path, "wb") as log:
        daphne = subprocess.Popen([str(Path(sys.executable).parent / "daphne"), "-b", "127.0.0.1", "-p", str(port),
                                   "console.asgi:application"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while f"Listening on TCP address 127.0.0.1:{port}".encode() not in log_path.read_bytes():
            if daphne.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(log_path.read_text()[-2000:])
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        daphne.terminate()
        daphne.wait(30)


def _log_in(context, username: str, password: str) -> None:
    form = context.request.get("/login/").text()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    answer = context.request.post("/login/", form={"csrfmiddlewaretoken": token, "username": username,
                                                   "password": password}, headers={"Referer": "/login/"})
    assert "/login/" not in answer.url, "the benchmark user could not log in"


def load_times(browser, url: str, path: str, chart: str, *, runs: int, username: str, password: str) -> list[dict]:
    """`runs` first loads of `path` (fresh context, cold cache): ms to the chart drawn, bytes."""
    results = []
    for _ in range(runs):
        context = browser.new_context(base_url=url)
        try:
            _log_in(context, username, password)
            page = context.new_page()
            page.context.new_cdp_session(page).send("Network.clearBrowserCache")
            page.goto(path)
            page.wait_for_selector(f"#{chart}[data-drawn-at]", timeout=60_000)
            drawn = int(page.get_attribute(f"#{chart}", "data-drawn-at"))
            timing = page.evaluate("""() => {
                const page = performance.getEntriesByType('navigation')[0];
                const files = performance.getEntriesByType('resource');
                return {html: page.responseEnd,
                        files: Math.max(0, ...files.map(e => e.responseEnd)),
                        bytes: [page, ...files].reduce((sum, e) => sum + (e.transferSize || 0), 0)};
            }""")
            results.append({"ms": drawn, "html_ms": timing["html"], "files_ms": timing["files"],
                            "bytes": timing["bytes"]})
        finally:
            context.close()
    return results


def measure_chart_loads(env: dict, pages: dict[str, tuple[str, str]], *, runs: int, username: str, password: str,
                        scratch: Path) -> dict[str, dict[str, list[dict]]]:
    """{server: {page label: [loads]}} for both servers (see the module docstring)."""
    from playwright.sync_api import sync_playwright

    results: dict[str, dict[str, list[dict]]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            for server, collect in (("collected", True), ("not collected", False)):
                with console_server(env, scratch / f"daphne-{'collected' if collect else 'plain'}.log",
                                    collect=collect) as url:
                    results[server] = {label: load_times(browser, url, path, chart, runs=runs, username=username,
                                                         password=password)
                                       for label, (path, chart) in pages.items()}
        finally:
            browser.close()
    return results


def print_chart_loads(results: dict[str, dict[str, list[dict]]], *, target_s: float) -> None:
    print(f"\nfirst load of a page with a chart, Chromium, cold cache, loopback (target < {target_s:.0f} s)")
    print(f"{'server':<15} {'page':<12} {'first':>8} {'median':>8} {'worst':>8} {'html':>8} {'files':>8} "
          f"{'transferred':>12}")
    for server, by_page in results.items():
        for label, loads in by_page.items():
            ms = [load["ms"] for load in loads]
            middle = sorted(loads, key=lambda load: load["ms"])[len(loads) // 2]
            print(f"{server:<15} {label:<12} {ms[0] / 1000:>7.2f}s {middle['ms'] / 1000:>7.2f}s "
                  f"{max(ms) / 1000:>7.2f}s {middle['html_ms'] / 1000:>7.2f}s {middle['files_ms'] / 1000:>7.2f}s "
                  f"{loads[0]['bytes'] / 1024:>9.0f} KiB  {'ok' if max(ms) / 1000 < target_s else 'SLOW'}", flush=True)
    print("collected: as `make run` serves static files (hashed names, gzip, cached for good); not collected: "
          "the\nsame files uncompressed from the finders. Times from the navigation's start: to the chart drawn\n"
          "(first, median, worst), and, for the median load, to the page's HTML received and to its last\n"
          "static file received.")


if __name__ == "__main__":     # pragma: no cover - run through benchmarks/console_pages.py
    sys.exit("run benchmarks/console_pages.py (it builds the cluster these pages show)")
