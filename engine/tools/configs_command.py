"""`python -m engine configs`: kafka-configs.sh's options and output, over the Kafka protocol.

  --describe [--all] --entity-type topics|brokers|users|clients|ips|groups [--entity-name N | --entity-default]
  --alter --entity-type ... --entity-name N [--add-config k=v,k2=[a,b]] [--add-config-file F] [--delete-config k,k2]

and the shorthands --topic, --broker, --broker-defaults, --user, --user-defaults, --client,
--client-defaults, --ip, --ip-defaults, --group. Topics, brokers and groups use
DescribeConfigs and IncrementalAlterConfigs; users, clients and ips are client quotas
(DescribeClientQuotas, AlterClientQuotas) and, for users, SCRAM credentials
(DescribeUserScramCredentials, AlterUserScramCredentials). Output lines are Kafka's:
`Dynamic configs for topic t are:` then `  k=v sensitive=false synonyms={SOURCE:k=v, ...}`;
`Quota configs for user-principal 'alice' are producer_byte_rate=1024.0`;
`Completed updating config for topic t.`
"""
from __future__ import annotations

import argparse
import re
import sys

import kafka.errors as Errors
from kafka.admin import ConfigResourceType
from kafka.protocol.admin.configs import DescribeConfigsRequest, IncrementalAlterConfigsRequest
from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest, DescribeClientQuotasRequest

from engine.tools.cli import (CommandError, add_tool, admin_client, java_exception_line, load_properties, send,
                              usage_error)

TYPES = ("topics", "clients", "users", "brokers", "broker-loggers", "ips", "groups")
QUOTA_KEYS = {"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate"}
IP_KEYS = {"connection_creation_rate"}
SCRAM = {"SCRAM-SHA-256", "SCRAM-SHA-512"}
QUOTA_TYPE = {"users": "user", "clients": "client-id", "ips": "ip"}
QUOTA_LABEL = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}


def add_parser(commands) -> None:
    p = add_tool(commands, "configs", "describe and alter configs of topics, brokers, users, clients and groups "
                                      "(kafka-configs.sh)",
                 "This tool helps to manipulate and describe entity config for a topic, client, user, broker, ip or "
                 "group")
    p.add_argument("--bootstrap-server", help="The Kafka servers to connect to.")
    p.add_argument("--command-config", help="Property file containing configs to be passed to Admin Client.")
    p.add_argument("--describe", action="store_true", help="List configs for the given entity.")
    p.add_argument("--alter", action="store_true", help="Alter the configuration for the entity.")
    p.add_argument("--all", action="store_true", help="List all configs for the given topic, broker, or "
                                                      "broker-logger entity (includes static configuration when the "
                                                      "entity type is brokers)")
    p.add_argument("--entity-type", action="append", default=[], choices=TYPES)
    p.add_argument("--entity-name", action="append", default=[])
    p.add_argument("--entity-default", action="append_const", const="", dest="entity_name")
    p.add_argument("--add-config", help="Key Value pairs of configs to add. Square brackets can be used to group "
                                        "values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.")
    p.add_argument("--add-config-file", help="Path to a properties file with configs to add.")
    p.add_argument("--delete-config", help="config keys to remove 'k1,k2'")
    for shorthand, entity in (("topic", "topics"), ("broker", "brokers"), ("user", "users"), ("client", "clients"),
                              ("ip", "ips"), ("group", "groups"), ("broker-logger", "broker-loggers")):
        p.add_argument(f"--{shorthand}", dest=f"short_{shorthand.replace('-', '_')}", metavar=shorthand)
    for shorthand in ("broker", "user", "client", "ip"):
        p.add_argument(f"--{shorthand}-defaults", action="store_true", dest=f"default_{shorthand}")
    p.set_defaults(parser=p)


