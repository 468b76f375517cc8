"""Kafka's partition tools, over the Kafka protocol:

- `python -m engine leader-election` (kafka-leader-election.sh): `--election-type
  PREFERRED|UNCLEAN` and `--all-topic-partitions`, `--topic T --partition P`, or
  `--path-to-json-file F` (`{"partitions": [{"topic": "t", "partition": 0}]}`); prints
  `Successfully completed leader election (PREFERRED) for partitions t-0, ...` and
  `Valid replica already elected for partitions ...`; a partition that failed prints
  `Error completing leader election (PREFERRED) for partition: t-0: <error>` and exits 1.
- `python -m engine log-dirs --describe [--broker-list 0,1] [--topic-list a,b]`
  (kafka-log-dirs.sh): `Querying brokers for log directories information`, `Received log
  directory information from brokers 0,1,2`, then Kafka's JSON (`{"brokers": [{"broker": 0,
  "logDirs": [{"partitions": [{"partition": "t-0", "size": 0, "offsetLag": 0, "isFuture":
  false}], "error": null, "logDir": "..."}]}], "version": 1}`).
- `python -m engine delete-records --offset-json-file F` (kafka-delete-records.sh): the file is
  `{"partitions": [{"topic": "t", "partition": 0, "offset": 5}], "version": 1}` (offset -1:
  the high watermark); prints `partition: t-0<TAB>low_watermark: 5` (or `error: ...`).
- `python -m engine get-offsets` (kafka-get-offsets.sh): `--topic REGEX [--partitions 0,1]` or
  `--topic-partitions 't:0-2,u'`, `--time latest|earliest|max-timestamp|-1|-2|-3|<ms>`;
  prints `topic:partition:offset`, sorted as Kafka sorts them.
"""
from __future__ import annotations

import argparse
import json
import re
import sys

import kafka.errors as Errors
import re2
from kafka.protocol.admin import ElectLeadersRequest
from kafka.protocol.consumer import OffsetSpec
from kafka.structs import TopicPartition

from engine.tools.cli import (CommandError, add_tool, admin_client, error_message, read_json_file, send, tp_text,
                              usage_error)

ELECTION_TYPES = {"PREFERRED": 0, "UNCLEAN": 1}


def add_parsers(commands) -> None:
    e = add_tool(commands, "leader-election", "elect preferred or unclean leaders (kafka-leader-election.sh)",
                 "This tool attempts to elect a new leader for a set of topic partitions.")
    e.add_argument("--bootstrap-server")
    e.add_argument("--admin.config", dest="admin_config")
    e.add_argument("--path-to-json-file")
    e.add_argument("--topic")
    e.add_argument("--partition", type=int)
    e.add_argument("--all-topic-partitions", action="store_true")
    e.add_argument("--election-type", type=str.upper)
    e.set_defaults(parser=e, partition_tool="leader-election")
    d = add_tool(commands, "log-dirs", "describe log directories (kafka-log-dirs.sh)",
                 "This tool helps to query log directory usage on the specified brokers.")
    d.add_argument("--bootstrap-server")
    d.add_argument("--command-config")
    d.add_argument("--describe", action="store_true")
    d.add_argument("--topic-list", default="")
    d.add_argument("--broker-list", default="")
    d.set_defaults(parser=d, partition_tool="log-dirs")
    r = add_tool(commands, "delete-records", "delete records below offsets (kafka-delete-records.sh)",
                 "This tool helps to delete records of the given partitions down to the specified offset.")
    r.add_argument("--bootstrap-server")
    r.add_argument("--offset-json-file")
    r.add_argument("--command-config")
    r.set_defaults(parser=r, partition_tool="delete-records")
    g = add_tool(commands, "get-offsets", "offsets of topic partitions (kafka-get-offsets.sh)",
                 "An interactive shell for getting topic-partition offsets.")
    g.add_argument("--bootstrap-server")
    g.add_argument("--topic-partitions")
    g.add_argument("--topic")
    g.add_argument("--partitions")
    g.add_argument("--time", default="latest")
    g.add_argument("--command-config")
    g.add_argument("--exclude-internal-topics", action="store_true")
    g.set_defaults(parser=g, partition_tool="get-offsets")


