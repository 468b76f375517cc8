"""ApiError: a request-level failure that maps to one of Kafka's error codes.

Controller and broker logic raise it with the kafka-python error class whose `errno` is
the wire code (`kafka.errors.InvalidTopicError` -> 17), so handlers answer with Kafka's
codes and messages without a table of their own.
"""
from __future__ import annotations

import kafka.errors as Errors


class ApiError(Exception):
    def __init__(self, error: type[Errors.BrokerResponseError], message: str | None = None) -> None:
        super().__init__(message or error.description)
        self.error = error
        self.code = error.errno
        self.message = message

    def __repr__(self) -> str:
        return f"ApiError({self.error.__name__}, {self.message!r})"