def _entities(args) -> tuple[list[str], list[str]]:
    types, names = list(args.entity_type), list(args.entity_name)
    shorthand = [("topics", args.short_topic), ("brokers", args.short_broker), ("users", args.short_user),
                 ("clients", args.short_client), ("ips", args.short_ip), ("groups", args.short_group),
                 ("broker-loggers", args.short_broker_logger)]
    defaults = [("brokers", args.default_broker), ("users", args.default_user), ("clients", args.default_client),
                ("ips", args.default_ip)]
    used = [(t, n) for t, n in shorthand if n is not None] + [(t, "") for t, d in defaults if d]
    if used and types:
        raise CommandError("--entity-{type,name,default} should not be used in conjunction with specific entity "
                           "flags")
    if used:
        types, names = [t for t, _ in used], [n for _, n in used]
    if not types:
        raise CommandError("At least one entity type must be specified")
    if len(set(types)) != len(types):
        repeated = sorted({t for t in types if types.count(t) > 1})
        raise CommandError(f"Duplicate entity type(s) specified: {','.join(repeated)}")
    if len(types) > 1 and set(types) != {"users", "clients"}:
        raise CommandError("Only 'users' and 'clients' entity types may be specified together")
    return types, names


def run(args: argparse.Namespace) -> int:
    if args.describe == args.alter:
        usage_error(args.parser, "Command must include exactly one action: --describe, --alter")
    try:
        types, names = _entities(args)
        _check(args, types, names)
    except CommandError as exc:
        print(exc, file=sys.stderr)
        return 1
    try:
        admin = admin_client(args.bootstrap_server, args.command_config, client_id="config-command")
    except (Errors.KafkaError, CommandError) as exc:
        return _fail(exc, args)
    try:
        if args.alter:
            _alter(admin, args, types, names)
        else:
            _describe(admin, args, types, names)
    except (Errors.KafkaError, CommandError, ValueError) as exc:
        return _fail(exc, args)
    finally:
        admin.close()
    return 0


def _fail(exc: Exception, args) -> int:
    """Kafka's: a wrong argument is its message alone; a failure from the cluster is the command
    line, then the exception (the first line of Kafka's stack trace)."""
    if not isinstance(exc, Errors.KafkaError):
        print(str(exc), file=sys.stderr)
        return 1
    print(f"Error while executing config command with args '{' '.join(sys.argv[2:])}'", file=sys.stderr)
    print(f"java.util.concurrent.ExecutionException: {java_exception_line(exc)}", file=sys.stderr)
    return 1


def _check(args, types: list[str], names: list[str]) -> None:
    if not args.bootstrap_server:
        raise CommandError("One of the required --bootstrap-server, --boostrap-controller, or --zookeeper arguments "
                           "must be specified")
    head = types[0]
    if args.describe:
        if head in ("users", "clients", "ips") or not names:
            return
        if head != "brokers" and "" in names:
            raise CommandError(f"--entity-default must not be specified with --describe of {','.join(types)}")
        if head == "brokers" and names and names[0] and not names[0].isdigit():
            raise CommandError(f"The entity name for brokers must be a valid integer broker id, but it is: {names[0]}")
        return
    if not names:
        raise CommandError("An entity-name or default entity must be specified with --alter of users, clients, "
                           "brokers or ips" if head in ("users", "clients", "brokers", "ips")
                           else f"An entity name must be specified with --alter of {','.join(types)}")
    if len(names) != len(types):
        raise CommandError("An entity name must be specified for every entity type")
    if args.add_config and args.add_config_file:
        raise CommandError("Only one of --add-config or --add-config-file must be specified")
    if not (args.add_config or args.add_config_file or args.delete_config):
        raise CommandError("At least one of --add-config, --add-config-file, or --delete-config must be specified "
                           "with --alter")


# --- parsing --add-config / --delete-config ------------------------------------------------------

