"""`python -m engine topics`: kafka-topics.sh's options and output, over the Kafka protocol.

  --list [--topic REGEX] [--exclude-internal]
  --describe [--topic REGEX] [--under-replicated-partitions | --unavailable-partitions |
             --under-min-isr-partitions | --at-min-isr-partitions | --topics-with-overrides]
  --create --topic T [--partitions N] [--replication-factor R | --replica-assignment 0:1,1:2]
           [--config name=value ...] [--if-not-exists]
  --alter --topic REGEX --partitions N [--replica-assignment ...] [--if-exists]
  --delete --topic REGEX [--if-exists]

`--topic` is a regular expression matched against whole names (RE2), as Kafka's IncludeList.
Describe prints Kafka's lines: `Topic: T<TAB>TopicId: ..<TAB>PartitionCount: ..<TAB>
ReplicationFactor: ..<TAB>Configs: k=v,...` then one `<TAB>Topic: T<TAB>Partition: P<TAB>Leader: L
<TAB>Replicas: ..<TAB>Isr: ..<TAB>Elr: N/A<TAB>LastKnownElr: N/A` line per partition. Errors
print `Error while executing topic command : <message>` and exit 1.
"""
from __future__ import annotations

import argparse
import base64
import sys
import uuid

import kafka.errors as Errors
import re2
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic

from engine.tools.cli import CommandError, add_tool, admin_client, error_message, usage_error

REPORTS = ("under_replicated_partitions", "unavailable_partitions", "under_min_isr_partitions",
           "at_min_isr_partitions")


def add_parser(commands) -> None:
    p = add_tool(commands, "topics", "create, delete, describe, list or change topics (kafka-topics.sh)",
                 "Create, delete, describe, or change a topic.")
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="REQUIRED: The Kafka server to connect to.")
    p.add_argument("--command-config", metavar="command config property file",
                   help="Property file containing configs to be passed to Admin Client.")
    for action in ("list", "create", "delete", "alter", "describe"):
        p.add_argument(f"--{action}", action="store_true")
    p.add_argument("--topic", help="The topic to create, alter, describe or delete. It also accepts a regular "
                                   "expression, except for --create option.")
    p.add_argument("--topic-id", help="The topic-id to describe.")
    p.add_argument("--config", action="append", default=[], metavar="name=value",
                   help="A topic configuration override for the topic being created.")
    p.add_argument("--partitions", type=int, metavar="# of partitions")
    p.add_argument("--replication-factor", type=int, metavar="replication factor")
    p.add_argument("--replica-assignment", metavar="broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , ...")
    p.add_argument("--under-replicated-partitions", action="store_true")
    p.add_argument("--unavailable-partitions", action="store_true")
    p.add_argument("--under-min-isr-partitions", action="store_true")
    p.add_argument("--at-min-isr-partitions", action="store_true")
    p.add_argument("--topics-with-overrides", action="store_true")
    p.add_argument("--if-exists", action="store_true")
    p.add_argument("--if-not-exists", action="store_true")
    p.add_argument("--exclude-internal", action="store_true")
    p.set_defaults(parser=p)


def run(args: argparse.Namespace) -> int:
    _check(args)
    try:
        admin = admin_client(args.bootstrap_server, args.command_config, client_id="topic-command")
    except (Errors.KafkaError, CommandError) as exc:
        return _fail(exc)
    try:
        if args.create:
            _create(admin, args)
        elif args.alter:
            _alter(admin, args)
        elif args.list:
            names = _topics(admin, args.topic, args.exclude_internal)
            if names:
                print("\n".join(names))
        elif args.describe:
            _describe(admin, args)
        else:
            _delete(admin, args)
    except (Errors.KafkaError, CommandError, ValueError) as exc:
        return _fail(exc)
    finally:
        admin.close()
    return 0


def _fail(exc: Exception) -> int:
    print(f"Error while executing topic command : {error_message(exc)}")
    return 1


