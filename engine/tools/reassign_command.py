"""`python -m engine reassign-partitions`: kafka-reassign-partitions.sh's options, JSON files
and output, over the Kafka protocol (AlterPartitionReassignments, ListPartitionReassignments,
IncrementalAlterConfigs for the throttles).

  --generate --topics-to-move-json-file F --broker-list 0,1,2 [--disable-rack-aware]
      F: {"topics": [{"topic": "foo"}], "version": 1}. Prints the current assignment and a
      proposal (Kafka's AdminUtils rack-unaware placement) as Kafka's reassignment JSON.
  --execute --reassignment-json-file F [--throttle B/s] [--additional]
      F: {"version": 1, "partitions": [{"topic": "foo", "partition": 0, "replicas": [1, 2],
      "log_dirs": ["any", "any"]}]}. Prints the current assignment (to roll back), sets the
      leader/follower throttled replicas and rates when --throttle is given, and starts the moves.
  --verify --reassignment-json-file F [--preserve-throttles]
      One line per partition (completed / still in progress); when nothing is moving any more
      it removes the throttles.
  --cancel --reassignment-json-file F [--preserve-throttles]
  --list
Log directory moves (`log_dirs` other than "any") are refused: the engine keeps one log dir per
broker.
"""
from __future__ import annotations

import argparse
import json
import random
import sys

import kafka.errors as Errors
from kafka.protocol.admin.configs import IncrementalAlterConfigsRequest
from kafka.structs import TopicPartition

from engine.tools.cli import (CommandError, add_tool, admin_client, error_message, read_json_file, send, tp_text,
                              usage_error)
from kafka_rules.assignment import assign_replicas_to_brokers

BROKER_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                    "replica.alter.log.dirs.io.max.bytes.per.second")
TOPIC_THROTTLES = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
EXISTING = ("Cannot execute because there is an existing partition assignment.  Use --additional to override this "
            "and create a new partition assignment in addition to the existing one. The --additional flag can also "
            "be used to change the throttle by resubmitting the current reassignment.")
VERIFY_WARNING = ("Warning: You must run --verify periodically, until the reassignment completes, to ensure the "
                  "throttle is removed.")
TOPIC, BROKER = 2, 4
SET, DELETE = 0, 1


def add_parser(commands) -> None:
    p = add_tool(commands, "reassign-partitions", "move partition replicas between brokers "
                                                  "(kafka-reassign-partitions.sh)",
                 "This tool helps to move topic partitions between replicas.")
    p.add_argument("--bootstrap-server")
    p.add_argument("--command-config")
    for action in ("generate", "execute", "verify", "cancel", "list"):
        p.add_argument(f"--{action}", action="store_true")
    p.add_argument("--reassignment-json-file")
    p.add_argument("--topics-to-move-json-file")
    p.add_argument("--broker-list")
    p.add_argument("--disable-rack-aware", action="store_true")
    p.add_argument("--throttle", type=int, default=-1)
    p.add_argument("--replica-alter-log-dirs-throttle", type=int, default=-1)
    p.add_argument("--timeout", type=int, default=10000)
    p.add_argument("--additional", action="store_true")
    p.add_argument("--preserve-throttles", action="store_true")
    p.set_defaults(parser=p)


def _check(args) -> str:
    actions = [a for a in ("generate", "execute", "verify", "cancel", "list") if getattr(args, a)]
    if len(actions) != 1:
        usage_error(args.parser, "Command must include exactly one action: --generate, --execute, --verify, "
                                 "--cancel, --list")
    action = actions[0]
    if not args.bootstrap_server:
        usage_error(args.parser, "Please specify --bootstrap-server")
    required = {"generate": ("topics_to_move_json_file", "broker_list"), "execute": ("reassignment_json_file",),
                "verify": ("reassignment_json_file",), "cancel": ("reassignment_json_file",), "list": ()}[action]
    for name in required:
        if getattr(args, name) is None:
            usage_error(args.parser, f"Missing required argument \"[{name.replace('_', '-')}]\"")
    allowed = {"generate": {"topics_to_move_json_file", "broker_list", "disable_rack_aware"},
               "execute": {"reassignment_json_file", "throttle", "replica_alter_log_dirs_throttle", "timeout",
                           "additional"},
               "verify": {"reassignment_json_file", "preserve_throttles"},
               "cancel": {"reassignment_json_file", "preserve_throttles", "timeout"}, "list": set()}[action]
    defaults = {"reassignment_json_file": None, "topics_to_move_json_file": None, "broker_list": None,
                "disable_rack_aware": False, "throttle": -1, "replica_alter_log_dirs_throttle": -1, "timeout": 10000,
                "additional": False, "preserve_throttles": False}
    for name, default in defaults.items():
        if getattr(args, name) != default and name not in allowed:
            usage_error(args.parser, f"Option \"[{name.replace('_', '-')}]\" can't be used with action \"[{action}]\"")
    return action