def parse_add_config(text: str | None, file: str | None = None) -> dict[str, str]:
    """Kafka's rule: split on commas outside square brackets; `k=[a,b]` means the value `a,b`."""
    configs = dict(load_properties(file)) if file else {}
    if not text:
        return configs
    for pair in re.split(r",(?=[^\]]*(?:\[|$))", text):
        if not pair:
            continue
        key, sep, value = pair.partition("=")
        if not sep:
            raise CommandError("Invalid entity config: all configs to be added must be in the format \"key=val\".")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            value = value[1:-1]
        configs[key.strip()] = value
    return configs


def parse_delete_config(text: str | None) -> list[str]:
    return [k.strip() for k in (text or "").split(",") if k.strip()]


# --- describe -----------------------------------------------------------------------------------

def _describe(admin, args, types, names) -> None:
    head = types[0]
    if head in ("users", "clients", "ips"):
        _describe_quotas(admin, types, names)
        if head == "users" and "clients" not in types and "" not in names:
            _describe_scram(admin, names)
        return
    if names:
        entities = [names[0]]
    elif head == "topics":
        entities = sorted(t["name"] for t in admin.describe_topics())
    elif head in ("brokers", "broker-loggers"):
        entities = [str(b["broker_id"]) for b in admin.describe_cluster()["brokers"]] + [""]
    else:
        entities = sorted(g["group_id"] for g in admin.list_groups())
    for entity in entities:
        if entity == "":
            print(f"Default configs for {head} in the cluster are:")
        else:
            print(f"{'All' if args.all else 'Dynamic'} configs for {head[:-1]} {entity} are:")
        for name, entry in _resource_configs(admin, head, entity, describe_all=args.all):
            synonyms = ", ".join(f"{s['source']}:{s['name']}={_value(s['value'], entry['is_sensitive'])}"
                                 for s in entry.get("synonyms") or [])
            print(f"  {name}={_value(entry['value'], entry['is_sensitive'])} "
                  f"sensitive={str(entry['is_sensitive']).lower()} synonyms={{{synonyms}}}")


def _value(value, sensitive: bool) -> str:
    return "null" if value is None or sensitive else str(value)


def _resource_type(head: str):
    return {"topics": ConfigResourceType.TOPIC, "brokers": ConfigResourceType.BROKER,
            "broker-loggers": ConfigResourceType.BROKER_LOGGER, "groups": ConfigResourceType.GROUP}[head]


SOURCES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
           4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG",
           7: "CLIENT_METRICS_CONFIG", 8: "GROUP_CONFIG"}
DYNAMIC_SOURCE = {"topics": "DYNAMIC_TOPIC_CONFIG", "groups": "GROUP_CONFIG"}


def _node(head: str, entity: str) -> int | None:
    """Broker resources go to that broker (Kafka's admin client does the same)."""
    return int(entity) if head in ("brokers", "broker-loggers") and entity.isdigit() else None


def _resource_configs(admin, head: str, entity: str, *, describe_all: bool) -> list[tuple[str, dict]]:
    if head == "brokers" and entity and not entity.isdigit():
        raise CommandError(f"The entity name for brokers must be a valid integer broker id, found: {entity}")
    request = DescribeConfigsRequest(resources=[(_resource_type(head), entity, None)], include_synonyms=True,
                                     min_version=1)
    answer = send(admin, request, _node(head, entity))
    entries = {}
    for result in answer.results:
        if result.error_code:
            raise Errors.for_code(result.error_code)(result.error_message or "")
        for c in result.configs:
            entries[c.name] = {"value": c.value, "is_sensitive": c.is_sensitive,
                               "config_source": SOURCES.get(c.config_source, "UNKNOWN"),
                               "synonyms": [{"name": s.name, "value": s.value,
                                             "source": SOURCES.get(s.source, "UNKNOWN")} for s in c.synonyms or []]}
    wanted = None if describe_all else (DYNAMIC_SOURCE.get(head) or (
        "DYNAMIC_DEFAULT_BROKER_CONFIG" if entity == "" else "DYNAMIC_BROKER_CONFIG"))
    if head == "broker-loggers":
        wanted = None
    return sorted((name, e) for name, e in entries.items() if wanted is None or e["config_source"] == wanted)


