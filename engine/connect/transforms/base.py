"""What every transform and predicate builds on: the two errors, `Configured` (a class's config
`keys`, which validation lists through registry.enrich, and the check that a required one is
set), the `Transform` base, and the parsers of the config values the built-ins read.

Each parser refuses a bad value with Kafka's message as a TransformConfigError (the connector's
400): a regex (Python's `re`, which reads Java's syntax the same for the usual patterns), a
SimpleDateFormat pattern (engine/connect/date_format.py's letters), one of a set of strings
(case matters, as in Kafka's ValidString), a boolean, an int. A list is split on commas and its
items stripped, blanks dropped.
"""
from __future__ import annotations

import re

from engine.connect.api import DataError
from engine.connect.date_format import DateFormat, DateFormatError


class TransformConfigError(ValueError):
    """A transform or predicate config Connect would refuse (the connector's 400)."""

    # The package's name for it, as before the package was split: tracebacks and the dead letter
    # queue's exception.class.name header (dead_letter.class_name_of) read it.
    __module__ = "engine.connect.transforms"


class TransformError(DataError):
    """A transform failed on a record; `class_name` is the transform's (Kafka's name)."""

    __module__ = "engine.connect.transforms"    # as TransformConfigError's

    def __init__(self, message: str, class_name: str) -> None:
        super().__init__(message)
        self.class_name = class_name


class Configured:
    """A transform or predicate with its config keys, `keys`: (name, documentation[, type,
    required]), which Connect's validation lists; `configure` refuses a required one left empty."""

    keys: tuple[tuple, ...] = ()

    def configure(self, props: dict[str, str]) -> None:
        for spec in self.keys:
            if len(spec) > 3 and spec[3] and not str(props.get(spec[0]) or "").strip():
                raise TransformConfigError(f"Missing required configuration \"{spec[0]}\" which has no default "
                                           "value.")


class Transform(Configured):
    """One transform: `configure` checks and keeps its config, `apply` returns the new record or None."""

    def __init__(self, which: str = "value") -> None:
        self.which = which

    def apply(self, record):
        raise NotImplementedError


def props_list(props: dict, key: str) -> list[str]:
    return [item.strip() for item in str(props.get(key) or "").split(",") if item.strip()]


def props_pattern(props: dict[str, str], key: str) -> re.Pattern:
    """A regex config compiled (Java's syntax reads the same for the usual patterns)."""
    try:
        return re.compile(props[key])
    except re.error as exc:
        raise TransformConfigError(f"Invalid value {props[key]} for configuration {key}: {exc}") from None


def props_date_format(props: dict[str, str], key: str) -> DateFormat | None:
    """A SimpleDateFormat config as a DateFormat; None when blank."""
    pattern = props.get(key) or ""
    if not pattern.strip():
        return None
    try:
        return DateFormat(pattern)
    except DateFormatError as exc:
        raise TransformConfigError(f"Invalid value {pattern} for configuration {key}: {exc}") from None


def props_choice(props: dict[str, str], key: str, choices: tuple[str, ...], default: str | None = None) -> str:
    """A string config that must be one of `choices` (case matters, as in Kafka's ValidString)."""
    value = str(props.get(key) or "").strip() or default
    if value not in choices:
        raise TransformConfigError(f"Invalid value {value} for configuration {key}: String must be one of: "
                                   f"{', '.join(choices)}")
    return value


def props_boolean(props: dict[str, str], key: str, default: bool) -> bool:
    text = str(props.get(key) or "").strip().lower() or str(default).lower()
    if text not in ("true", "false"):
        raise TransformConfigError(f"Invalid value {props.get(key)} for configuration {key}: Expected value to be "
                                   "either true or false")
    return text == "true"


def props_int(props: dict[str, str], key: str) -> int | None:
    text = str(props.get(key) or "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise TransformConfigError(f"Invalid value {text} for configuration {key}: Not a number of type INT") from None
