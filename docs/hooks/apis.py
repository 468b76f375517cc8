"""MkDocs hook: the page of Kafka APIs the engine serves, generated from the handler registry.

Every handler module registers its version range with `@api` (engine/protocol/registry.py),
and ApiVersions answers from that registry. This hook imports the same registry while the
site builds and writes `engine/apis.md` from it: the key, name and version range of every
API, and each handler module's docstring (its behaviour and gaps). The page exists only in
the built site, so it cannot drift from the code: `make docs` and tests/test_docs.py build it.

`python docs/hooks/apis.py` prints the page, to read it without building the site.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = "engine/apis.md"
# A handler docstring opens with "<Name>: v<lo>-<hi>." or "<Name>: v<n>", optionally "(KIP-...)".
HEADLINE = re.compile(r"^(?P<name>\w+): v(?P<low>\d+)(?:-(?P<high>\d+))?\b.*$")


def api_specs() -> list:
    """The registry's ApiSpecs in key order, with every handler module imported."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import engine.protocol.apis  # noqa: F401 - registers every handler module
    from engine.protocol import registry
    return registry.all_apis()


def module_docstring(spec) -> str:
    module = sys.modules[spec.handler.__module__]
    return ast.get_docstring(ast.parse(Path(module.__file__).read_text())) or ""


def module_path(spec) -> str:
    return Path(sys.modules[spec.handler.__module__].__file__).resolve().relative_to(ROOT).as_posix()


def versions(spec) -> str:
    if spec.min_version == spec.max_version:
        return f"{spec.min_version}"
    return f"{spec.min_version}–{spec.max_version}"


def headline_range(docstring: str) -> tuple[int, int] | None:
    """The version range a handler's docstring states on its first line, if it states one."""
    match = HEADLINE.match(docstring.splitlines()[0] if docstring else "")
    if match is None:
        return None
    low = int(match["low"])
    return low, int(match["high"]) if match["high"] else low


def _escape_html(text: str) -> str:
    """`<topic>` outside code spans would be taken for an HTML tag and vanish from the page."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _markdown(body: str) -> str:
    """Docstring prose as Markdown: a list needs a blank line before it in Markdown, not in a docstring."""
    lines, previous = [], ""
    for line in body.splitlines():
        starts_item = line.startswith("- ")
        in_list = previous.startswith(("- ", "  "))
        if starts_item and previous.strip() and not in_list:
            lines.append("")
        if line.strip() and not line.startswith((" ", "- ")) and in_list:
            lines.append("")
        lines.append(_escape_html(line))
        previous = line
    return "\n".join(lines).strip()


def _split_gaps(body: str) -> tuple[str, str]:
    """The docstring's "Gaps:" paragraph, which the page shows apart."""
    match = re.search(r"^Gaps?:\s*", body, re.M)
    if match is None:
        return body, ""
    return body[:match.start()].rstrip(), body[match.end():].strip()


def api_section(spec) -> str:
    docstring = module_docstring(spec)
    body = "\n".join(docstring.splitlines()[1:]).strip() if headline_range(docstring) else docstring
    body, gaps = _split_gaps(body)
    out = [f"## {spec.key} {spec.name} {{#{spec.name.lower()}}}", "",
           f"Versions **{versions(spec)}** · `{module_path(spec)}`", ""]
    if body:
        out += [_markdown(body), ""]
    if gaps:
        out += ['!!! note "Gaps"', ""] + [f"    {line}" if line else "" for line in _markdown(gaps).splitlines()] + [""]
    return "\n".join(out)


def render() -> str:
    specs = api_specs()
    out = [
        "# Kafka APIs and versions",
        "",
        "The engine serves these Kafka APIs, at these versions. This page is generated from the",
        "handler registry that ApiVersions answers from (`engine/protocol/registry.py`), and each",
        "section is the handler module's own docstring: what it does, and what it does not do yet.",
        "A request of an API or version not listed here closes the connection, as Kafka does;",
        "ApiVersions itself answers an unsupported version with UNSUPPORTED_VERSION and these ranges.",
        "",
        f"{len(specs)} APIs.",
        "",
        "| Key | API | Versions | Handler |",
        "| ---: | --- | --- | --- |",
    ]
    out += [f"| {s.key} | [{s.name}](#{s.name.lower()}) | {versions(s)} | `{module_path(s)}` |" for s in specs]
    out.append("")
    out += [api_section(spec) for spec in specs]
    return "\n".join(out)


def on_files(files, config):
    """Add the generated page to the site's files (MkDocs event)."""
    from mkdocs.structure.files import File
    files.append(File.generated(config, PAGE, content=render()))
    return files


if __name__ == "__main__":
    print(render())