def _check(args) -> None:
    parser = args.parser
    actions = [a for a in ("create", "list", "alter", "describe", "delete") if getattr(args, a)]
    if len(actions) != 1:
        usage_error(parser, "Command must include exactly one action: --list, --describe, --create, --alter or "
                            "--delete")
    if not args.bootstrap_server:
        print("--bootstrap-server must be specified", file=sys.stderr)
        sys.exit(1)
    if not args.list and not args.describe and not args.topic:
        usage_error(parser, "Missing required argument \"[topic]\"")
    if args.alter and args.partitions is None:
        usage_error(parser, "Missing required argument \"[partitions]\"")
    if args.alter and args.config:
        usage_error(parser, "Option \"[alter]\" can't be used with option \"[config]\" (To alter topic "
                            "configurations, the kafka-configs tool can be used.)")
    only = {"config": ("create",), "partitions": ("alter", "create"), "replication_factor": ("create",),
            "replica_assignment": ("alter", "create"), "if_exists": ("alter", "delete", "describe"),
            "if_not_exists": ("create",), "exclude_internal": ("list", "describe")}
    for option, allowed in only.items():
        value = getattr(args, option)
        if value not in (None, False, []) and actions[0] not in allowed:
            usage_error(parser, f"Option \"[{option.replace('_', '-')}]\" can't be used with option "
                                f"\"[{actions[0]}]\"")
    if args.create and args.replica_assignment and (args.partitions is not None or args.replication_factor):
        usage_error(parser, "Option \"[replica-assignment]\" can't be used with option \"[partitions]\" or "
                            "\"[replication-factor]\"")
    reports = [r for r in REPORTS if getattr(args, r)]
    if (reports or args.topics_with_overrides) and not args.describe:
        usage_error(parser, "Option \"[under-replicated-partitions]\" can't be used with option \"[%s]\""
                    % actions[0])
    if args.topics_with_overrides and reports:
        usage_error(parser, "Option \"[topics-with-overrides]\" can't be used with option "
                            f"\"[{reports[0].replace('_', '-')}]\"")


def _matcher(pattern: str | None):
    if not pattern:
        return lambda name: True
    try:
        compiled = re2.compile(pattern.strip().strip('"').replace(",", "|"))
    except re2.error as exc:
        raise CommandError(f"Illegal regular expression {pattern!r}: {exc}") from None
    return lambda name: compiled.fullmatch(name) is not None


def _topics(admin, pattern: str | None, exclude_internal: bool) -> list[str]:
    described = admin.describe_topics()
    match = _matcher(pattern)
    return sorted(t["name"] for t in described
                  if match(t["name"]) and not (exclude_internal and (t["is_internal"] or t["name"].startswith("__"))))


def _ensure_found(found: list[str], pattern: str | None, required: bool) -> None:
    if pattern and required and not found:
        raise CommandError(f"Topic '{pattern}' does not exist as expected")


def _replica_assignment(text: str) -> dict[int, list[int]]:
    assignment = {}
    for index, part in enumerate(text.split(",")):
        replicas = [int(b) for b in part.split(":") if b.strip()]
        duplicates = sorted({b for b in replicas if replicas.count(b) > 1})
        if duplicates:
            raise CommandError("Partition replica lists may not contain duplicate entries: "
                               + ",".join(map(str, duplicates)))
        assignment[index] = replicas
        if index and len(replicas) != len(assignment[0]):
            raise CommandError(f"Partition {index} has different replication factor: {replicas}")
    return assignment


def _configs(items: list[str]) -> dict[str, str]:
    configs = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise CommandError('requirement failed: Invalid topic config: all configs to be added must be in the '
                               'format "key=val".')
        configs[name.strip()] = value.strip()
    return configs


def _create(admin, args) -> None:
    if args.replication_factor is not None and not 1 <= args.replication_factor <= 32767:
        raise CommandError("The replication factor must be between 1 and 32767 inclusive")
    if args.partitions is not None and args.partitions < 1:
        raise CommandError("The partitions must be greater than 0")
    if "." in args.topic or "_" in args.topic:
        print("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
              "collide. To avoid issues it is best to use either, but not both.")
    if args.replica_assignment:
        assignment = _replica_assignment(args.replica_assignment)
        topic = NewTopic(args.topic, -1, -1, replica_assignments=assignment, topic_configs=_configs(args.config))
    else:
        topic = NewTopic(args.topic, args.partitions if args.partitions is not None else -1,
                         args.replication_factor if args.replication_factor is not None else -1,
                         topic_configs=_configs(args.config))
    try:
        _raise_first(admin.create_topics([topic], raise_errors=False)["topics"])
    except Errors.TopicAlreadyExistsError:
        if not args.if_not_exists:
            raise CommandError(f"Topic '{args.topic}' already exists.") from None
        return
    print(f"Created topic {args.topic}.")


def _raise_first(results) -> None:
    """Kafka's error of the first result that failed, with the broker's message."""
    for result in results:
        code, message = (result["error_code"], result["error_message"]) if isinstance(result, dict) else \
            (result.error_code, result.error_message)
        if code:
            raise Errors.for_code(code)(message or "")


