"""A connector's config as Connect reads it: Connect's own keys (ConnectorConfig,
SinkConnectorConfig) before the connector's, and the validation the REST API answers
(`/connector-plugins/{p}/config/validate`, and before every create or update) in Connect's
ConfigInfos shape: the plugin's name, the error count, the groups, and per key its
definition and its value with errors.
"""
from __future__ import annotations

import re
from typing import Any

from engine.connect.api import Connector, SinkConnector
from engine.connect.config_def import (BOOLEAN, HIGH, INT, LIST, LONG, LOW, MEDIUM, STRING, ConfigDef, ConfigError,
                                       ConfigValue, at_least, one_of)
from engine.connect.plugins import PluginNotFound, Plugins
from engine.connect.transforms import TransformationChain, TransformConfigError, enrich

COMMON, TRANSFORMS, PREDICATES, ERRORS = "Common", "Transforms", "Predicates", "Error Handling"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ConfigValidationError(ValueError):
    """Connect's 400 on create or update: every field's errors, in Connect's words."""


def _name(name: str, value: Any) -> None:
    if value is None or not str(value).strip():
        raise ConfigError(name, value, "String may not be empty")
    controls = _CONTROL.findall(str(value))
    if controls:
        raise ConfigError(name, value, "String may not contain control sequences but had the following ASCII "
                                       "chars: " + ", ".join(str(ord(c)) for c in controls))


def _converter(name: str, value: Any) -> None:
    from engine.connect.converters import converter_class
    if value and converter_class(value) is None:
        raise ConfigError(name, value, f"Class {value} could not be found.")


def connector_def(*, sink: bool) -> ConfigDef:
    d = ConfigDef()
    d.define("name", STRING, importance=HIGH, documentation="Globally unique name to use for this connector.",
             validator=_name, group=COMMON, order_in_group=1, width="MEDIUM", display_name="Connector name")
    d.define("connector.class", STRING, importance=HIGH, group=COMMON, order_in_group=2, width="LONG",
             display_name="Connector class",
             documentation="Name or alias of the class for this connector. Must be a subclass of SourceConnector "
                           "or SinkConnector. If the connector is org.apache.kafka.connect.file."
                           "FileStreamSinkConnector, you can either specify this full name, or use "
                           "\"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit "
                           "shorter")
    d.define("tasks.max", INT, 1, HIGH, "Maximum number of tasks to use for this connector.",
             validator=at_least(1), group=COMMON, order_in_group=3, width="SHORT", display_name="Tasks max")
    d.define("key.converter", STRING, None, LOW, "Converter class used to convert between Kafka Connect format and "
             "the serialized form that is written to Kafka. Overrides the worker's key.converter.",
             validator=_converter, group=COMMON, order_in_group=5, width="SHORT", display_name="Key converter class")
    d.define("value.converter", STRING, None, LOW, "Converter class for values. Overrides the worker's "
             "value.converter.", validator=_converter, group=COMMON, order_in_group=6, width="SHORT",
             display_name="Value converter class")
    if sink:
        d.define("topics", LIST, "", HIGH, "List of topics to consume, separated by commas", group=COMMON,
                 order_in_group=4, width="LONG", display_name="Topics")
        d.define("topics.regex", STRING, "", HIGH, "Regular expression giving topics to consume. Under the hood, "
                 "the regex is compiled to a java.util.regex.Pattern. Only one of topics or topics.regex should "
                 "be specified.", group=COMMON, order_in_group=4, width="LONG", display_name="Topics regex")
    d.define("transforms", LIST, "", LOW, "Aliases for the transformations to be applied to records.",
             group=TRANSFORMS, order_in_group=1, width="LONG", display_name="Transforms")
    d.define("predicates", LIST, "", LOW, "Aliases for the predicates used by transformations.",
             group=PREDICATES, order_in_group=1, width="LONG", display_name="Predicates")
    d.define("errors.retry.timeout", LONG, 0, MEDIUM, "The maximum duration in milliseconds that a failed "
             "operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 "
             "for infinite retries.", group=ERRORS, order_in_group=1, width="MEDIUM",
             display_name="Retry Timeout for Errors")
    d.define("errors.tolerance", STRING, "none", MEDIUM, "Behavior for tolerating errors during connector "
             "operation. 'none' is the default value and signals that any error will result in an immediate "
             "connector task failure; 'all' changes the behavior to skip over problematic records.",
             validator=one_of("none", "all", case_insensitive=True), group=ERRORS, order_in_group=3,
             width="SHORT", display_name="Error Tolerance")
    d.define("errors.log.enable", BOOLEAN, False, MEDIUM, "If true, write each error and the details of the failed "
             "operation and problematic record to the Connect application log.", group=ERRORS, order_in_group=4,
             width="SHORT", display_name="Log Errors")
    if sink:
        d.define("errors.deadletterqueue.topic.name", STRING, "", MEDIUM, "The name of the topic to be used as the "
                 "dead letter queue (DLQ) for messages that result in an error when processed by this sink "
                 "connector, or its transformations or converters. The topic name is blank by default, which "
                 "means that no messages are to be recorded in the DLQ.", group=ERRORS, order_in_group=6,
                 width="MEDIUM", display_name="Dead Letter Queue Topic Name")
        d.define("errors.deadletterqueue.topic.replication.factor", INT, 3, MEDIUM, "Replication factor used to "
                 "create the dead letter queue topic when it doesn't already exist.", validator=at_least(1),
                 group=ERRORS, order_in_group=7, width="MEDIUM",
                 display_name="Dead Letter Queue Topic Replication Factor")
        d.define("errors.deadletterqueue.context.headers.enable", BOOLEAN, False, MEDIUM, "If true, add headers "
                 "containing error context to the messages written to the dead letter queue. To avoid clashing "
                 "with headers from the original record, all error context "
                 "header keys will start with __connect.errors.", group=ERRORS, order_in_group=8, width="MEDIUM",
                 display_name="Enable Error Context Headers")
    return d


