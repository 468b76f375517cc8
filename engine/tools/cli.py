"""What Kafka's command line tools share, for ours: a parser that stops as Kafka's
CommandLineUtils.printUsageAndExit does (the message, then the usage, on stderr; exit 1),
`--command-config` properties files, and the admin and client settings they give (Kafka's
names, engine/client_settings.py)."""
from __future__ import annotations

import argparse
import sys
import types

import kafka.errors as Errors
from kafka.admin import KafkaAdminClient

from engine.client_settings import kafka_python_settings, librdkafka_settings
from engine.connect import properties


class CommandError(Exception):
    """The command cannot go on; the message is Kafka's."""


def _usage_error(parser: argparse.ArgumentParser, message: str) -> None:
    sys.stderr.write(f"{message}\n")
    parser.print_usage(sys.stderr)
    sys.exit(1)


def add_tool(commands, name: str, help_text: str, description: str) -> argparse.ArgumentParser:
    """A subcommand parser whose usage errors exit 1, as Kafka's tools do (argparse's exit 2)."""
    parser = commands.add_parser(name, help=help_text, description=description)
    parser.error = types.MethodType(_usage_error, parser)
    return parser


def usage_error(parser: argparse.ArgumentParser, message: str) -> None:
    _usage_error(parser, message)


def load_properties(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    try:
        return properties.load(path)
    except OSError as exc:
        raise CommandError(f"{path} (No such file or directory)" if isinstance(exc, FileNotFoundError)
                           else str(exc)) from None


def property_pairs(items: list[str]) -> dict[str, str]:
    """`key=value` arguments (--property, --producer-props ...) as a dict; the later of two wins."""
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise CommandError(f"Invalid property: {item}")
        pairs[key] = value
    return pairs


def settings(bootstrap: str, config_file: str | None = None, overrides: list[str] | None = None) -> dict[str, str]:
    """Kafka-named client settings: the properties file, then `key=value` overrides, then the
    bootstrap servers given on the command line."""
    merged = load_properties(config_file)
    merged.update({key.strip(): value.strip() for key, value in property_pairs(overrides or []).items()})
    if bootstrap:
        merged["bootstrap.servers"] = bootstrap
    if not merged.get("bootstrap.servers"):
        raise CommandError("--bootstrap-server must be specified")
    return merged


def admin_client(bootstrap: str, config_file: str | None = None, *, client_id: str) -> KafkaAdminClient:
    merged = settings(bootstrap, config_file)
    merged.setdefault("client.id", client_id)
    timeout = int(merged.get("request.timeout.ms", merged.get("default.api.timeout.ms", 30000)))
    return KafkaAdminClient(request_timeout_ms=timeout, **kafka_python_settings(merged))


def rdkafka_config(merged: dict[str, str], extra_names: tuple[str, ...] = ()) -> dict:
    """librdkafka settings: the translated common ones plus Kafka names librdkafka shares."""
    config = librdkafka_settings(merged)
    config.update({k: v for k, v in merged.items() if k in extra_names})
    return config


def read_json_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise CommandError(f"{path} (No such file or directory)" if isinstance(exc, FileNotFoundError)
                           else str(exc)) from None


def tp_text(topic: str, partition: int) -> str:
    """Kafka's TopicPartition.toString()."""
    return f"{topic}-{partition}"


def send(admin: KafkaAdminClient, request, node_id: int | None = None):
    """One request through the admin client's connections (for the APIs it has no call for)."""
    async def _send():
        return await admin._manager.send(request, node_id=node_id)
    return admin._manager.run(_send)


def error_message(exc: Exception) -> str:
    """The message of an error as Kafka's Java exception carries it (kafka-python's errors
    print `[Error 40] InvalidConfigurationError: the message`; Kafka prints the message)."""
    text = str(exc)
    if isinstance(exc, Errors.KafkaError):
        prefix = f"{type(exc).__name__}: "
        text = text.split(prefix, 1)[1] if prefix in text else text
        if text.startswith("[Error") and "]" in text:
            text = text.split("]", 1)[1].strip()
        if not text or text == type(exc).__name__:
            text = getattr(exc, "description", "") or type(exc).__name__
    return text


def java_exception_line(exc: Exception) -> str:
    """`org.apache.kafka.common.errors.InvalidConfigurationException: message`, the first line
    of the stack trace Kafka's tools print."""
    name = type(exc).__name__
    if isinstance(exc, Errors.KafkaError):
        name = "org.apache.kafka.common.errors." + (name[:-5] + "Exception" if name.endswith("Error") else name)
    return f"{name}: {error_message(exc)}"
