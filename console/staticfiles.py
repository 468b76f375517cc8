"""A static files finder for plotly.js, taken from the installed `plotly` package.

The charts use the plotly.min.js that ships inside the Python package, so the JS and the
Python figures always come from the same plotly release, nothing loads from a CDN, and the
repository carries no 4.8 MB copy. It is served as `vendor/plotly/plotly.min.js`: by
whitenoise straight from the finders in development and tests, and from STATIC_ROOT after
`collectstatic` (which `make run` runs).
"""
from __future__ import annotations

from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

PLOTLY_JS = "plotly.min.js"
PREFIX = "vendor/plotly"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.location = Path(plotly.__file__).parent / "package_data"
        self.storage = FileSystemStorage(location=self.location)
        self.storage.prefix = PREFIX

    def check(self, **kwargs):
        if not (self.location / PLOTLY_JS).is_file():
            return [Error(f"The plotly package has no {PLOTLY_JS} at {self.location}: reinstall plotly.",
                          id="console.E001")]
        return []

    def find(self, path: str, find_all: bool = False, **kwargs):
        find_all = find_all or kwargs.get("all", False)
        match = str(self.location / PLOTLY_JS) if path == f"{PREFIX}/{PLOTLY_JS}" else None
        if find_all:
            return [match] if match else []
        return match

    def list(self, ignore_patterns):
        yield PLOTLY_JS, self.storage
