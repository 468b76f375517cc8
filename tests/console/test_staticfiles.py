"""plotly.js is served from the installed plotly package, never from a CDN."""
from pathlib import Path

import plotly
from django.core.management import call_command

PACKAGE_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def test_the_console_serves_the_plotly_packages_own_js(viewer_client):
    response = viewer_client.get("/static/vendor/plotly/plotly.min.js")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == PACKAGE_JS.read_bytes()


def test_collectstatic_ships_plotly_js_with_the_other_assets(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path
    call_command("collectstatic", interactive=False, verbosity=0)
    assert (tmp_path / "vendor" / "plotly" / "plotly.min.js").read_bytes() == PACKAGE_JS.read_bytes()
    assert (tmp_path / "js" / "charts.js").is_file()


def test_no_template_loads_anything_from_another_host():
    templates = Path(__file__).resolve().parents[2] / "templates"
    for template in templates.rglob("*.html"):
        text = template.read_text()
        assert "//cdn" not in text and 'src="http' not in text and 'href="http' not in text, template
