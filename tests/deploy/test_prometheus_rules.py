"""The Prometheus rules file shipped for /metrics users: promtool checks it and runs its unit tests,
and every series it reads is one our endpoints expose."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.support.promtool import check_rules, run_rule_tests

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
CONSOLE_FAMILIES = Path(__file__).resolve().parents[2] / "console" / "metrics" / "exposition.py"
ENGINE_FAMILIES = Path(__file__).resolve().parents[2] / "engine" / "metrics" / "collector.py"


def test_promtool_accepts_the_rules_file():
    result = check_rules(RULES / "alerts.yml")
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()


def test_the_rules_unit_tests_pass():
    result = run_rule_tests(RULES / "alerts_test.yml")
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()


def test_every_series_the_rules_read_is_exposed_by_the_console_or_the_engine():
    exposed = CONSOLE_FAMILIES.read_text() + ENGINE_FAMILIES.read_text()
    rules = yaml.safe_load((RULES / "alerts.yml").read_text())
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    names = {n for e in exprs for n in re.findall(r"\b(kafka_[a-z_]+)\b", e)}
    assert names and [n for n in sorted(names) if not _exposed(n, exposed)] == []


def _exposed(name: str, source: str) -> bool:
    if f'"{name}"' in source:
        return True
    # The engine's ReplicaManager gauges are named in a loop: f"kafka_server_replicamanager_{short}".
    prefix = "kafka_server_replicamanager_"
    return name.startswith(prefix) and f'("{name[len(prefix):]}"' in source and f'f"{prefix}{{short}}"' in source
