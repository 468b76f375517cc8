"""Errors the console shows to people: every message is meant to be read in a page."""


class ConsoleError(Exception):
    """A failure with a message fit for a page or a JSON `error` field."""

    @property
    def message(self) -> str:
        return str(self)


class InvalidInput(ConsoleError):
    """The request itself is wrong (bad form value, unknown broker id...)."""


class NotFound(ConsoleError):
    """The topic, broker or cluster asked for does not exist."""
