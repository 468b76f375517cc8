"""Errors the console shows to people: every message is meant to be read in a page."""


class ConsoleError(Exception):
    """A failure with a message fit for a page or a JSON `error` field. `kafka_code`, when the
    cluster refused with a Kafka error, names it ("INVALID_CONFIG (40)") for the small print."""

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
