"""The REST API's errors, as Kafka Connect maps them (ConnectExceptionMapper): a status code
and `{"error_code": status, "message": ...}`. NotLeader and NotAssigned carry the URL of the
worker that can answer, and the REST layer forwards the request there."""
from __future__ import annotations


class ConnectRestError(Exception):
    status = 500

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status

    def body(self) -> dict:
        return {"error_code": self.status, "message": str(self)}


class BadRequest(ConnectRestError):
    status = 400


class NotFound(ConnectRestError):
    status = 404


class AlreadyExists(ConnectRestError):
    status = 409


class Conflict(ConnectRestError):
    status = 409


class RebalanceStarted(Conflict):
    """The leader's group began a rebalance while a change waited for it: the herder runs the
    change again once the rebalance completes (a caller that cannot wait gets the 409)."""


class RequestTimeout(ConnectRestError):
    status = 500


class NotLeader(ConnectRestError):
    """This worker cannot do it; the leader (at `url`) can."""
    status = 409

    def __init__(self, message: str, url: str | None) -> None:
        super().__init__(message)
        self.url = url


class NotAssigned(NotLeader):
    """Another worker runs the connector or task (at `url`)."""


REBALANCING = ("Cannot complete request because of a conflicting operation (e.g. worker rebalance)")
STALE_CONFIG = ("Cannot complete request momentarily due to stale configuration (typically caused by a concurrent "
                "config change)")