def run(args: argparse.Namespace) -> int:
    if not args.bootstrap_server:
        usage_error(args.parser, "Missing required argument \"[bootstrap-server]\"")
    return {"leader-election": _leader_election, "log-dirs": _log_dirs, "delete-records": _delete_records,
            "get-offsets": _get_offsets}[args.partition_tool](args)


# --- leader-election ------------------------------------------------------------------------------

def _election_partitions(args) -> list[TopicPartition] | None:
    chosen = [bool(args.path_to_json_file), bool(args.topic), args.all_topic_partitions]
    if sum(chosen) != 1:
        raise CommandError("One and only one of the following options is required: all-topic-partitions, topic, "
                           "path-to-json-file")
    if args.election_type not in ELECTION_TYPES:
        raise CommandError("Missing required option(s): election-type" if args.election_type is None
                           else f"Invalid election type {args.election_type}: use PREFERRED or UNCLEAN")
    if args.partition is not None and not args.topic:
        raise CommandError("Option partition is only allowed if topic is used")
    if args.topic and args.partition is None:
        raise CommandError("Missing required option(s): partition")
    if args.all_topic_partitions:
        return None
    if args.topic:
        return [TopicPartition(args.topic, args.partition)]
    data = _json(read_json_file(args.path_to_json_file), "Replica election data is empty")
    if "partitions" not in data:
        raise CommandError('Replica election data is missing "partitions" field')
    partitions = [TopicPartition(p["topic"], int(p["partition"])) for p in data["partitions"]]
    duplicates = sorted({tp for tp in partitions if partitions.count(tp) > 1})
    if duplicates:
        raise CommandError("Replica election data contains duplicate partitions: "
                           + ",".join(tp_text(*tp) for tp in duplicates))
    return partitions


def _leader_election(args) -> int:
    try:
        partitions = _election_partitions(args)
    except CommandError as exc:
        print(exc, file=sys.stderr)
        return 1
    admin = admin_client(args.bootstrap_server, args.admin_config, client_id="leader-election")
    try:
        by_topic = None
        if partitions is not None:
            by_topic = {}
            for tp in partitions:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
        if by_topic is None:        # null partitions: every partition, as Kafka's tool asks
            request = ElectLeadersRequest(election_type=ELECTION_TYPES[args.election_type], topic_partitions=None,
                                          timeout_ms=30000)
            response = send(admin, request, admin.describe_cluster()["controller_id"])
        else:
            response = admin.elect_leaders(ELECTION_TYPES[args.election_type], by_topic, raise_errors=False)
    except Errors.KafkaError as exc:
        print(error_message(exc), file=sys.stderr)
        return 1
    finally:
        admin.close()
    if getattr(response, "error_code", 0):
        print(error_message(Errors.for_code(response.error_code)()), file=sys.stderr)
        return 1
    succeeded, noop, failed = [], [], []
    for topic in response.replica_election_results:
        for result in topic.partition_result:
            name = tp_text(topic.topic, result.partition_id)
            if result.error_code == 0:
                succeeded.append(name)
            elif Errors.for_code(result.error_code) is Errors.ElectionNotNeededError:
                noop.append(name)
            else:
                error = Errors.for_code(result.error_code)
                failed.append((name, f"org.apache.kafka.common.errors.{error.__name__[:-5]}Exception: "
                                     f"{result.error_message or error.description}"))
    if succeeded:
        print(f"Successfully completed leader election ({args.election_type}) for partitions {', '.join(succeeded)}")
    if noop:
        print(f"Valid replica already elected for partitions {', '.join(noop)}")
    for name, error in failed:
        print(f"Error completing leader election ({args.election_type}) for partition: {name}: {error}")
    if failed:
        print(f"{len(failed)} replica(s) could not be elected", file=sys.stderr)
        return 1
    return 0


# --- log-dirs -------------------------------------------------------------------------------------

