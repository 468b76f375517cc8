"""The app graph goes one way: views -> services/selectors -> gateway. Checked on the source,
so an import pointing back up fails here rather than in a review."""
from __future__ import annotations

import ast
from pathlib import Path

CONSOLE = Path(__file__).resolve().parents[2] / "console"


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_clusters_imports_no_app_built_on_it():
    above = ("console.brokers", "console.topics", "console.groups", "console.messages", "console.reassignments",
             "console.analytics", "console.quotas", "console.metrics", "console.alerts")
    offenders = {str(p.relative_to(CONSOLE)): sorted(m for m in imports_of(p) if m.startswith(above))
                 for p in (CONSOLE / "clusters").rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_selectors_only_read():
    """No selector imports a services module (services write)."""
    offenders = {str(p.relative_to(CONSOLE)): sorted(m for m in imports_of(p) if m.endswith("services"))
                 for p in CONSOLE.rglob("selectors.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_shared_modules_below_the_apps_import_no_app():
    apps = ("console.clusters", "console.brokers", "console.topics", "console.groups", "console.messages",
            "console.quotas")
    for module in ("stats.py", "kafka_gateway/client.py", "kafka_gateway/records.py", "kafka_gateway/quotas.py"):
        assert not [m for m in imports_of(CONSOLE / module) if m.startswith(apps)], module


def test_no_api_module_imports_a_view_module():
    offenders = {str(p.relative_to(CONSOLE)): sorted(m for m in imports_of(p) if m.endswith(".views"))
                 for p in CONSOLE.rglob("apis.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_each_app_routes_its_own_json_api():
    """console/urls.py gathers the apps' `api_urlpatterns`; it imports no app's API module itself."""
    tree = ast.parse((CONSOLE / "urls.py").read_text())
    named = {f"{node.module}.{alias.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             for alias in node.names}
    assert sorted(m for m in named | imports_of(CONSOLE / "urls.py") if m.endswith(".apis")) == []
