"""`python -m engine share-groups --bootstrap-server HOST:PORT ...`, in the shape of Kafka's
`kafka-share-groups.sh` (KIP-932):

    --list [--state STATE ...]
    --describe --group G [--members | --state | --offsets] [--verbose]
    --reset-offsets --group G (--topic T[:P,P] ... | --all-topics)
        (--to-earliest | --to-latest | --to-datetime ISO | --to-offset N) [--execute | --dry-run]
    --delete-offsets --group G --topic T ...
    --delete --group G ...

`--describe` prints the offsets by default (GROUP TOPIC PARTITION START-OFFSET LAG, with
LEADER-EPOCH when --verbose), `--members` GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS
ASSIGNMENT (MEMBER-EPOCH when --verbose), `--state` GROUP COORDINATOR (ID) STATE #MEMBERS
(GROUP-EPOCH ASSIGNMENT-EPOCH when --verbose). `--reset-offsets` is a dry run unless
--execute is given, and refuses a group with members. Everything goes over the Kafka
protocol (engine/tools/share_groups.py), so it works against Apache Kafka 4.1+ too.
"""
from __future__ import annotations

import argparse
import sys

import kafka.errors as Errors

from engine.tools import share_groups as share
from engine.tools.groups_command import parse_datetime
from engine.tools.tables import format_table


def add_parser(commands) -> None:
    parser = commands.add_parser("share-groups", help="list, describe, reset and delete share groups (KIP-932)")
    parser.add_argument("--bootstrap-server", "--bootstrap", dest="bootstrap", required=True,
                        help="brokers to connect to, host:port[,host:port]")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--list", action="store_true", help="list the share groups")
    action.add_argument("--describe", action="store_true", help="describe a share group (--group)")
    action.add_argument("--reset-offsets", action="store_true", help="reset a share group's start offsets")
    action.add_argument("--delete-offsets", action="store_true", help="delete a share group's offsets on topics")
    action.add_argument("--delete", action="store_true", help="delete share groups (--group, repeatable)")
    parser.add_argument("--group", action="append", metavar="GROUP", help="the share group (repeatable for --delete)")
    view = parser.add_mutually_exclusive_group()
    view.add_argument("--offsets", action="store_true", help="--describe: start offsets and lag (the default)")
    view.add_argument("--members", action="store_true", help="--describe: members and their assignments")
    view.add_argument("--state", nargs="*", metavar="STATE",
                      help="--describe: the group's state; --list: only groups in these states")
    parser.add_argument("--verbose", action="store_true", help="--describe: more columns")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--topic", action="append", metavar="TOPIC[:P,P]", help="topic (and partitions)")
    scope.add_argument("--all-topics", action="store_true", help="every topic the group has offsets for")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--to-earliest", action="store_true")
    target.add_argument("--to-latest", action="store_true")
    target.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss", type=parse_datetime)
    target.add_argument("--to-offset", type=int, metavar="N")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--execute", action="store_true", help="apply the reset (default: dry run)")
    mode.add_argument("--dry-run", action="store_true", help="only show the new offsets (the default)")


def run(args: argparse.Namespace) -> int:
    problem = _check(args)
    if problem:
        return _fail(problem, 2)
    try:
        admin = share.connect(args.bootstrap, request_timeout_ms=15000)
    except Errors.KafkaError as exc:
        return _fail(f"cannot connect to {args.bootstrap}: {exc}", 1)
    try:
        if args.list:
            _list(admin, args.state)
        elif args.describe:
            _describe(admin, args)
        elif args.reset_offsets:
            _reset(admin, args)
        elif args.delete_offsets:
            return _delete_offsets(admin, args.group[0], args.topic)
        else:
            return _delete(admin, args.group)
    except (share.ShareGroupCommandError, Errors.KafkaError) as exc:
        return _fail(str(exc), 1)
    finally:
        admin.close()
    return 0


