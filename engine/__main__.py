"""Command line: `python -m engine serve --data-dir DIR --brokers N --host H --port P`
(engine/serve_command.py), operator commands that talk to a running engine (`acls ...`,
`broker ...`, `groups ...`, `share-groups ...`, `transactions ...`), Kafka's command line tools
(`topics`, `configs`, `console-producer`, ...: engine/tools/__init__.py), Kafka Connect workers
(`connect distributed|standalone`), the schema registry (`registry --bootstrap HOST:PORT`), and
`metadata repair` for a stopped engine whose metadata journal is damaged.

Each command lives in its own module, imported only when that command runs: a tool that needs
only a Kafka client starts in a third of the time it would take to import the whole engine.
`--help` and a mistyped command import them all, to list them.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from engine.tools import KAFKA_TOOLS

COMMANDS = {
    "serve": "engine.serve_command",
    "acls": "engine.tools.acls_command",
    "broker": "engine.tools.broker_command",
    "connect": "engine.tools.connect_command",
    "groups": "engine.tools.groups_command",
    "share-groups": "engine.tools.share_groups_command",
    "metadata": "engine.tools.metadata_command",
    "transactions": "engine.tools.transactions_command",
    **KAFKA_TOOLS,
    "registry": "engine.schema_registry.command",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of `command` alone when it is one, else of every command."""
    parser = argparse.ArgumentParser(prog="python -m engine", description="Kafka-compatible streaming engine")
    commands = parser.add_subparsers(dest="command", required=True)
    wanted = [COMMANDS[command]] if command in COMMANDS else COMMANDS.values()
    for module in map(importlib.import_module, dict.fromkeys(wanted)):
        (module.add_parsers if hasattr(module, "add_parsers") else module.add_parser)(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    command = importlib.import_module(COMMANDS[args.command])
    if args.command not in KAFKA_TOOLS:
        return command.run(args)
    try:
        return command.run(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:     # a readable sentence, never a trace (the tools catch Kafka's errors)
        print(f"Error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
