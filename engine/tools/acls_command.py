"""`python -m engine acls --bootstrap-server HOST:PORT (--add | --remove | --list) ...`, in the
shape of kafka-acls.sh:

  --add    --allow-principal User:alice [--allow-host H] [--deny-principal ...] [--operation Read ...]
           (--topic T | --group G | --transactional-id ID | --cluster | --delegation-token D | --user-principal U)
           [--resource-pattern-type literal|prefixed]
  --add    --producer --allow-principal P --topic T [--transactional-id ID] [--idempotent]
  --add    --consumer --allow-principal P --topic T --group G
  --remove (the same options: the bindings named, or every binding of the resources when no
           principal is given) [--force]
  --list   [resources] [--resource-pattern-type any|match|literal|prefixed] [--principal P]

As Kafka's AclCommand: hosts default to `*` for the principals given, operations to All;
--producer grants Write, Describe and Create on the topics (Write and Describe on the
transactional ids, IdempotentWrite on the cluster with --idempotent), --consumer Read and
Describe on the topics and Read on the groups; --remove asks before it deletes unless --force.
It speaks only the Kafka protocol (CreateAcls, DescribeAcls, DeleteAcls through kafka-python's
admin client), so it works against Apache Kafka too; `--command-config` takes a client
properties file for SASL and TLS listeners (engine/tools/client_config.py).
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict

import kafka.errors as Errors
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                         ResourcePattern, ResourcePatternFilter, ResourceType)

from kafka_rules.acls import CLUSTER_NAME, SUPPORTED_OPERATIONS, parse_principal
from engine.tools.client_config import ClientConfigError, kafka_python_settings, read_properties


class UsageError(Exception):
    """The options do not make a command; the message says why, as kafka-acls.sh's would."""


def add_parser(commands) -> None:
    parser = commands.add_parser("acls", help="add, remove and list ACLs (kafka-acls.sh)",
                                 description="This tool helps to manage acls on kafka.")
    parser.add_argument("--bootstrap-server", "--bootstrap", dest="bootstrap", required=True,
                        help="brokers to connect to, host:port[,host:port]")
    parser.add_argument("--command-config", help="a client properties file (security.protocol, sasl.*, ssl.*)")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--add", action="store_true", help="add ACLs")
    action.add_argument("--remove", action="store_true", help="remove ACLs")
    action.add_argument("--list", action="store_true", help="list ACLs")
    for option, meta in (("--topic", "topic"), ("--group", "group"), ("--transactional-id", "transactional-id"),
                         ("--delegation-token", "token"), ("--user-principal", "user-principal")):
        parser.add_argument(option, action="append", default=[], metavar=meta.upper(),
                            help=f"the {meta} the ACLs are for; '*' means all (repeatable)")
    parser.add_argument("--cluster", action="store_true", help="the cluster's ACLs")
    parser.add_argument("--resource-pattern-type", default="literal",
                        help="literal or prefixed (to add); also any or match (to list or remove)")
    parser.add_argument("--allow-principal", action="append", default=[], metavar="Type:name")
    parser.add_argument("--deny-principal", action="append", default=[], metavar="Type:name")
    parser.add_argument("--allow-host", action="append", default=[], metavar="HOST")
    parser.add_argument("--deny-host", action="append", default=[], metavar="HOST")
    parser.add_argument("--operation", action="append", default=[], metavar="OPERATION",
                        help="Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, "
                             "AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens or All (default All)")
    parser.add_argument("--principal", action="append", default=[], metavar="Type:name",
                        help="with --list: only the ACLs of this principal")
    parser.add_argument("--producer", action="store_true", help="the ACLs a producer needs")
    parser.add_argument("--consumer", action="store_true", help="the ACLs a consumer needs")
    parser.add_argument("--idempotent", action="store_true", help="with --producer: IdempotentWrite on the cluster")
    parser.add_argument("--force", action="store_true", help="assume yes to every question")


