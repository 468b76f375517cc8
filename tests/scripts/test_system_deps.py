"""`make test` and `make run` on a machine that lacks a system tool: they stop before anything
starts and print the exact command to run. PATH is narrowed to a folder holding only the
tools the check itself uses, so the tools under test are "missing" whatever this machine has."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASICS = ["sh", "awk", "sort", "tr", "sed", "id", "make"]


def narrowed_path(tmp_path: Path, *extra: str) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in [*BASICS, *extra]:
        found = shutil.which(name)
        assert found, f"the check needs {name}"
        (bin_dir / name).symlink_to(found)
    return str(bin_dir)


def run(args: list[str], path: str) -> subprocess.CompletedProcess:
    # SYSTEM_DEPS_INSTALL=0: check only, even when the tests run as root with apt-get (CI).
    env = {**os.environ, "PATH": path, "SYSTEM_DEPS_INSTALL": "0", "PYTHON": sys.executable}
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_missing_tool_is_named_with_the_command_that_installs_it(tmp_path):
    done = run(["sh", "scripts/system_deps.sh", "test", "kcat=kcat", "node=nodejs", "/nonexistent/chromium=chromium",
                "sh=dash"], narrowed_path(tmp_path))
    assert done.returncode == 1
    assert "make test stops here: this machine lacks kcat node /nonexistent/chromium." in done.stdout
    assert "    sudo apt-get install -y chromium kcat nodejs\n" in done.stdout
    assert "dash" not in done.stdout            # sh is there: not asked for


def test_nothing_is_printed_when_everything_is_there(tmp_path):
    done = run(["sh", "scripts/system_deps.sh", "test", "awk=gawk", "ensurepip=python3-venv"],
               narrowed_path(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_make_test_stops_before_the_first_test(tmp_path):
    done = run(["make", "test", "TEST_DEPS=kcat=kcat java=openjdk-17-jre-headless"], narrowed_path(tmp_path))
    assert done.returncode != 0
    assert "sudo apt-get install -y kcat openjdk-17-jre-headless" in done.stdout
    assert "pytest" not in done.stdout + done.stderr and "pip install" not in done.stdout


def test_make_run_says_in_one_sentence_what_is_missing(tmp_path):
    done = run(["make", "run", "RUN_DEPS=java=openjdk-17-jre-headless"], narrowed_path(tmp_path))
    assert done.returncode != 0
    assert "make run stops here: this machine lacks java." in done.stdout
    assert "manage.py" not in done.stdout


def test_the_makefile_lists_every_tool_the_suite_uses():
    makefile = (ROOT / "Makefile").read_text()
    for entry in ("kcat=kcat", "/usr/bin/chromium=chromium", "java=openjdk-17-jre-headless", "npm=npm", "node=nodejs"):
        assert entry in makefile
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("make test")