def _alter(admin, args) -> None:
    topics = _topics(admin, args.topic, False)
    _ensure_found(topics, args.topic, not args.if_exists)
    if not topics:
        return
    extra = _replica_assignment(args.replica_assignment) if args.replica_assignment else None
    described = {t["name"]: t for t in admin.describe_topics(topics)}
    changes = {}
    for name in topics:
        current = len(described[name]["partitions"])
        new_assignments = [replicas for index, replicas in sorted(extra.items()) if index >= current] if extra else None
        changes[name] = NewPartitions(args.partitions, new_assignments)
    _raise_first(admin.create_partitions(changes, raise_errors=False).results)


def _delete(admin, args) -> None:
    topics = _topics(admin, args.topic, False)
    _ensure_found(topics, args.topic, not args.if_exists)
    internal = [t for t in topics if t in ("__consumer_offsets", "__transaction_state")]
    if internal:
        raise CommandError(f"Topic {internal[0]} is a kafka internal topic and is not allowed to be marked for "
                           "deletion.")
    if topics:
        _raise_first(admin.delete_topics(topics, raise_errors=False)["topics"])


def topic_id_text(topic_id) -> str:
    """Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, no padding."""
    if not topic_id:
        return "AAAAAAAAAAAAAAAAAAAAAA"
    raw = uuid.UUID(str(topic_id)).bytes
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _describe(admin, args) -> None:
    topics = _topics(admin, args.topic, args.exclude_internal)
    _ensure_found(topics, args.topic, not args.if_exists)
    if not topics:
        return
    descriptions = sorted(admin.describe_topics(topics), key=lambda t: t["name"])
    configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t["name"]) for t in descriptions],
                                     config_filter="all").get("topic", {})
    live = {b["broker_id"] for b in admin.describe_cluster()["brokers"]}
    try:
        moving = admin.list_partition_reassignments()
    except Errors.KafkaError:
        moving = {}
    reports = [r for r in REPORTS if getattr(args, r)]
    for topic in descriptions:
        name, entries = topic["name"], configs.get(topic["name"], {})
        if topic.get("error_code"):
            raise Errors.for_code(topic["error_code"])(f"topic {name}")
        partitions = sorted(topic["partitions"], key=lambda p: p["partition_index"])
        overrides = {k: v for k, v in entries.items() if v["config_source"] != "DEFAULT_CONFIG"}
        if not reports and (not args.topics_with_overrides or overrides):
            _print_topic(topic, partitions, overrides, moving)
        if args.topics_with_overrides:
            continue
        min_isr = int(entries.get("min.insync.replicas", {}).get("value") or 1)
        for partition in partitions:
            reassignment = moving.get((name, partition["partition_index"]))
            if not reports or _reported(partition, reports, live, min_isr, reassignment):
                _print_partition(name, partition, reassignment)


def _replication_factor(partition: dict, reassignment) -> int:
    if reassignment:
        replicas = reassignment.get("replicas", partition["replica_nodes"])
        return len(replicas) - len(reassignment.get("adding_replicas", []))
    return len(partition["replica_nodes"])


def _print_topic(topic: dict, partitions: list[dict], overrides: dict, moving: dict) -> None:
    first = partitions[0] if partitions else {"replica_nodes": [], "partition_index": 0}
    shown = ",".join(f"{k}={v['value']}" for k, v in overrides.items())
    print(f"Topic: {topic['name']}\tTopicId: {topic_id_text(topic.get('topic_id'))}\tPartitionCount: {len(partitions)}"
          f"\tReplicationFactor: {_replication_factor(first, moving.get((topic['name'], first['partition_index'])))}"
          f"\tConfigs: {shown}")


def _print_partition(name: str, partition: dict, reassignment) -> None:
    leader = partition["leader_id"] if partition["leader_id"] >= 0 else "none"
    line = (f"\tTopic: {name}\tPartition: {partition['partition_index']}\tLeader: {leader}"
            f"\tReplicas: {','.join(map(str, partition['replica_nodes']))}"
            f"\tIsr: {','.join(map(str, partition['isr_nodes']))}")
    if reassignment:
        line += (f"\tAdding Replicas: {','.join(map(str, reassignment.get('adding_replicas', [])))}"
                 f"\tRemoving Replicas: {','.join(map(str, reassignment.get('removing_replicas', [])))}")
    print(line + "\tElr: N/A\tLastKnownElr: N/A")


def _reported(partition: dict, reports: list[str], live: set[int], min_isr: int, reassignment) -> bool:
    has_leader = partition["leader_id"] >= 0
    isr = len(partition["isr_nodes"])
    checks = {"under_replicated_partitions": _replication_factor(partition, reassignment) - isr > 0,
              "unavailable_partitions": not has_leader or partition["leader_id"] not in live,
              "under_min_isr_partitions": not has_leader or isr < min_isr,
              "at_min_isr_partitions": isr == min_isr}
    return any(checks[r] for r in reports)