def run(args: argparse.Namespace) -> int:
    try:
        _check(args)
        config = _client_config(args.command_config)
        resources = _resource_filters(args, required=not args.list)
        plan = _entries_by_resource(args, resources) if not args.list else {}
    except (UsageError, ClientConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        admin = KafkaAdminClient(bootstrap_servers=args.bootstrap, client_id="engine-acls", request_timeout_ms=15000,
                                 **config)
    except Errors.KafkaError as exc:
        print(f"Error while executing ACL command: cannot connect to {args.bootstrap}: {_describe(exc)}")
        return 1
    try:
        if args.add:
            return _add(admin, plan)
        if args.remove:
            return _remove(admin, plan, force=args.force)
        return _list(admin, resources, args.principal)
    except Errors.KafkaError as exc:
        print(f"Error while executing ACL command: {_describe(exc)}")
        return 1
    finally:
        admin.close()


# --- building the bindings -------------------------------------------------------------------

def _check(args) -> None:
    if args.list and (args.producer or args.consumer or args.allow_principal or args.deny_principal
                      or args.allow_host or args.deny_host):
        raise UsageError("--list takes no --producer, --consumer, --allow-*/--deny-* options")
    if (args.producer or args.consumer) and (args.operation or args.deny_principal or args.deny_host):
        raise UsageError("--producer and --consumer take no --operation, --deny-principal or --deny-host")
    if args.principal and not args.list:
        raise UsageError("The --principal option is only available if --list is set")
    if args.producer and not args.topic:
        raise UsageError("With --producer you must specify a --topic")
    if args.idempotent and not args.producer:
        raise UsageError("The --idempotent option is only available if --producer is set")
    if args.consumer and (not args.topic or not args.group or (
            not args.producer and (args.cluster or args.transactional_id))):
        raise UsageError("With --consumer you must specify a --topic and a --group and no --cluster or "
                         "--transactional-id option should be specified.")
    if args.add and _pattern_type(args.resource_pattern_type) not in (ACLResourcePatternType.LITERAL,
                                                                     ACLResourcePatternType.PREFIXED):
        raise UsageError(f"A '--resource-pattern-type' value of '{args.resource_pattern_type}' is not valid when "
                         "adding acls.")
    for principal in args.allow_principal + args.deny_principal + args.principal:
        parse_principal(principal)


def _client_config(path: str | None) -> dict:
    if not path:
        return {}
    settings, ignored = kafka_python_settings(read_properties(path))
    if ignored:
        print(f"These configurations were supplied but are not used: {', '.join(ignored)}", file=sys.stderr)
    return settings


def _pattern_type(name: str) -> ACLResourcePatternType:
    try:
        return ACLResourcePatternType[name.strip().upper()]
    except KeyError:
        raise UsageError(f"--resource-pattern-type: expected literal, prefixed, any or match, not {name!r}") from None


def _resource_filters(args, *, required: bool) -> list[ResourcePatternFilter]:
    pattern = _pattern_type(args.resource_pattern_type)
    filters = [ResourcePatternFilter(ResourceType.TOPIC, t.strip(), pattern) for t in args.topic]
    if pattern == ACLResourcePatternType.LITERAL and (args.cluster or args.idempotent):
        filters.append(ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, ACLResourcePatternType.LITERAL))
    filters += [ResourcePatternFilter(ResourceType.GROUP, g.strip(), pattern) for g in args.group]
    filters += [ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, t, pattern) for t in args.transactional_id]
    filters += [ResourcePatternFilter(ResourceType.DELEGATION_TOKEN, d.strip(), pattern) for d in args.delegation_token]
    filters += [ResourcePatternFilter(ResourceType.USER, u.strip(), pattern) for u in args.user_principal]
    if not filters and required:
        raise UsageError("You must provide at least one resource: --topic <topic> or --cluster or --group <group> "
                         "or --delegation-token <Delegation Token ID>")
    return filters


