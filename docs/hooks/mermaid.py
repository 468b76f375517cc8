"""MkDocs hook: serve mermaid.js from the site itself, so the diagrams draw without a CDN.

Material for MkDocs draws ```mermaid fences with the `mermaid` global when a page already
defines it, and otherwise loads mermaid.js from unpkg.com in the reader's browser. The
pinned mermaid of docs/hooks/package.json (`make docs-js`, which `make docs` runs) is copied
into the site as `assets/javascripts/mermaid.min.js` and loaded on every page, so the site
works offline and asks nothing of a third party.
"""
from __future__ import annotations

from pathlib import Path

MERMAID = Path(__file__).resolve().parent / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
SITE_PATH = "assets/javascripts/mermaid.min.js"


def on_config(config):
    if MERMAID.is_file():
        config.extra_javascript.append(SITE_PATH)
    return config


def on_files(files, config):
    from mkdocs.structure.files import File
    if MERMAID.is_file():
        files.append(File.generated(config, SITE_PATH, abs_src_path=str(MERMAID)))
    return files
