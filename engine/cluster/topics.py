"""Topic name rules, as Kafka's `org.apache.kafka.common.internals.Topic`."""
from __future__ import annotations

import re

import kafka.errors as Errors

from engine.cluster import internal_topics
from engine.errors import ApiError

MAX_NAME_LENGTH = 249
# fullmatch, not ^...$: "$" also matches before a trailing newline, and a name that passed
# here but not the log dir's own check would be in the metadata with no log to open.
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")
INTERNAL_TOPICS = internal_topics.INTERNAL_TOPICS


def validate_topic_name(name: str | None) -> None:
    if not name:
        raise ApiError(Errors.InvalidTopicError, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise ApiError(Errors.InvalidTopicError, "Topic name cannot be \".\" or \"..\"")
    if len(name) > MAX_NAME_LENGTH:
        raise ApiError(Errors.InvalidTopicError,
                       f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, topic name: {name}")
    if not _LEGAL.fullmatch(name):
        raise ApiError(Errors.InvalidTopicError,
                       f"Topic name \"{name}\" is illegal, it contains a character other than "
                       "ASCII alphanumerics, '.', '_' and '-'")


def is_legal_name(name: str) -> bool:
    return name not in (".", "..") and len(name) <= MAX_NAME_LENGTH and bool(_LEGAL.fullmatch(name))


def collision_key(name: str) -> str:
    """Kafka refuses topics that differ only by '.' versus '_' (their metric names collide)."""
    return name.replace(".", "_")


def colliding_internal_topic(name: str) -> str | None:
    """The internal topic that `name` differs from only by '.' versus '_', or None. Once such a
    topic exists, the collision rule would refuse the internal topic itself, which a broker
    creates only on first use: so the client's topic is refused instead."""
    key = collision_key(name)
    return next((t for t in sorted(INTERNAL_TOPICS) if t != name and collision_key(t) == key), None)
