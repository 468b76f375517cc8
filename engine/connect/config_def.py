"""Kafka's ConfigDef for connectors and workers: typed keys with defaults, validators,
documentation and groups, parsed from string properties and validated key by key.

A connector declares its keys with `ConfigDef().define(...)` as a Java connector does;
`validate(props)` answers one ConfigValue per key with Kafka's error texts ("Invalid value x
for configuration batch.size: Not a number of type INT", "Missing required configuration
\"topic\" which has no default value."), which the REST API returns from
`/connector-plugins/{p}/config/validate`; `parse(props)` returns typed values or raises the
first error as a ConfigError. An error of a PASSWORD key reads `[hidden]` for its value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = (
    "BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD")
HIGH, MEDIUM, LOW = "HIGH", "MEDIUM", "LOW"
NONE, SHORT_WIDTH, MEDIUM_WIDTH, LONG_WIDTH = "NONE", "SHORT", "MEDIUM", "LONG"
HIDDEN = "[hidden]"      # how a PASSWORD value reads everywhere, as Kafka's Password prints


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT_VALUE"


NO_DEFAULT_VALUE = _NoDefault()
_INT_RANGE = {INT: (-2**31, 2**31 - 1), SHORT: (-2**15, 2**15 - 1), LONG: (-2**63, 2**63 - 1)}


class ConfigError(ValueError):
    """Kafka's ConfigException: `Invalid value V for configuration N: reason`."""

    def __init__(self, name: str, value: Any = None, reason: str | None = None, *, message: str | None = None):
        self.name = name
        self.reason = reason
        self._worded = message is not None
        super().__init__(message or f"Invalid value {_text(value)} for configuration {name}"
                                    + (f": {reason}" if reason else ""))

    def hiding(self, value: Any) -> "ConfigError":
        """The error as it reads for a PASSWORD key's `value`: `[hidden]` where the value was,
        as Kafka prints a Password, so no answer, page or log shows the secret."""
        if not self._worded:
            return ConfigError(self.name, HIDDEN, self.reason)
        if value in (None, ""):
            return ConfigError(self.name, message=str(self))
        return ConfigError(self.name, message=str(self).replace(_text(value), HIDDEN))


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


# --- validators: callables (name, value) raising ConfigError ---------------------------------

def non_empty_string(name: str, value: Any) -> None:
    if value is not None and not str(value):
        raise ConfigError(name, value, "String must be non-empty")


def at_least(minimum: float) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, value, "Value must be non-null")
        if value < minimum:
            raise ConfigError(name, value, f"Value must be at least {minimum}")
    check.describe = f"[{minimum},...]"
    return check


def between(minimum: float, maximum: float) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, value, "Value must be non-null")
        if value < minimum:
            raise ConfigError(name, value, f"Value must be at least {minimum}")
        if value > maximum:
            raise ConfigError(name, value, f"Value must be no more than {maximum}")
    check.describe = f"[{minimum},...,{maximum}]"
    return check


def one_of(*choices: str, case_insensitive: bool = False) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        found = (str(value).lower() in [c.lower() for c in choices]) if case_insensitive else value in choices
        if not found:
            suffix = " (case insensitive)" if case_insensitive else ""
            raise ConfigError(name, value, f"String must be one of{suffix}: {', '.join(choices)}")
    check.describe = "[" + ", ".join(choices) + "]"
    return check


@dataclass
class ConfigKey:
    name: str
    type: str
    default: Any
    importance: str
    documentation: str
    validator: Callable[[str, Any], None] | None = None
    group: str | None = None
    order_in_group: int = -1
    width: str = NONE
    display_name: str | None = None
    dependents: list[str] = field(default_factory=list)
    recommender: Callable[[dict], list] | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT_VALUE

    def info(self) -> dict:
        """Connect's ConfigKeyInfo (REST `definition`)."""
        return {"name": self.name, "type": self.type, "required": not self.has_default,
                "default_value": None if not self.has_default else _as_string(self.default, self.type),
                "importance": self.importance, "documentation": self.documentation, "group": self.group,
                "width": self.width, "display_name": self.display_name or self.name,
                "dependents": list(self.dependents), "order": self.order_in_group}


@dataclass
class ConfigValue:
    """One key's outcome of a validation (Connect's ConfigValueInfo)."""
    name: str
    value: Any = None
    recommended_values: list = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    def info(self, key: ConfigKey | None) -> dict:
        shown = self.value
        if key is not None and key.type == PASSWORD and shown is not None:
            shown = HIDDEN
        elif shown is not None and key is not None:
            shown = _as_string(shown, key.type)
        return {"name": self.name, "value": shown, "recommended_values": list(self.recommended_values),
                "errors": list(self.errors), "visible": self.visible}


