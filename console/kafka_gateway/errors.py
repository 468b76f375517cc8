"""Turning Kafka failures into sentences a console user can act on."""
from __future__ import annotations

import functools
import re

import kafka.errors as Errors

from console.errors import ConsoleError, kafka_error, kafka_phrase

_UNREACHABLE = (Errors.KafkaConnectionError, Errors.NodeNotReadyError, Errors.MetadataEmptyBrokerList)


class GatewayError(ConsoleError):
    """A Kafka request failed; the message says why in words, with Kafka's error name (console.errors)."""


class NotAuthorized(GatewayError):
    """The cluster refused the console's principal (an ACL): a page shows "not authorized"
    for what it could not read, and keeps the rest (console.web.not_authorized)."""


# TOPIC_, GROUP_, CLUSTER_, TRANSACTIONAL_ID_, DELEGATION_TOKEN_AUTHORIZATION_FAILED.
AUTHORIZATION_CODES = frozenset({29, 30, 31, 53, 65})


def not_authorized_note(what: str, exc: NotAuthorized) -> str:
    """The line a page shows in place of what the cluster would not let it read."""
    return f"{what}: not authorized. The cluster refused the console's principal ({exc.kafka_code})."


def error_for_code(code: int, message: str | None = None, *, hint: str | None = None, what: str = "it") -> GatewayError:
    """A GatewayError whose message is console.errors.kafka_sentence: the broker's own words
    (or Kafka's description of the code), with the code's name and number; NotAuthorized for
    Kafka's authorization failures."""
    kind = NotAuthorized if code in AUTHORIZATION_CODES else GatewayError
    return kafka_error(code, message, hint=hint, what=what, error_class=kind)


def describe_error_code(code: int, message: str | None = None) -> str:
    """A short form for one item of a list (a partition, a group): `NOT_COORDINATOR (16): This is
    not the correct coordinator.`"""
    return kafka_phrase(code, message)


# kafka-python's bootstrap failure ends in a Python list of the servers; callers name them.
_BOOTSTRAP = re.compile(r"Unable to bootstrap from .*", re.S)


def readable(exc: BaseException) -> str:
    if isinstance(exc, Errors.KafkaError) and exc.args and _BOOTSTRAP.fullmatch(str(exc.args[0])):
        return "No bootstrap server answered in time."
    if isinstance(exc, Errors.KafkaTimeoutError):
        return f"The cluster did not answer in time ({exc})."
    if isinstance(exc, _UNREACHABLE):
        return f"Cannot reach the cluster: {exc}."
    if isinstance(exc, Errors.BrokerResponseError) and getattr(exc, "errno", None) is not None:
        return kafka_phrase(exc.errno, _broker_detail(exc))
    if isinstance(exc, Errors.KafkaError):
        return f"The Kafka client failed ({type(exc).__name__}){': ' + str(exc) if str(exc) else ''}."
    if isinstance(exc, OSError):
        return f"Network error: {exc}"
    return str(exc)


def _broker_detail(exc: BaseException) -> str | None:
    """The broker's message a kafka-python error carries, if it is one (not its own boilerplate)."""
    detail = exc.args[0] if exc.args and isinstance(exc.args[0], str) and len(exc.args[0]) < 300 else None
    return detail if detail and detail != getattr(exc, "description", None) else None


def gateway_error(exc: BaseException) -> GatewayError:
    if isinstance(exc, GatewayError):
        return exc
    if isinstance(exc, Errors.BrokerResponseError) and getattr(exc, "errno", None) is not None:
        return error_for_code(exc.errno, _broker_detail(exc))
    return GatewayError(readable(exc))


def translated(method):
    """Run a gateway method; let GatewayError through and turn Kafka and socket failures into one.

    ValueError is included because kafka-python raises it for requests it refuses to build."""
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except GatewayError:
            raise
        except (Errors.KafkaError, OSError, ValueError) as exc:
            raise gateway_error(exc) from exc
    return wrapper
