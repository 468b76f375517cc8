"""Errors the console shows to people: every message is meant to be read in a page.

This is the one place that turns a failure into a sentence. A refusal by the cluster reads
as what Kafka said, with Kafka's error name and code in the sentence itself, so the page,
the JSON `error` field and the audit log all carry the same words:

    The cluster refused it with INVALID_CONFIG (40): Invalid value 1h for configuration
    retention.ms: Not a number of type LONG.

A client library's own wording (kafka-python's "request being malformed by the client
library" for INVALID_REQUEST, "The following errors occured ...") never reaches a page.
"""
from __future__ import annotations

import kafka.errors as Errors


class ConsoleError(Exception):
    """A failure with a message fit for a page or a JSON `error` field. `kafka_code`, when the
    cluster refused with a Kafka error, names it ("INVALID_CONFIG (40)") for scripts and
    the audit log's `kafka_code`; the message already says it."""

    def __init__(self, message: str = "", *, kafka_code: str | None = None) -> None:
        super().__init__(message)
        self.kafka_code = kafka_code

    @property
    def message(self) -> str:
        return str(self)


class InvalidInput(ConsoleError):
    """The request itself is wrong (bad form value, unknown broker id...)."""


class NotFound(ConsoleError):
    """The topic, broker or cluster asked for does not exist."""


# Kafka's descriptions that are written for a client library's author, not for an operator.
_PLAIN_DESCRIPTIONS = {
    Errors.InvalidRequestError.errno: "The cluster refused the request as invalid",
    Errors.UnknownError.errno: "The cluster failed with an unexpected error",
    Errors.PolicyViolationError.errno: "The request breaks a policy of the cluster",
}


def code_label(code: int) -> str:
    """Kafka's name and number for an error code: "INVALID_CONFIG (40)"."""
    return f"{Errors.for_code(code).message} ({code})"


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(". ")
    return text[:1].upper() + text[1:] + "." if text else ""


def kafka_sentence(code: int, detail: str | None = None, *, hint: str | None = None, what: str = "it") -> str:
    """One sentence (two with a hint) for a Kafka error code: the cluster's own message when it
    sent one, else Kafka's description of the code; the code's name and number always.

    `what`: what was refused ("deleting records of orders-0"); `hint`: what the operator can do."""
    label = code_label(code)
    if detail and detail.strip():
        text = f"The cluster refused {what} with {label}: {detail.strip().rstrip('.')}"
    else:
        description = _PLAIN_DESCRIPTIONS.get(code) or Errors.for_code(code).description or "No reason given"
        text = f"The cluster refused {what} with {label}: {description[:1].lower()}{description[1:]}"
    return _sentence(text) + (" " + _sentence(hint) if hint else "")


def kafka_error(code: int, detail: str | None = None, *, hint: str | None = None, what: str = "it",
                error_class: type[ConsoleError] = ConsoleError) -> ConsoleError:
    """A ConsoleError (or `error_class`) for a Kafka error code, its sentence from kafka_sentence."""
    return error_class(kafka_sentence(code, detail, hint=hint, what=what), kafka_code=code_label(code))


def kafka_phrase(code: int, detail: str | None = None) -> str:
    """A short form for one item of a list: "NOT_COORDINATOR (16): This is not the correct
    coordinator." (the cluster's message when it sent one)."""
    text = detail.strip() if detail and detail.strip() else (
        _PLAIN_DESCRIPTIONS.get(code) or Errors.for_code(code).description or "no reason given")
    return f"{code_label(code)}: {_sentence(text)}"
