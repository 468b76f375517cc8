"""Turning Kafka failures into sentences a console user can act on."""
from __future__ import annotations

import functools

import kafka.errors as Errors

from console.errors import ConsoleError

_UNREACHABLE = (Errors.KafkaConnectionError, Errors.NodeNotReadyError, Errors.MetadataEmptyBrokerList)


class GatewayError(ConsoleError):
    """A Kafka request failed; the message says why in words, with Kafka's error name."""


class NotAuthorized(GatewayError):
    """The cluster refused the console's principal (an ACL): a page shows "not authorized"
    for what it could not read, and keeps the rest (console.web.not_authorized)."""


# TOPIC_, GROUP_, CLUSTER_, TRANSACTIONAL_ID_, DELEGATION_TOKEN_AUTHORIZATION_FAILED.
AUTHORIZATION_CODES = frozenset({29, 30, 31, 53, 65})


def not_authorized_note(what: str, exc: NotAuthorized) -> str:
    """The line a page shows in place of what the cluster would not let it read."""
    return f"{what}: not authorized. The cluster refused the console's principal ({exc.kafka_code})."


def code_label(code: int) -> str:
    """Kafka's name and number for an error code: "INVALID_CONFIG (40)"."""
    return f"{Errors.for_code(code).message} ({code})"


def error_for_code(code: int, message: str | None = None) -> GatewayError:
    """A GatewayError that reads as a sentence, with the broker's own words and Kafka's code apart."""
    error = Errors.for_code(code)
    sentence = error.description.rstrip(".") + "." if error.description else error.message
    if message and message not in sentence:
        sentence = f"{sentence} The cluster said: {message.rstrip('.')}."
    kind = NotAuthorized if code in AUTHORIZATION_CODES else GatewayError
    return kind(sentence, kafka_code=code_label(code))


def describe_error_code(code: int, message: str | None = None) -> str:
    """`Topic with this name already exists. (TOPIC_ALREADY_EXISTS: Topic 'x' already exists.)`"""
    error = Errors.for_code(code)
    detail = f"{error.message}: {message}" if message else error.message
    return f"{error.description} ({detail})"


def readable(exc: BaseException) -> str:
    if isinstance(exc, Errors.KafkaTimeoutError):
        return f"The cluster did not answer in time ({exc})."
    if isinstance(exc, _UNREACHABLE):
        return f"Cannot reach the cluster: {exc}."
    if isinstance(exc, Errors.BrokerResponseError):
        detail = exc.args[0] if exc.args and isinstance(exc.args[0], str) and len(exc.args[0]) < 300 else ""
        return f"{exc.description} ({exc.message}{': ' + detail if detail else ''})"
    if isinstance(exc, Errors.KafkaError):
        return f"Kafka error: {type(exc).__name__}: {exc}"
    if isinstance(exc, OSError):
        return f"Network error: {exc}"
    return str(exc)


def gateway_error(exc: BaseException) -> GatewayError:
    if isinstance(exc, Errors.BrokerResponseError) and getattr(exc, "errno", None) is not None:
        detail = exc.args[0] if exc.args and isinstance(exc.args[0], str) and len(exc.args[0]) < 300 else None
        return error_for_code(exc.errno, detail)
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
