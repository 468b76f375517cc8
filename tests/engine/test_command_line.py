"""`python -m engine`: each command's module is imported only when that command runs, and the
whole list is there for --help and for a mistyped command."""
import subprocess
import sys

from engine.__main__ import COMMANDS
from tests.support.engine_process import ROOT

LOADED = ("import sys; from engine.__main__ import build_parser; build_parser({command!r}); "
          "print(sorted(m for m in {modules!r} if m in sys.modules))")


def modules_loaded_by(command: str | None) -> list[str]:
    code = LOADED.format(command=command, modules=sorted(set(COMMANDS.values())))
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_a_tool_imports_its_own_module_and_not_the_engine():
    assert modules_loaded_by("configs") == str(["engine.tools.configs_command"])
    assert modules_loaded_by("log-dirs") == str(["engine.tools.partition_commands"])
    code = "import sys; import engine.__main__ as m; m.build_parser('topics'); print('engine.storage' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


def test_help_and_a_mistyped_command_list_every_command():
    assert modules_loaded_by(None) == str(sorted(set(COMMANDS.values())))
    wrong = subprocess.run([sys.executable, "-m", "engine", "topic"], cwd=ROOT, capture_output=True, text=True)
    assert wrong.returncode == 2 and "invalid choice: 'topic'" in wrong.stderr
    assert all(f"'{name}'" in wrong.stderr for name in COMMANDS)
