"""Prometheus's own checker on what our endpoints and rules files say (Debian's `prometheus`
package installs /usr/bin/promtool; .ci/run installs it when missing)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        raise RuntimeError("promtool is not installed: apt-get install prometheus (.ci/run does)")
    return path


def check_metrics(exposition: bytes) -> subprocess.CompletedProcess:
    """`promtool check metrics` on an exposition (its lint: names, types, help, units)."""
    return subprocess.run([promtool(), "check", "metrics"], input=exposition, capture_output=True, timeout=60)


def run_rule_tests(test_file: Path) -> subprocess.CompletedProcess:
    return subprocess.run([promtool(), "test", "rules", str(test_file)], capture_output=True, timeout=120,
                          cwd=test_file.parent)


def check_rules(rules_file: Path) -> subprocess.CompletedProcess:
    return subprocess.run([promtool(), "check", "rules", str(rules_file)], capture_output=True, timeout=60)
