"""The command line tools run as real commands (`python -m engine TOOL`) against the shared
3-broker engine of the engine tests (tests/engine/conftest.py: group_cluster)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.support.engine_process import ROOT


def run_tool(engine, tool: str, *args: str, stdin: str | None = None, bootstrap: str = "--bootstrap-server",
             timeout: float = 120) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "engine", tool]
    if bootstrap:
        command += [bootstrap, engine.bootstrap]
    return subprocess.run(command + list(args), cwd=ROOT, capture_output=True, text=True, input=stdin,
                          timeout=timeout)


@pytest.fixture
def topic_name(request):
    """A topic name unique to the test."""
    return "t-" + re.sub(r"[^a-zA-Z0-9-]", "-", request.node.name)[:100]