def _quota_components(types: list[str], names: list[str]) -> list:
    components = []
    for i, entity_type in enumerate(types):
        quota_type = QUOTA_TYPE[entity_type]
        name = names[i] if i < len(names) else None
        match_type = 2 if name is None else (1 if name == "" else 0)      # any, default, exact
        components.append(DescribeClientQuotasRequest.ComponentData(
            entity_type=quota_type, match_type=match_type, match=name or None))
    return components


def _describe_quotas(admin, types: list[str], names: list[str]) -> None:
    answer = send(admin, DescribeClientQuotasRequest(components=_quota_components(types, names), strict=True))
    if answer.error_code:
        raise Errors.for_code(answer.error_code)(answer.error_message or "")
    for entry in answer.entries or []:
        parts = {e.entity_type: e.entity_name for e in entry.entity}
        text = ", ".join(f"{QUOTA_LABEL[t]} '{parts[t]}'" if parts[t] is not None else f"the default {QUOTA_LABEL[t]}"
                         for t in ("user", "client-id", "ip") if t in parts)
        values = ", ".join(f"{v.key}={_java_double(v.value)}" for v in entry.values)
        print(f"Quota configs for {text} are {values}")


def _java_double(value: float) -> str:
    return repr(float(value)) if abs(value) < 1e7 else f"{value:.1E}".replace("E+0", "E").replace("E+", "E")


def _describe_scram(admin, names: list[str]) -> None:
    try:
        described = admin.describe_user_scram_credentials(names or None)
    except Errors.KafkaError as exc:
        print(f"Error retrieving SCRAM credential configs: {type(exc).__name__}: {exc}")
        return
    for user, found in sorted((described or {}).items()):
        if found.get("error"):
            if "does not exist" not in found["error"]:       # a user without credentials: nothing to say
                print(f"Error retrieving SCRAM credential configs for user-principal '{user}': {found['error']}")
            continue
        text = ", ".join(f"{i['mechanism'].name.replace('_', '-')}=iterations={i['iterations']}"
                         for i in found["credential_infos"])
        print(f"SCRAM credential configs for user-principal '{user}' are {text}")


# --- alter --------------------------------------------------------------------------------------

def _alter(admin, args, types, names) -> None:
    head, name = types[0], names[0]
    added = parse_add_config(args.add_config, args.add_config_file)
    deleted = parse_delete_config(args.delete_config)
    if head in ("topics", "brokers", "groups", "broker-loggers"):
        _alter_resource(admin, head, name, added, deleted)
    elif head == "ips":
        unknown = [k for k in list(added) + deleted if k not in IP_KEYS]
        if unknown:
            raise CommandError(f"Only connection quota configs can be added for 'ips' using --bootstrap-server. "
                               f"Unexpected config names: {','.join(unknown)}")
        _alter_quotas(admin, types, names, added, deleted)
    else:
        _alter_users_clients(admin, types, names, added, deleted)
    if name:
        print(f"Completed updating config for {head[:-1]} {name}.")
    else:
        print(f"Completed updating default config for {head} in the cluster.")


def _alter_resource(admin, head: str, name: str, added: dict, deleted: list[str]) -> None:
    current = dict(_resource_configs(admin, head, name, describe_all=False))
    missing = [k for k in deleted if k not in current]
    if missing:
        raise CommandError(f"Invalid config(s): {','.join(missing)}")
    ops = [(k, 0, v) for k, v in added.items()] + [(k, 1, None) for k in deleted]      # SET, DELETE
    answer = send(admin, IncrementalAlterConfigsRequest(resources=[(_resource_type(head), name, ops)],
                                                        validate_only=False), _node(head, name))
    for response in answer.responses:
        if response.error_code:
            raise Errors.for_code(response.error_code)(response.error_message or "")