def run(args: argparse.Namespace) -> int:
    action = _check(args)
    try:
        admin = admin_client(args.bootstrap_server, args.command_config, client_id="reassign-partitions-tool")
    except (Errors.KafkaError, CommandError) as exc:
        print(f"Error: {error_message(exc)}")
        return 1
    try:
        {"generate": _generate, "execute": _execute, "verify": _verify, "cancel": _cancel,
         "list": _list}[action](admin, args)
        return 0
    except CommandError as exc:
        print(exc)
    except (Errors.KafkaError, KeyError, TypeError, ValueError) as exc:
        print(f"Error: {error_message(exc) if isinstance(exc, Errors.KafkaError) else exc}")
    finally:
        admin.close()
    return 1


# --- JSON ------------------------------------------------------------------------------------------

def _parse_json(text: str) -> dict:
    try:
        data = json.loads(text)
    except ValueError:
        raise CommandError("Error: The input string is not a valid JSON") from None
    if not isinstance(data, dict):
        raise CommandError("Error: The input string is not a valid JSON")
    if data.get("version", 1) != 1:
        raise CommandError(f"Error: Not supported version field value {data.get('version')}")
    return data


def parse_reassignment(text: str) -> list[tuple[TopicPartition, list[int]]]:
    data = _parse_json(text)
    parts = []
    for entry in data.get("partitions") or []:
        tp = TopicPartition(entry["topic"], int(entry["partition"]))
        replicas = [int(r) for r in entry["replicas"]]
        log_dirs = entry.get("log_dirs") or ["any"] * len(replicas)
        if len(log_dirs) != len(replicas):
            raise CommandError(f"Error: Size of replicas list {_java_list(replicas)} is different from size of log "
                               f"dirs list {_java_list(log_dirs)} for partition {tp_text(*tp)}")
        if any(d != "any" for d in log_dirs):
            raise CommandError(f"Error: Moving replicas between log directories is not supported by this cluster "
                               f"client (partition {tp_text(*tp)}): use \"any\"")
        parts.append((tp, replicas))
    return parts


def _java_list(items) -> str:
    return "[" + ", ".join(map(str, items)) + "]"


def format_reassignment(assignment: dict[TopicPartition, list[int]]) -> str:
    """Kafka's formatAsReassignmentJson: compact, partitions sorted by topic then partition."""
    partitions = [{"topic": tp.topic, "partition": tp.partition, "replicas": replicas,
                   "log_dirs": ["any"] * len(replicas)}
                  for tp, replicas in sorted(assignment.items(), key=lambda e: (e[0].topic, e[0].partition))]
    return json.dumps({"version": 1, "partitions": partitions}, separators=(",", ":"))


def _current(admin, topics: set[str]) -> dict[TopicPartition, list[int]]:
    described = admin.describe_topics(sorted(topics))
    current = {}
    for topic in described:
        if topic["error_code"]:
            raise Errors.UnknownTopicOrPartitionError(f"Topic {topic['name']} not found.")
        for p in topic["partitions"]:
            current[TopicPartition(topic["name"], p["partition_index"])] = list(p["replica_nodes"])
    return current


# --- actions -----------------------------------------------------------------------------------------

def _generate(admin, args) -> None:
    try:
        brokers = [int(b) for b in args.broker_list.split(",")]
    except ValueError:
        raise CommandError(f"Error: For input string: \"{args.broker_list}\"") from None
    duplicates = sorted({b for b in brokers if brokers.count(b) > 1})
    if duplicates:
        raise CommandError(f"Error: Broker list contains duplicate entries: {_java_set(duplicates)}")
    data = _parse_json(read_json_file(args.topics_to_move_json_file))
    topics = [t["topic"] for t in data.get("topics") or []]
    repeated = sorted({t for t in topics if topics.count(t) > 1})
    if repeated:
        raise CommandError(f"Error: List of topics to reassign contains duplicate entries: {_java_set(repeated)}")
    current = _current(admin, set(topics))
    nodes = {b["broker_id"]: b.get("rack") for b in admin.describe_cluster()["brokers"]}
    chosen = sorted(b for b in brokers if b in nodes)
    racks = [nodes[b] for b in chosen]
    if not args.disable_rack_aware and any(racks) and not all(racks):
        raise CommandError("Error: Not all brokers have rack information. Add --disable-rack-aware in command line "
                           "to make replica assignment without rack information.")
    if not args.disable_rack_aware and any(racks):
        print("WARNING: the proposal is rack-unaware (Kafka's rack-aware placement is not reproduced here); check it "
              "against your racks before --execute.", file=sys.stderr)
    proposed: dict[TopicPartition, list[int]] = {}
    rng = random.Random()
    for topic in sorted(set(topics)):
        partitions = sorted(tp.partition for tp in current if tp.topic == topic)
        factor = len(current[TopicPartition(topic, partitions[0])]) if partitions else 0
        if factor > len(chosen):
            raise CommandError(f"Error: Replication factor: {factor} larger than available brokers: {len(chosen)}.")
        placement = assign_replicas_to_brokers(partitions=len(partitions), replication_factor=factor, brokers=chosen,
                                               start_index=rng.randrange(len(chosen)),
                                               replica_shift=rng.randrange(len(chosen)))
        for index, replicas in zip(partitions, placement):
            proposed[TopicPartition(topic, index)] = list(replicas)
    print(f"Current partition replica assignment\n{format_reassignment(current)}\n")
    print(f"Proposed partition reassignment configuration\n{format_reassignment(proposed)}")