def _check(args) -> str | None:
    if (args.describe or args.reset_offsets or args.delete_offsets) and not args.group:
        return "--group is required"
    if (args.describe or args.reset_offsets or args.delete_offsets) and len(args.group) > 1:
        return "only one --group may be given"
    if args.delete and not args.group:
        return "--delete needs --group"
    if args.reset_offsets and not (args.topic or args.all_topics):
        return "--reset-offsets needs --topic or --all-topics"
    if args.reset_offsets and not (args.to_earliest or args.to_latest or args.to_datetime is not None
                                   or args.to_offset is not None):
        return "--reset-offsets needs one of --to-earliest, --to-latest, --to-datetime, --to-offset"
    if args.delete_offsets and not args.topic:
        return "--delete-offsets needs --topic"
    return None


def _list(admin, states) -> None:
    groups = share.list_groups(admin, states)
    if states is None:
        for group_id, _ in groups:
            print(group_id)
    else:
        print(format_table(("GROUP", "STATE"), groups))


def _describe(admin, args) -> None:
    group_id = args.group[0]
    if args.members:
        group = share.describe(admin, group_id)
        header = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS") + (
            ("MEMBER-EPOCH",) if args.verbose else ()) + ("ASSIGNMENT",)
        rows = [(group_id, m.member_id, m.host, m.client_id, len(m.assignment))
                + ((m.member_epoch,) if args.verbose else ()) + (_assignment(m.assignment),)
                for m in group.members]
        print(format_table(header, rows) if rows else f"\nShare group '{group_id}' has no active members.")
    elif args.state is not None:
        group = share.describe(admin, group_id)
        header = ("GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS") + (
            ("GROUP-EPOCH", "ASSIGNMENT-EPOCH") if args.verbose else ())
        row = (group_id, str(group.coordinator), group.state, len(group.members)) + (
            (group.group_epoch, group.assignment_epoch) if args.verbose else ())
        print(format_table(header, [row]))
    else:
        rows = share.describe_offsets(admin, group_id)
        header = ("GROUP", "TOPIC", "PARTITION") + (("LEADER-EPOCH",) if args.verbose else ()) + (
            "START-OFFSET", "LAG")
        print(format_table(header, [(r.group, r.topic, r.partition) + ((r.leader_epoch,) if args.verbose else ())
                                    + (r.start_offset, r.lag) for r in rows]))


def _assignment(partitions) -> str:
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ",".join(f"{t}:{','.join(map(str, ps))}" for t, ps in sorted(by_topic.items())) or "-"


def _reset(admin, args) -> None:
    group_id = args.group[0]
    partitions = share.resolve_partitions(admin, group_id, None if args.all_topics else args.topic)
    spec = share.ResetSpec(to_earliest=args.to_earliest, to_latest=args.to_latest,
                           to_timestamp=args.to_datetime, to_offset=args.to_offset)
    plan = share.plan_reset(admin, group_id, partitions, spec)
    if args.execute:
        share.execute_reset(admin, group_id, plan)
    print(format_table(("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"),
                       [(group_id, tp.topic, tp.partition, offset) for tp, offset in sorted(plan.items())]))


def _delete_offsets(admin, group_id: str, topics: list[str]) -> int:
    results = share.delete_offsets(admin, group_id, [t.partition(":")[0] for t in topics])
    print(format_table(("TOPIC", "STATUS"), [(t, "Successful" if e is None else f"Error: {e}")
                                             for t, e in sorted(results.items())]))
    return 0 if all(e is None for e in results.values()) else 1


def _delete(admin, group_ids: list[str]) -> int:
    results = share.delete_groups(admin, group_ids)
    done = [g for g in group_ids if results.get(g) is None]
    if done:
        print(f"Deletion of requested share groups ({', '.join(repr(g) for g in done)}) was successful.")
    for group_id in group_ids:
        if results.get(group_id) is not None:
            print(f"Error: Deletion of share group '{group_id}' failed: {results[group_id]}", file=sys.stderr)
    return 0 if len(done) == len(group_ids) else 1


def _fail(message: str, code: int) -> int:
    print(f"Error: {message}", file=sys.stderr)
    return code
