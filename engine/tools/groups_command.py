"""`python -m engine groups --bootstrap HOST:PORT (--list | --describe GROUP | --reset-offsets GROUP ...)`.

Matches kafka-consumer-groups.sh: `--describe` prints GROUP TOPIC PARTITION CURRENT-OFFSET
LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID (from the high watermark; `--isolation
read_committed` counts from the last stable offset instead, as a read_committed consumer); `--reset-offsets` takes --topic T[:P,P] (or
--all-topics) and one of --to-earliest, --to-latest, --to-datetime YYYY-MM-DDTHH:mm:SS[.sss]
[zone], --to-offset N, and is a dry run unless --execute is given. Everything goes over the
Kafka protocol (engine/tools/consumer_groups.py).
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime

import kafka.errors as Errors

from engine.tools import consumer_groups as groups
from engine.tools.tables import format_table

DESCRIBE_HEADER = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
                   "HOST", "CLIENT-ID")
RESET_HEADER = ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")


def add_parser(commands) -> None:
    parser = commands.add_parser("groups", help="list, describe and reset consumer groups")
    parser.add_argument("--bootstrap", required=True, help="brokers to connect to, host:port[,host:port]")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--list", action="store_true", help="list all consumer groups")
    action.add_argument("--describe", metavar="GROUP", help="offsets, log end offsets and lag of a group")
    action.add_argument("--reset-offsets", metavar="GROUP", help="reset a group's committed offsets")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--topic", action="append", metavar="TOPIC[:P,P]", help="topic (and partitions) to reset")
    scope.add_argument("--all-topics", action="store_true", help="every topic the group has offsets for")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--to-earliest", action="store_true")
    target.add_argument("--to-latest", action="store_true")
    target.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss", type=parse_datetime)
    target.add_argument("--to-offset", type=int, metavar="N")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--execute", action="store_true", help="apply the reset (default: dry run)")
    mode.add_argument("--dry-run", action="store_true", help="only show the new offsets (the default)")
    parser.add_argument("--isolation", choices=("read_uncommitted", "read_committed"), default="read_uncommitted",
                        help="--describe: LOG-END-OFFSET and LAG from the high watermark (read_uncommitted, the "
                             "default, as Kafka's tool) or from the last stable offset (read_committed consumers)")


def parse_datetime(text: str) -> int:
    """Kafka's format, with an optional zone (Z or +hh:mm); without one, local time."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"Error parsing timestamp {text!r}: expected YYYY-MM-DDTHH:mm:SS.sss") \
            from None
    return int(moment.timestamp() * 1000)


def run(args: argparse.Namespace) -> int:
    if args.reset_offsets and not (args.topic or args.all_topics):
        return _fail("--reset-offsets needs --topic or --all-topics", 2)
    if args.reset_offsets and not (args.to_earliest or args.to_latest or args.to_datetime is not None
                                   or args.to_offset is not None):
        return _fail("--reset-offsets needs one of --to-earliest, --to-latest, --to-datetime, --to-offset", 2)
    try:
        admin = groups.connect(args.bootstrap, request_timeout_ms=15000)
    except Errors.KafkaError as exc:
        return _fail(f"cannot connect to {args.bootstrap}: {exc}", 1)
    try:
        if args.list:
            for group in groups.list_groups(admin):
                print(group["group_id"])
        elif args.describe:
            _describe(admin, args.describe, read_committed=args.isolation == "read_committed")
        else:
            _reset(admin, args)
    except (groups.GroupCommandError, Errors.KafkaError) as exc:
        return _fail(str(exc), 1)
    finally:
        admin.close()
    return 0


def _describe(admin, group_id: str, *, read_committed: bool) -> None:
    description = groups.describe_group(admin, group_id, read_committed=read_committed)
    if description.members == 0:
        print(f"\nConsumer group '{group_id}' has no active members.")
    rows = [(r.group, r.topic, r.partition, r.current_offset, r.log_end_offset, r.lag, r.consumer_id, r.host,
             r.client_id) for r in description.partitions]
    print()
    print(format_table(DESCRIBE_HEADER, rows))


def _reset(admin, args: argparse.Namespace) -> None:
    spec = groups.ResetSpec(to_earliest=args.to_earliest, to_latest=args.to_latest,
                            to_timestamp=args.to_datetime, to_offset=args.to_offset)
    partitions = groups.resolve_partitions(admin, args.reset_offsets, None if args.all_topics else args.topic)
    plan = groups.plan_reset(admin, args.reset_offsets, partitions, spec)
    if args.execute:
        groups.execute_reset(admin, args.reset_offsets, plan)
    else:
        print("WARN: No action will be performed as the --execute option is missing. "
              "Add --execute to apply the reset.")
    print()
    print(format_table(RESET_HEADER, [(args.reset_offsets, tp.topic, tp.partition, offset)
                                      for tp, offset in sorted(plan.items())]))


def _fail(message: str, code: int) -> int:
    print(f"Error: {message}", file=sys.stderr)
    return code
