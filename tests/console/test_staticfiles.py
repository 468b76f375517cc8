"""Static files: plotly.js's basic bundle at the plotly package's version, never from a CDN;
after collectstatic, hashed names and gzip copies (tests/browser/test_static_assets.py serves
them for real)."""
from pathlib import Path

from django.core.management import call_command
from django.template import Context, Template

from console.staticfiles import PLOTLY_JS, bundled_plotly_version, package_plotly_version

STATIC = Path(__file__).resolve().parents[2] / "static"


def test_the_bundled_plotly_js_is_the_plotly_packages_version():
    assert bundled_plotly_version() is not None
    assert bundled_plotly_version() == package_plotly_version()


def test_the_console_serves_plotly_js_from_its_own_static_files(viewer_client):
    response = viewer_client.get("/static/" + PLOTLY_JS)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == (STATIC / PLOTLY_JS).read_bytes()


def test_before_collectstatic_pages_use_the_plain_names(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path          # no manifest: tests and runserver
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "console.staticfiles.ConsoleStaticStorage"}}
    assert Template("{% load static %}{% static 'js/charts.js' %}").render(Context()) == "/static/js/charts.js"


def test_collectstatic_writes_hashed_and_gzipped_copies(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "console.staticfiles.ConsoleStaticStorage"}}
    call_command("collectstatic", interactive=False, verbosity=0)
    hashed = [p for p in (tmp_path / "vendor" / "plotly").glob("plotly-basic.min.*.js")]
    assert len(hashed) == 1 and hashed[0].read_bytes() == (STATIC / PLOTLY_JS).read_bytes()
    assert hashed[0].with_name(hashed[0].name + ".gz").is_file()
    assert list((tmp_path / "js").glob("charts.*.js.gz"))


def test_no_template_loads_anything_from_another_host():
    templates = Path(__file__).resolve().parents[2] / "templates"
    for template in templates.rglob("*.html"):
        text = template.read_text()
        assert "//cdn" not in text and 'src="http' not in text and 'href="http' not in text, template