def _sink_topics(props: dict[str, str], results: dict[str, ConfigValue]) -> None:
    topics = [t.strip() for t in (props.get("topics") or "").split(",") if t.strip()]
    regex = (props.get("topics.regex") or "").strip()
    if topics and regex:
        message = "topics and topics.regex are mutually exclusive options, but both are set."
        results["topics"].errors.append(message)
        results["topics.regex"].errors.append(message)
    elif not topics and not regex:
        message = "Must configure one of topics or topics.regex"
        results["topics"].errors.append(message)
        results["topics.regex"].errors.append(message)
    if regex:
        try:
            re.compile(regex)
        except re.error as exc:
            results["topics.regex"].errors.append(f"Invalid value {regex} for configuration topics.regex: {exc}")
    dead_letters = (props.get("errors.deadletterqueue.topic.name") or "").strip()
    if dead_letters and dead_letters in topics:
        results["errors.deadletterqueue.topic.name"].errors.append(
            f"The DLQ topic '{dead_letters}' may not be included in the list of topics ('topics="
            f"{props.get('topics')}') consumed by the connector")


def validate(plugins: Plugins, props: dict[str, Any], *, worker_group: str | None = None) -> dict:
    """ConfigInfos for `props`. PluginNotFound (404 at the REST API) when its connector.class
    names no plugin; a missing connector.class is Connect's 400 (ConfigValidationError)."""
    if not props.get("connector.class"):
        raise ConfigValidationError(f"Connector config {_java_map(props)} contains no connector type")
    plugin = plugins.connector(str(props["connector.class"]))
    connector: Connector = plugin.cls()
    sink = issubclass(plugin.cls, SinkConnector)
    base = connector_def(sink=sink)
    enrich(base, {k: str(v) for k, v in props.items() if v is not None})
    results = base.validate(props)
    try:
        TransformationChain({k: str(v) for k, v in props.items() if v is not None})
    except TransformConfigError as exc:
        enriched = [v for k, v in results.items() if k.startswith(("transforms.", "predicates."))]
        if not any(v.errors for v in enriched):      # a missing key is already said on its own field
            results["transforms"].errors.append(str(exc))
    if sink:
        _sink_topics(props, results)
        name = props.get("name")
        if worker_group and name and f"connect-{name}" == worker_group:
            results["name"].errors.append(f"Consumer group for sink connector named {name} conflicts with Connect "
                                          f"worker group {worker_group}")
    own = connector.config()
    try:
        connector_results = connector.validate({k: v for k, v in props.items() if v is not None})
    except Exception as exc:        # a plugin's validate() failing is an error of the config, not a 500
        connector_results = {}
        results["connector.class"].errors.append(f"Failed to perform config validation for "
                                                 f"{plugin.name}: {exc}")
    for key, value in props.items():
        if value is None:
            results.setdefault(key, ConfigValue(key)).errors.append(
                "Null value can not be supplied as the configuration value.")
    merged = base.merged(own)
    configs = []
    for name, key in merged.keys.items():
        value = results.get(name) if name in base.keys else connector_results.get(name, results.get(name))
        value = value or ConfigValue(name, props.get(name))
        configs.append({"definition": key.info(), "value": value.info(key)})
    errors = sum(len(c["value"]["errors"]) for c in configs)
    return {"name": plugin.name, "error_count": errors, "groups": merged.groups, "configs": configs}


def raise_for_errors(infos: dict) -> None:
    """Connect's 400 message when `infos` has errors (AbstractHerder.maybeAddConfigErrors)."""
    if not infos["error_count"]:
        return
    lines = [f"Connector configuration is invalid and contains the following {infos['error_count']} error(s):"]
    lines += [message for config in infos["configs"] for message in config["value"]["errors"]]
    lines.append("You can also find the above list of errors at the endpoint "
                 "`/connector-plugins/{connectorType}/config/validate`")
    raise ConfigValidationError("\n".join(lines))


def plugin_config(plugins: Plugins, name: str) -> list[dict]:
    """`GET /connector-plugins/{p}/config`: the plugin's own keys (Connect's ConfigKeyInfo)."""
    plugin = plugins.plugin(name)
    if plugin.type == "converter":
        return [] if plugin.name != "org.apache.kafka.connect.json.JsonConverter" else [
            ConfigDef().define("schemas.enable", BOOLEAN, True, HIGH, "Include schemas within each of the "
                               "serialized values and keys.").keys["schemas.enable"].info()]
    return [key.info() for key in plugin.cls().config().keys.values()]


def _java_map(props: dict) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in props.items()) + "}"


def tasks_max(props: dict[str, str]) -> int:
    try:
        return max(1, int(props.get("tasks.max", "1")))
    except (TypeError, ValueError):
        return 1


def sink_topics(props: dict[str, str]) -> tuple[list[str], str]:
    return [t.strip() for t in (props.get("topics") or "").split(",") if t.strip()], \
        (props.get("topics.regex") or "").strip()


__all__ = ["PluginNotFound", "ConfigValidationError", "validate", "raise_for_errors", "plugin_config",
           "connector_def", "tasks_max", "sink_topics"]