def _as_string(value: Any, config_type: str) -> str | None:
    if value is None:
        return None
    if config_type == PASSWORD:
        return HIDDEN
    if config_type == LIST:
        return ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
    if config_type == BOOLEAN:
        return str(bool(value)).lower() if isinstance(value, bool) else str(value)
    return str(value)


def parse_value(name: str, value: Any, config_type: str) -> Any:
    """A string (or already typed) value as its type; Kafka's messages when it is not."""
    if value is None:
        return None
    text = value.strip() if isinstance(value, str) else value
    if config_type == BOOLEAN:
        if isinstance(text, bool):
            return text
        if isinstance(text, str) and text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise ConfigError(name, value, "Expected value to be either true or false")
    if config_type in (STRING, PASSWORD, CLASS):
        if not isinstance(text, str):
            raise ConfigError(name, value, f"Expected value to be a string, but it was a {type(value).__name__}")
        return value if config_type == PASSWORD else text
    if config_type in _INT_RANGE:
        try:
            number = int(text) if not isinstance(text, bool) else None
        except (TypeError, ValueError):
            number = None
        low, high = _INT_RANGE[config_type]
        if number is None or not low <= number <= high:
            raise ConfigError(name, value, f"Not a number of type {config_type}")
        return number
    if config_type == DOUBLE:
        try:
            return float(text)
        except (TypeError, ValueError):
            raise ConfigError(name, value, f"Not a number of type {config_type}") from None
    if config_type == LIST:
        if isinstance(text, list):
            return text
        if not isinstance(text, str):
            raise ConfigError(name, value, "Expected a comma separated list.")
        return [] if not text else [item.strip() for item in text.split(",")]
    raise ConfigError(name, value, f"Unknown type {config_type}")


class ConfigDef:
    """An ordered set of ConfigKeys (Kafka's ConfigDef). `define` returns self to chain."""

    def __init__(self, keys: list[ConfigKey] | None = None) -> None:
        self.keys: dict[str, ConfigKey] = {}
        self.groups: list[str] = []
        for key in keys or []:
            self._add(key)

    def define(self, name: str, config_type: str, default: Any = NO_DEFAULT_VALUE, importance: str = MEDIUM,
               documentation: str = "", *, validator=None, group: str | None = None, order_in_group: int = -1,
               width: str = NONE, display_name: str | None = None, dependents: list[str] | None = None,
               recommender=None) -> "ConfigDef":
        if default is not NO_DEFAULT_VALUE and default is not None:
            default = parse_value(name, default, config_type)
        return self._add(ConfigKey(name, config_type, default, importance, documentation, validator, group,
                                   order_in_group, width, display_name, dependents or [], recommender))

    def _add(self, key: ConfigKey) -> "ConfigDef":
        if key.name in self.keys:
            raise ConfigError(key.name, message=f"Configuration {key.name} is defined twice.")
        self.keys[key.name] = key
        if key.group and key.group not in self.groups:
            self.groups.append(key.group)
        return self

    def merged(self, other: "ConfigDef") -> "ConfigDef":
        """This definition and the keys of `other` it lacks (a connector's own after Connect's)."""
        merged = ConfigDef(list(self.keys.values()))
        for key in other.keys.values():
            if key.name not in merged.keys:
                merged._add(key)
        return merged

    def parse(self, props: dict[str, Any]) -> dict[str, Any]:
        """Typed values of every key; the first invalid or missing one raises ConfigError."""
        values = {}
        for key in self.keys.values():
            values[key.name] = self._parse_key(key, props)
        return values

    def _parse_key(self, key: ConfigKey, props: dict[str, Any]) -> Any:
        if key.type != PASSWORD:
            return self._parse_typed(key, props)
        try:
            return self._parse_typed(key, props)
        except ConfigError as exc:
            raise exc.hiding(props.get(key.name)) from None

    def _parse_typed(self, key: ConfigKey, props: dict[str, Any]) -> Any:
        if key.name in props:
            value = parse_value(key.name, props[key.name], key.type)
        elif key.has_default:
            value = key.default
        else:
            raise ConfigError(key.name, message=f'Missing required configuration "{key.name}" which has no '
                                                f'default value.')
        if key.validator is not None and (value is not None or key.name in props):
            key.validator(key.name, value)
        return value

    def validate(self, props: dict[str, Any]) -> dict[str, ConfigValue]:
        """Every key checked on its own: each ConfigValue lists that key's errors (none: valid)."""
        results = {}
        for key in self.keys.values():
            outcome = ConfigValue(key.name, props.get(key.name, key.default if key.has_default else None))
            try:
                outcome.value = self._parse_key(key, props)
            except ConfigError as exc:
                outcome.errors.append(str(exc))
            if key.recommender is not None:
                try:
                    outcome.recommended_values = list(key.recommender(props))
                except Exception:   # a plugin's recommender must not break validation
                    outcome.recommended_values = []
            results[key.name] = outcome
        return results