def _java_set(items) -> str:
    return "Set(" + ", ".join(map(str, items)) + ")" if len(items) > 1 else "[" + ", ".join(map(str, items)) + "]"


def _execute(admin, args) -> None:
    parts = parse_reassignment(read_json_file(args.reassignment_json_file))
    if not parts:
        raise CommandError("Error: Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in parts):
        raise CommandError("Error: Partition replica list cannot be empty")
    seen = [tp for tp, _ in parts]
    repeated = sorted({tp for tp in seen if seen.count(tp) > 1})
    if repeated:
        raise CommandError("Error: Partition reassignment contains duplicate topic partitions: "
                           + ",".join(tp_text(*tp) for tp in repeated))
    doubled = [(tp, sorted({r for r in reps if reps.count(r) > 1})) for tp, reps in parts
               if len(set(reps)) != len(reps)]
    if doubled:
        raise CommandError("Error: Partition replica lists may not contain duplicate entries: " + ". ".join(
            f"{tp_text(*tp)} contains multiple entries for {','.join(map(str, reps))}" for tp, reps in doubled))
    proposed = dict(parts)
    ongoing = admin.list_partition_reassignments()
    if ongoing and not args.additional:
        raise CommandError(EXISTING)
    live = {b["broker_id"] for b in admin.describe_cluster()["brokers"]}
    unknown = next((b for reps in proposed.values() for b in reps if b not in live), None)
    if unknown is not None:
        raise CommandError(f"Error: Unknown broker id {unknown}")
    current = _current(admin, {tp.topic for tp in proposed})
    missing = [tp for tp in proposed if tp not in current]
    if missing:
        raise CommandError("Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to find "
                           "partition: " + ", ".join(tp_text(*tp) for tp in missing))
    rollback = {tp: current[tp] for tp in proposed}
    print(f"Current partition replica assignment\n\n{format_reassignment(rollback)}\n\n"
          "Save this to use as the --reassignment-json-file option during rollback")
    if args.throttle >= 0:
        print(VERIFY_WARNING)
        _set_throttles(admin, ongoing, proposed, current, args.throttle)
    errors = {tp: e for tp, e in admin.alter_partition_reassignments(proposed).items() if e is not None}
    if errors:
        raise CommandError("Error reassigning partition(s):\n" + "\n".join(
            f"{tp_text(*tp)}: {e.description if hasattr(e, 'description') else e}"
            for tp, e in sorted(errors.items())))
    print(f"Successfully started partition reassignment{'' if len(proposed) == 1 else 's'} for "
          + ",".join(tp_text(*tp) for tp in sorted(proposed)))


def _set_throttles(admin, ongoing: dict, proposed: dict, current: dict, rate: int) -> None:
    moves: dict[str, dict[int, tuple[set[int], set[int]]]] = {}
    for tp, state in ongoing.items():
        sources = set(state["replicas"]) - set(state["adding_replicas"])
        moves.setdefault(tp.topic, {})[tp.partition] = (sources, set(state["adding_replicas"]))
    for tp, replicas in proposed.items():
        known = moves.setdefault(tp.topic, {}).get(tp.partition)
        sources = known[0] if known else set(current[tp])
        moves[tp.topic][tp.partition] = (sources, set(replicas) - sources)
    resources = []
    for topic, partitions in moves.items():
        leaders = sorted(f"{p}:{s}" for p, (sources, _) in partitions.items() for s in sources)
        followers = sorted(f"{p}:{d}" for p, (sources, dests) in partitions.items() for d in dests if d not in sources)
        resources.append((TOPIC, topic, [(TOPIC_THROTTLES[0], SET, ",".join(leaders)),
                                         (TOPIC_THROTTLES[1], SET, ",".join(followers))]))
    _alter(admin, resources)
    brokers = sorted({b for partitions in moves.values() for sources, dests in partitions.values()
                      for b in sources | dests})
    for broker in brokers:
        _alter(admin, [(BROKER, str(broker), [(BROKER_THROTTLES[0], SET, str(rate)),
                                              (BROKER_THROTTLES[1], SET, str(rate))])], node=broker)
    print(f"The inter-broker throttle limit was set to {rate} B/s")


def _alter(admin, resources: list, node: int | None = None) -> None:
    answer = send(admin, IncrementalAlterConfigsRequest(resources=resources, validate_only=False), node)
    for response in answer.responses:
        if response.error_code:
            raise Errors.for_code(response.error_code)(response.error_message or "")


def _states(admin, parts: list[tuple[TopicPartition, list[int]]]) -> tuple[dict, bool]:
    ongoing = admin.list_partition_reassignments()
    current = {}
    try:
        current = _current(admin, {tp.topic for tp, _ in parts if tp not in ongoing})
    except Errors.UnknownTopicOrPartitionError:
        pass
    states = {}
    for tp, target in parts:
        if tp in ongoing:
            states[tp] = (ongoing[tp]["replicas"], target, False)
        else:
            states[tp] = (current.get(tp, []), target, True)
    return states, bool(ongoing)


def _verify(admin, args) -> None:
    parts = parse_reassignment(read_json_file(args.reassignment_json_file))
    states, moving = _states(admin, parts)
    lines = ["Status of partition reassignment:"]
    for tp in sorted(states):
        current, target, done = states[tp]
        if not done:
            lines.append(f"Reassignment of partition {tp_text(*tp)} is still in progress.")
        elif current == target:
            lines.append(f"Reassignment of partition {tp_text(*tp)} is completed.")
        else:
            lines.append(f"There is no active reassignment of partition {tp_text(*tp)}, but replica set is "
                         f"{','.join(map(str, current))} rather than {','.join(map(str, target))}.")
    print("\n".join(lines))
    print()
    if not moving and not args.preserve_throttles:
        _clear_throttles(admin, parts)


def _clear_throttles(admin, parts) -> None:
    brokers = {b["broker_id"] for b in admin.describe_cluster()["brokers"]}
    brokers |= {b for _, replicas in parts for b in replicas}
    print(f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} "
          f"{','.join(map(str, sorted(brokers)))}")
    for broker in sorted(brokers):
        _alter(admin, [(BROKER, str(broker), [(name, DELETE, None) for name in BROKER_THROTTLES])], node=broker)
    topics = sorted({tp.topic for tp, _ in parts})
    print(f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} {','.join(topics)}")
    _alter(admin, [(TOPIC, t, [(name, DELETE, None) for name in TOPIC_THROTTLES]) for t in topics])


