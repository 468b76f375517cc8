"""What a console process does once at start, before it serves: import every view (and with
them the selectors, the gateway and kafka-python's protocol classes) and compile every page
template. Django does both lazily on the first request, which then cost ~0.5 s more than the
next ones (benchmarks/console_pages.py measures each page's first request in a fresh process).

Called by console/asgi.py after Django is set up; `runserver` imports the URLconf at start
anyway (its system checks do).
"""
from __future__ import annotations

import gc

from django.conf import settings
from django.template import TemplateDoesNotExist, TemplateSyntaxError
from django.template.loader import get_template
from django.urls import get_resolver


def warm_up() -> None:
    """Then freeze what start-up built (modules, templates, settings: long-lived) out of the
    cyclic GC's walks, as CPython advises: full collections then walk only what requests add."""
    get_resolver().url_patterns          # imports console.urls: every view, selector and gateway module
    for directory in settings.TEMPLATES[0]["DIRS"]:
        for path in sorted(directory.rglob("*.html")):
            try:
                get_template(path.relative_to(directory).as_posix())   # cached by Django's cached loader
            except (TemplateDoesNotExist, TemplateSyntaxError):   # a template only an include can render
                continue
    gc.freeze()