def _entries_by_resource(args, resources) -> dict[ResourcePatternFilter, set[tuple]]:
    """Resource filter -> {(principal, host, operation, permission)}, as AclCommand builds them."""
    plan: dict[ResourcePatternFilter, set[tuple]] = defaultdict(set)
    if not args.producer and not args.consumer:
        operations = {_operation(name) for name in args.operation} or {ACLOperation.ALL}
        for resource in resources:
            plan[resource] |= _entries(args, operations)
    if args.producer:
        for resource in resources:
            if resource.resource_type == ResourceType.TOPIC:
                plan[resource] |= _entries(args, {ACLOperation.WRITE, ACLOperation.DESCRIBE, ACLOperation.CREATE})
            elif resource.resource_type == ResourceType.TRANSACTIONAL_ID:
                plan[resource] |= _entries(args, {ACLOperation.WRITE, ACLOperation.DESCRIBE})
            elif resource.resource_type == ResourceType.CLUSTER and args.idempotent:
                plan[resource] |= _entries(args, {ACLOperation.IDEMPOTENT_WRITE})
    if args.consumer:
        for resource in resources:
            if resource.resource_type == ResourceType.TOPIC:
                plan[resource] |= _entries(args, {ACLOperation.READ, ACLOperation.DESCRIBE})
            elif resource.resource_type == ResourceType.GROUP:
                plan[resource] |= _entries(args, {ACLOperation.READ})
    for resource, entries in plan.items():
        valid = set(SUPPORTED_OPERATIONS[int(resource.resource_type)]) | {int(ACLOperation.ALL)}
        if any(int(operation) not in valid for _, _, operation, _ in entries):
            names = ", ".join(sorted(_camel(ACLOperation(op).name) for op in valid))
            raise UsageError(f"ResourceType {resource.resource_type.name} only supports operations {names}")
    if args.add and any(not entries for entries in plan.values()):
        raise UsageError("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
    return dict(plan)


def _entries(args, operations) -> set[tuple]:
    allow_hosts = args.allow_host or (["*"] if args.allow_principal else [])
    deny_hosts = args.deny_host or (["*"] if args.deny_principal else [])
    return ({(p.strip(), h.strip(), op, ACLPermissionType.ALLOW)
             for p in args.allow_principal for h in allow_hosts for op in operations} |
            {(p.strip(), h.strip(), op, ACLPermissionType.DENY)
             for p in args.deny_principal for h in deny_hosts for op in operations})


def _operation(name: str) -> ACLOperation:
    wanted = name.replace("-", "").replace("_", "").lower()
    for operation in ACLOperation:
        if operation in (ACLOperation.UNKNOWN, ACLOperation.ANY):
            continue
        if operation.name.replace("_", "").lower() == wanted:
            return operation
    raise UsageError(f"--operation: unknown operation {name!r}")


# --- talking to the cluster --------------------------------------------------------------------

def _add(admin: KafkaAdminClient, plan) -> int:
    for resource, entries in sorted(plan.items(), key=lambda item: _pattern_text(item[0])):
        pattern = ResourcePattern(resource.resource_type, resource.resource_name, resource.pattern_type)
        print(f"Adding ACLs for resource `{_pattern_text(pattern)}`: \n"
              f"{_entries_text(entries)} \n")
        acls = [ACL(principal, host, operation, permission, pattern)
                for principal, host, operation, permission in sorted(entries, key=_entry_key)]
        failed = admin.create_acls(acls)["failed"]
        if failed:
            raise failed[0]() if isinstance(failed[0], type) else failed[0]
    return 0


def _remove(admin: KafkaAdminClient, plan, *, force: bool) -> int:
    for resource, entries in sorted(plan.items(), key=lambda item: _pattern_text(item[0])):
        if entries:
            question = (f"Are you sure you want to remove ACLs: \n{_entries_text(entries)} \n from resource filter "
                        f"`{_pattern_text(resource)}`? (y/n)")
            filters = [ACLFilter(principal, host, operation, permission, resource)
                       for principal, host, operation, permission in sorted(entries, key=_entry_key)]
        else:
            question = (f"Are you sure you want to delete all ACLs for resource filter `{_pattern_text(resource)}`? "
                        "(y/n)")
            filters = [ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY, resource)]
        if not force:
            print(question)
            if sys.stdin.readline().strip().lower() != "y":
                continue
        for _, _, error in admin.delete_acls(filters):
            if error is not Errors.NoError:
                raise error()
    return 0


def _list(admin: KafkaAdminClient, resources, principals: list[str]) -> int:
    everything = ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)
    by_resource: dict[tuple, set[tuple]] = defaultdict(set)
    for resource in resources or [everything]:
        acls, _ = admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY, resource))
        for acl in acls:
            pattern = acl.resource_pattern
            key = (pattern.resource_type, pattern.resource_name, pattern.pattern_type)
            by_resource[key].add((acl.principal, acl.host, acl.operation, acl.permission_type))
    for principal in principals or [None]:
        if principal is not None:
            print(f"ACLs for principal `{principal}`")
        for key in sorted(by_resource, key=lambda k: (k[0].name, k[1], k[2].name)):
            entries = {e for e in by_resource[key] if principal is None or e[0] == principal}
            if entries:
                print(f"Current ACLs for resource `{_pattern_text(ResourcePattern(*key))}`: \n"
                      f"{_entries_text(entries)} \n")
    return 0


# --- Kafka's way of printing ----------------------------------------------------------------------

def _pattern_text(pattern) -> str:
    return (f"ResourcePattern(resourceType={pattern.resource_type.name}, name={pattern.resource_name}, "
            f"patternType={pattern.pattern_type.name})")


def _entries_text(entries) -> str:
    return "\n".join(f" \t(principal={p}, host={h}, operation={op.name}, permissionType={perm.name})"
                     for p, h, op, perm in sorted(entries, key=_entry_key))


def _entry_key(entry: tuple) -> tuple:
    principal, host, operation, permission = entry
    return principal, host, int(operation), int(permission)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _describe(exc: Exception) -> str:
    if isinstance(exc, Errors.BrokerResponseError):
        return f"{exc.message} ({exc.errno}): {exc.description}"
    return str(exc) or type(exc).__name__