def _cancel(admin, args) -> None:
    parts = parse_reassignment(read_json_file(args.reassignment_json_file))
    wanted = {tp for tp, _ in parts}
    ongoing = admin.list_partition_reassignments(sorted(wanted))
    active = sorted(tp for tp, state in ongoing.items()
                    if tp in wanted and (not state["adding_replicas"] or state["removing_replicas"]))
    if active:
        errors = {tp: e for tp, e in admin.alter_partition_reassignments({tp: None for tp in active}).items()
                  if e is not None}
        if errors:
            raise CommandError(f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:\n"
                               + "\n".join(f"{tp_text(*tp)}: {e}" for tp, e in sorted(errors.items())))
        print(f"Successfully cancelled partition reassignment{'' if len(active) == 1 else 's'} for: "
              + ",".join(tp_text(*tp) for tp in active))
    else:
        print("None of the specified partition reassignments are active.")
    sys.stdout.write("None of the specified partition moves are active.")
    if not args.preserve_throttles:
        print()
        _clear_throttles(admin, parts)


def _list(admin, args) -> None:
    ongoing = admin.list_partition_reassignments()
    if not ongoing:
        print("No partition reassignments found.")
        return
    lines = ["Current partition reassignments:"]
    for tp in sorted(ongoing):
        state = ongoing[tp]
        line = f"{tp_text(*tp)}: replicas: {','.join(map(str, state['replicas']))}."
        if state["adding_replicas"]:
            line += f" adding: {','.join(map(str, state['adding_replicas']))}."
        if state["removing_replicas"]:
            line += f" removing: {','.join(map(str, state['removing_replicas']))}."
        lines.append(line)
    print("\n".join(lines))