def _alter_users_clients(admin, types, names, added, deleted) -> None:
    quota_add = {k: v for k, v in added.items() if k in QUOTA_KEYS}
    scram_add = {k: v for k, v in added.items() if k in SCRAM}
    unknown_add = [k for k in added if k not in QUOTA_KEYS and k not in SCRAM]
    unknown_delete = [k for k in deleted if k not in QUOTA_KEYS and k not in SCRAM]
    scram_delete = [k for k in deleted if k in SCRAM]
    if types[0] == "clients" or len(types) == 2:
        if unknown_add or scram_add:
            raise CommandError(f"Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected "
                               f"config names: {_scala_list(unknown_add + list(scram_add))}")
        if unknown_delete or scram_delete:
            raise CommandError(f"Only quota configs can be deleted for 'clients' using --bootstrap-server. "
                               f"Unexpected config names: {_scala_list(unknown_delete + scram_delete)}")
    else:
        if unknown_add:
            raise CommandError(f"Only quota and SCRAM credential configs can be added for 'users' using "
                               f"--bootstrap-server. Unexpected config names: {_scala_list(unknown_add)}")
        if unknown_delete:
            raise CommandError(f"Only quota and SCRAM credential configs can be deleted for 'users' using "
                               f"--bootstrap-server. Unexpected config names: {_scala_list(unknown_delete)}")
        if scram_add or scram_delete:
            if "" in names:
                raise CommandError("The use of --entity-default or --user-defaults is not allowed with User SCRAM "
                                   "Credentials using --bootstrap-server.")
            if quota_add or [k for k in deleted if k in QUOTA_KEYS]:
                raise CommandError("Cannot alter both quota and SCRAM credential configs simultaneously for 'users' "
                                   "using --bootstrap-server.")
            _alter_scram(admin, names[0], scram_add, scram_delete)
            return
    _alter_quotas(admin, types, names, quota_add, [k for k in deleted if k in QUOTA_KEYS])


def _scala_list(items: list[str]) -> str:
    return f"List({', '.join(items)})"


def _alter_quotas(admin, types, names, added: dict, deleted: list[str]) -> None:
    entry_cls = AlterClientQuotasRequest.EntryData
    ops = []
    for key, value in added.items():
        try:
            ops.append(entry_cls.OpData(key=key, value=float(value), remove=False))
        except ValueError:
            raise CommandError(f"Cannot parse quota configuration value for {key}: {value}") from None
    ops += [entry_cls.OpData(key=k, value=0.0, remove=True) for k in deleted]
    entity = [entry_cls.EntityData(entity_type=QUOTA_TYPE[t], entity_name=n or None) for t, n in zip(types, names)]
    answer = send(admin, AlterClientQuotasRequest(entries=[entry_cls(entity=entity, ops=ops)], validate_only=False))
    for result in answer.entries:
        if result.error_code:
            raise Errors.for_code(result.error_code)(result.error_message or "")


def _alter_scram(admin, user: str, added: dict, deleted: list[str]) -> None:
    from kafka.admin import ScramMechanism, UserScramCredentialDeletion, UserScramCredentialUpsertion
    alterations = []
    for mechanism, credential in added.items():
        match = re.fullmatch(r"(?:iterations=(-?[0-9]*),)?password=(.*)", credential)
        if not match:
            raise CommandError(f"Invalid credential property {mechanism}={credential}")
        iterations = int(match.group(1)) if match.group(1) and match.group(1) != "-1" else 4096
        if iterations < 4096:
            raise CommandError(f"Iterations {iterations} is less than the minimum 4096 required for {mechanism}")
        alterations.append(UserScramCredentialUpsertion(user, ScramMechanism[mechanism.replace("-", "_")],
                                                        match.group(2), iterations=iterations))
    alterations += [UserScramCredentialDeletion(user, ScramMechanism[m.replace("-", "_")]) for m in deleted]
    result = admin.alter_user_scram_credentials(alterations)
    for outcome in (result or {}).values() if isinstance(result, dict) else []:
        if isinstance(outcome, Exception):
            raise outcome
