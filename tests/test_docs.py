"""The docs: the site builds strictly, the reference pages name everything the code honours, and
neither the README nor the site tells the history of the work."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.config import BROKER_CONFIGS, TOPIC_CONFIGS, config_value_string
from engine.dynamic_config import is_read_only
import engine.protocol.apis  # noqa: F401 - registers every handler
from engine.protocol import registry

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "hooks"))
import apis as api_page  # noqa: E402 - the hook that generates the Kafka APIs page


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(target)],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return target


def test_the_docs_site_builds_strictly(site):
    for page in ("index.html", "limitations/index.html", "engine/configuration/index.html",
                 "console/settings/index.html", "contributing/index.html"):
        assert (site / page).is_file(), page
    # The diagrams draw with the site's own mermaid.js, not a CDN's (docs/hooks/mermaid.py).
    assert (site / "assets" / "javascripts" / "mermaid.min.js").is_file(), "run make docs-js"
    assert "assets/javascripts/mermaid.min.js" in (site / "architecture" / "index.html").read_text()


def test_the_kafka_apis_page_is_generated_from_the_handler_registry(site):
    page = (site / "engine" / "apis" / "index.html").read_text()
    for spec in registry.all_apis():
        assert f'id="{spec.name.lower()}"' in page, spec.name
        assert f"<td>{api_page.versions(spec)}</td>" in page, spec.name


def test_every_handler_docstring_states_the_versions_it_registers():
    for spec in registry.all_apis():
        stated = api_page.headline_range(api_page.module_docstring(spec))
        assert stated == (spec.min_version, spec.max_version), \
            f"{api_page.module_path(spec)}: its docstring must open with '{spec.name}: v{spec.min_version}-{spec.max_version}.'"


def table_rows(markdown: str, heading: str) -> dict[str, list[str]]:
    """`| `name` | cell | ... |` rows under a `## heading`, until the next `## `."""
    section = markdown.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `([^`]+)` \|(.*)\|\s*$", line)
        if match:
            rows[match[1]] = [cell.strip() for cell in match[2].split("|")]
    return rows


def documented_default(cell: str) -> str:
    return cell.strip("`") if cell.startswith("`") else cell


def code_default(value) -> str:
    if value is None or value == float("inf"):
        return "none"
    return config_value_string(value)


def test_the_configuration_page_names_every_config_with_its_default_and_dynamic_flag():
    page = (DOCS / "engine" / "configuration.md").read_text()
    topics, brokers = table_rows(page, "Topic configs"), table_rows(page, "Broker configs")
    page_name = "docs/engine/configuration.md"
    assert sorted(topics) == sorted(TOPIC_CONFIGS), f"{page_name}: add or remove rows under Topic configs"
    assert sorted(brokers) == sorted(BROKER_CONFIGS), f"{page_name}: add or remove rows under Broker configs"
    for name, definition in TOPIC_CONFIGS.items():
        assert documented_default(topics[name][0]) == code_default(definition.default), f"{page_name}: {name}"
    for name, definition in BROKER_CONFIGS.items():
        default, dynamic = brokers[name][0], brokers[name][1]
        assert documented_default(default) == code_default(definition.default), f"{page_name}: {name}"
        assert dynamic == ("no" if is_read_only(name) else "yes"), f"{page_name}: {name}'s Dynamic column"


def test_the_configuration_page_names_the_listener_security_configs():
    from engine.security.settings import take_security_configs
    names = set(take_security_configs({name: "x" for name in ("sasl.enabled.mechanisms", "ssl.keystore.type",
                                                               "ssl.keystore.location", "ssl.key.password",
                                                               "connections.max.reauth.ms")}))
    page = (DOCS / "engine" / "configuration.md").read_text()
    assert names and names <= set(table_rows(page, "Listener security"))


ENV_HELPERS = {"envbool", "envint", "envfloat", "envstr", "envlist"}


def console_environment() -> dict[str, object]:
    """Every variable the console reads by a literal name, with its literal default (or ...)."""
    found: dict[str, object] = {}
    for path in sorted((ROOT / "console").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                function = node.func
                name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
                owner = ast.unparse(function.value) if isinstance(function, ast.Attribute) else ""
                if name in ENV_HELPERS or (name in ("get", "setdefault", "pop") and owner.endswith("environ")):
                    default = node.args[1] if len(node.args) > 1 else None
                    literal = default.value if isinstance(default, ast.Constant) else ...
                    if found.get(node.args[0].value, ...) is ...:
                        found[node.args[0].value] = literal
            elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("environ") \
                    and isinstance(node.slice, ast.Constant):
                found.setdefault(node.slice.value, ...)
            elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) \
                    and any(ast.unparse(c).endswith("environ") for c in node.comparators):
                found.setdefault(node.left.value, ...)
    return found


def test_the_settings_page_names_every_variable_the_console_reads_with_its_default():
    page = (DOCS / "console" / "settings.md").read_text()
    documented = {}
    for line in page.splitlines():
        match = re.match(r"\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|", line)
        if match:
            documented[match[1]] = documented_default(match[2].strip())
    read = console_environment()
    assert "SECRET_KEY" in read and "TOPICS_PER_PAGE" in read
    missing = sorted(set(read) - set(documented))
    assert not missing, f"docs/console/settings.md does not list {missing}: add a row for each"
    own = table_rows(page, "Set by the console itself")   # what the console sets has no default to check
    for name, default in read.items():
        if default is ... or default is None or name in own:
            continue
        assert documented[name] in expected_cells(default), f"docs/console/settings.md: {name}'s default"


def expected_cells(default) -> set[str]:
    if isinstance(default, bool):
        return {"true" if default else "false"}
    if default == "":
        return {"empty", "none"}
    return {str(default)}


def test_every_engine_command_has_its_page():
    from engine.__main__ import build_parser
    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    text = "\n".join(p.read_text() for p in (DOCS / "engine").rglob("*.md") if "node_modules" not in p.parts)
    for command in commands:
        assert f"python -m engine {command}" in text, f"no page under docs/engine/ shows `python -m engine {command}`"


def markdown_files():
    return [ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "node_modules" not in p.parts)]


def test_the_readme_is_short_and_its_links_and_images_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 160
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert any(t.startswith("docs/img/") for t in local)
    for target in local:
        assert (ROOT / target).exists(), target


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_docs_speak_of_the_product_not_of_the_work(path):
    text = path.read_text()
    # Our own tracker's numbers are short; another project's issue (librdkafka #5456) is cited as such.
    history = re.findall(r"\b(?:session|sprint)s? \d+\b|\bissues? #?\d{1,2}\b|\bend of session\b", text, re.I)
    assert not history, history


def test_the_architecture_map_names_every_package_and_top_level_module():
    page = (DOCS / "architecture" / "index.md").read_text()
    for package in ("engine", "console", "kafka_rules"):
        for path in sorted((ROOT / package).iterdir()):
            if path.is_dir() and (path / "__init__.py").exists():
                assert f"{path.name}/" in page, f"docs/architecture/index.md: add {package}/{path.name}/ to the map"
            elif path.suffix == ".py" and path.name != "__init__.py" and package != "kafka_rules":
                assert path.name in page, f"docs/architecture/index.md: add {package}/{path.name} to the map"


def test_the_api_versions_the_readme_quotes_are_the_registrys():
    quoted = re.findall(r"\b([A-Z][A-Za-z]+) v(\d+)(?:–(\d+))?\b", (ROOT / "README.md").read_text())
    served = {spec.name: (spec.min_version, spec.max_version) for spec in registry.all_apis()}
    assert len(quoted) >= 5
    for name, low, high in quoted:
        assert served[name] == (int(low), int(high or low)), name


def test_every_option_of_serve_is_on_the_command_line_page():
    from engine.__main__ import build_parser
    serve = next(a for a in build_parser()._actions if a.dest == "command").choices["serve"]
    page = (DOCS / "engine" / "cli.md").read_text().split("\n## serve\n", 1)[1].split("\n## ", 1)[0]
    for action in serve._actions:
        for option in action.option_strings:
            if option.startswith("--") and option != "--help":
                assert f"`{option}" in page, f"docs/engine/cli.md: add {option} to the serve options"
