"""How static files are stored and named: whitenoise's compressed, hashed storage once
`collectstatic` has run, plain names before.

`make run` runs `collectstatic` first: every file in STATIC_ROOT then has a content-hashed
name (`js/charts.3f2a….js`) and a gzip copy beside it (and a Brotli one when the `brotli`
package is installed), and whitenoise serves those compressed, with `Cache-Control:
max-age=315360000, public, immutable`: a browser asks for a file once per version. Without a manifest in STATIC_ROOT (tests, a fresh checkout under
`runserver`), `{% static %}` gives the plain names, which whitenoise serves from the finders
(WHITENOISE_USE_FINDERS), so nothing has to be collected first.

plotly.js is plotly's "basic" bundle (scatter, bar and pie traces: every chart the console
draws), 1.2 MB instead of the full bundle's 4.8 MB, kept in static/vendor/plotly/ at the
version of the plotly.js inside the Python package (`bundled_plotly_version` and
`package_plotly_version` say which; a test keeps them equal).
"""
from __future__ import annotations

import re
from pathlib import Path

import plotly
from django.contrib.staticfiles.storage import StaticFilesStorage
from whitenoise.storage import CompressedManifestStaticFilesStorage

PLOTLY_JS = "vendor/plotly/plotly-basic.min.js"
_VERSION = re.compile(rb"plotly\.js(?: \([^)]*\))? v(\d+\.\d+\.\d+)")


class ConsoleStaticStorage(CompressedManifestStaticFilesStorage):
    """Hashed names from the manifest when `collectstatic` wrote one, else the plain names."""

    def url(self, name, force=False):
        if not self.hashed_files:
            return StaticFilesStorage.url(self, name)
        return super().url(name, force)


def _header_version(path: Path) -> str | None:
    with open(path, "rb") as file:
        found = _VERSION.search(file.read(400))
    return found.group(1).decode() if found else None


def bundled_plotly_version() -> str | None:
    return _header_version(Path(__file__).resolve().parent.parent / "static" / PLOTLY_JS)


def package_plotly_version() -> str | None:
    return _header_version(Path(plotly.__file__).parent / "package_data" / "plotly.min.js")