def _log_dirs(args) -> int:
    if not args.describe:
        usage_error(args.parser, "Missing required argument \"[describe]\"")
    topics = {t for t in args.topic_list.split(",") if t}
    try:
        wanted = {int(b) for b in args.broker_list.split(",") if b}
    except ValueError:
        print(f"For input string: \"{args.broker_list}\"", file=sys.stderr)
        return 1
    admin = admin_client(args.bootstrap_server, args.command_config, client_id="log-dirs-tool")
    try:
        cluster = {b["broker_id"] for b in admin.describe_cluster()["brokers"]}
        missing = wanted - cluster
        if missing:
            print(f"ERROR: The given brokers do not exist from --broker-list: {','.join(map(str, sorted(missing)))}. "
                  f"Current existent brokers: {','.join(map(str, sorted(cluster)))}", file=sys.stderr)
            return 1
        brokers = sorted(wanted or cluster)
        print("Querying brokers for log directories information")
        described = admin.describe_log_dirs(brokers=brokers)
    except Errors.KafkaError as exc:
        print(error_message(exc), file=sys.stderr)
        return 1
    finally:
        admin.close()
    print(f"Received log directory information from brokers {','.join(map(str, brokers))}")
    out = {"brokers": [], "version": 1}
    for broker in sorted(described, key=lambda b: b["broker"]):
        dirs = []
        for log_dir in broker["log_dirs"]:
            error = Errors.for_code(log_dir["error_code"]) if log_dir["error_code"] else None
            partitions = [{"partition": tp_text(t["name"], p["partition_index"]), "size": p["partition_size"],
                           "offsetLag": p["offset_lag"], "isFuture": p["is_future_key"]}
                          for t in log_dir["topics"] if not topics or t["name"] in topics for p in t["partitions"]]
            error_name = None if error is None else f"org.apache.kafka.common.errors.{error.__name__[:-5]}Exception"
            dirs.append({"partitions": partitions, "error": error_name, "logDir": log_dir["log_dir"]})
        out["brokers"].append({"broker": broker["broker"], "logDirs": dirs})
    print(json.dumps(out, separators=(",", ":")))
    return 0


# --- delete-records -------------------------------------------------------------------------------

def _json(text: str, empty_message: str = "The input string is not a valid JSON") -> dict:
    try:
        data = json.loads(text)
    except ValueError:
        raise CommandError("The input string is not a valid JSON") from None
    if not isinstance(data, dict):
        raise CommandError(empty_message)
    return data


def _delete_records(args) -> int:
    if not args.offset_json_file:
        usage_error(args.parser, "Missing required argument \"[offset-json-file]\"")
    try:
        data = _json(read_json_file(args.offset_json_file))
        version = data.get("version", 1)
        if version != 1:
            raise CommandError(f"Not supported version field value {version}")
        if "partitions" not in data:
            raise CommandError("Missing partitions field")
        wanted = [(TopicPartition(p["topic"], int(p["partition"])), int(p["offset"])) for p in data["partitions"]]
    except (KeyError, TypeError, ValueError) as exc:
        print(f"The offset JSON file is missing a field or has a wrong type: {exc}", file=sys.stderr)
        return 1
    except CommandError as exc:
        print(exc, file=sys.stderr)
        return 1
    seen = [tp for tp, _ in wanted]
    duplicates = sorted({tp for tp in seen if seen.count(tp) > 1})
    if duplicates:
        print(f"Offset json file contains duplicate topic partitions: {','.join(tp_text(*tp) for tp in duplicates)}",
              file=sys.stderr)
        return 1
    admin = admin_client(args.bootstrap_server, args.command_config, client_id="delete-records")
    print("Executing records delete operation")
    failed = False
    try:
        results = {}
        for tp, offset in wanted:
            try:
                results[tp] = admin.delete_records({tp: offset})[tp]
            except Errors.KafkaError as exc:
                results[tp] = exc
    finally:
        admin.close()
    print("Records delete operation completed:")
    for tp, result in results.items():
        if isinstance(result, Exception):
            failed = True
            print(f"partition: {tp_text(*tp)}\terror: {java_error(result)}")
        else:
            low = result.get("low_watermark") if isinstance(result, dict) else result
            print(f"partition: {tp_text(*tp)}\tlow_watermark: {low}")
    return 1 if failed else 0


def java_error(exc: Exception) -> str:
    name = type(exc).__name__
    return f"org.apache.kafka.common.errors.{name[:-5] + 'Exception' if name.endswith('Error') else name}: " \
           f"{error_message(exc)}"


# --- get-offsets ----------------------------------------------------------------------------------

_TP_RULE = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
_SPECS = {"earliest": OffsetSpec.EARLIEST, "latest": OffsetSpec.LATEST, "max-timestamp": OffsetSpec.MAX_TIMESTAMP,
          "-2": OffsetSpec.EARLIEST, "-1": OffsetSpec.LATEST, "-3": OffsetSpec.MAX_TIMESTAMP}


def _offset_spec(text: str):
    if text in _SPECS:
        return _SPECS[text]
    try:
        value = int(text)
    except ValueError:
        raise CommandError(f"Malformed time argument {text}. Please use -1 or latest / -2 or earliest / -3 or "
                           "max-timestamp / -4 or earliest-local / -5 or latest-tiered, or a specified long format "
                           "timestamp") from None
    if value in (-4, -5):
        raise CommandError(f"Time {text} (earliest-local / latest-tiered) needs tiered storage, which this cluster "
                           "client does not ask for")
    return value


def _rules(args) -> list:
    """(topic matcher, partition predicate) pairs, as Kafka's TopicPartitionFilter."""
    if args.topic_partitions:
        if args.topic or args.partitions:
            raise CommandError("--topic-partitions cannot be used with --topic or --partitions")
        rules = []
        for spec in args.topic_partitions.split(","):
            match = _TP_RULE.fullmatch(spec)
            if not match:
                raise CommandError(f"Invalid rule specification: {spec}")
            topic, single, low, high = (g or None for g in match.groups())
            if single is not None:
                check = (lambda n: lambda p: p == n)(int(single))
            else:
                check = (lambda lo, hi: lambda p: lo <= p < hi)(int(low or 0), int(high) if high else 2**31 - 1)
            rules.append((_full_match(topic or ".*"), check))
        return rules
    partitions = None
    if args.partitions:
        try:
            partitions = {int(p) for p in args.partitions.split(",")}
        except ValueError:
            raise CommandError("--partitions expects a comma separated list of numeric partition ids, but received: "
                               f"{args.partitions}") from None
    return [(_full_match(args.topic or ".*"), lambda p: partitions is None or p in partitions)]


def _full_match(pattern: str):
    try:
        compiled = re2.compile(pattern.strip().strip('"').replace(",", "|"))
    except re2.error as exc:
        raise CommandError(f"Illegal regular expression {pattern!r}: {exc}") from None
    return lambda name: compiled.fullmatch(name) is not None


def _get_offsets(args) -> int:
    try:
        spec = _offset_spec(args.time)
        rules = _rules(args)
    except CommandError as exc:
        print(f"Error occurred: {exc}", file=sys.stderr)
        return 1
    admin = admin_client(args.bootstrap_server, args.command_config, client_id="GetOffsetShell")
    try:
        described = admin.describe_topics()
        chosen = [TopicPartition(t["name"], p["partition_index"]) for t in described
                  if not (args.exclude_internal_topics and (t["is_internal"] or t["name"].startswith("__")))
                  for p in t["partitions"]
                  if any(match(t["name"]) and check(p["partition_index"]) for match, check in rules)]
        if not chosen:
            print("Error occurred: Could not match any topic-partitions with the specified filters", file=sys.stderr)
            return 1
        found = admin.list_partition_offsets({tp: spec for tp in chosen})
    except Errors.KafkaError as exc:
        print(f"Error occurred: {error_message(exc)}", file=sys.stderr)
        return 1
    finally:
        admin.close()
    for tp in sorted(found, key=lambda tp: tp_text(*tp)):
        if found[tp].offset >= 0:
            print(f"{tp.topic}:{tp.partition}:{found[tp].offset}")
    return 0
