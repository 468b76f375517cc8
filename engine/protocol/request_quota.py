"""Request quotas (KIP-124): `request_percentage`, the share of the broker's request handling a
client may use, as a percentage of one thread (100: a whole thread's time).

Kafka measures the time its request handler and network threads spend on a client's
requests. The engine handles every request on one event loop and sends its heaviest pieces
to worker threads, so it measures both:
- the loop's time on the request - decoding it, its handler, encoding the answer - step by
  step between its awaits (`Timed`): waiting for replication, for a long poll or for the disk
  does not count;
- the worker threads' CPU time on the request (engine/worker_time.py): decoding a big request
  and encoding its answer (big_requests.py), checking compressed batches
  (engine/broker/record_checks.py).
That time goes into the client's rate, measured over Kafka's quota windows
(engine/broker/byte_rate_quota.py, in hundredths of a second per second: a percentage of one
thread). Over its quota, the answer carries `throttle_time_ms` - Kafka's
ClientRequestQuotaManager's, (rate - quota) / quota x window, capped at one quota window - and
the connection is muted for that long (KIP-219, channel_mute.py). The throttle is decided once
the handler is done (`record`); the rest of the request's time on the loop and on worker
threads - decoding the request, encoding the answer - is counted once the answer is ready,
without throttling it (`record_after_answer`), for the client's next requests, as Kafka counts
its network threads' time on reading a request and sending its response.

Which client's quota: the first entity in Kafka's order that sets `request_percentage`, for the
connection's user and client id (engine/cluster/client_quotas.py). Not counted, as in Kafka:
the brokers' own connections, and ApiVersions, SaslHandshake and SaslAuthenticate (a client
must always be able to connect). Requests of clients without the quota are not timed.

Owned by the broker's event loop; not thread-safe.
"""
from __future__ import annotations

import time

from engine.cluster import client_quotas as CQ
from engine.protocol.channel_mute import mute_for

REQUEST_PERCENTAGE = "request_percentage"
EXEMPT_APIS = frozenset({18, 17, 36})        # ApiVersions, SaslHandshake, SaslAuthenticate


class Timed:
    """Awaits a coroutine, adding the time each of its steps runs to `spent` (seconds)."""

    __slots__ = ("_coroutine", "spent")

    def __init__(self, coroutine) -> None:
        self._coroutine = coroutine
        self.spent = 0.0

    def __await__(self):
        coroutine, value, error = self._coroutine, None, None
        while True:
            started = time.perf_counter()
            try:
                yielded = coroutine.throw(error) if error is not None else coroutine.send(value)
            except StopIteration as done:
                self.spent += time.perf_counter() - started
                return done.value
            except BaseException:
                self.spent += time.perf_counter() - started
                raise
            self.spent += time.perf_counter() - started
            value, error = None, None
            try:
                value = yield yielded
            except BaseException as exc:   # a cancellation, say: the handler gets to handle it
                error = exc


class Charged:
    """The loop's time already counted against the client when its throttle was decided."""

    __slots__ = ("loop_s",)

    def __init__(self) -> None:
        self.loop_s = 0.0


def quota_of(ctx, api_key: int):
    """The broker's request quota if this request counts against one, else None."""
    quota = getattr(ctx.broker, "request_quota", None)      # absent on test doubles of a broker
    if quota is None or ctx.inter_broker_peer is not None or api_key in EXEMPT_APIS:
        return None
    if CQ.resolve(ctx.broker.image.client_quotas, REQUEST_PERCENTAGE, CQ.user_of(ctx), ctx.client_id or "") is None:
        return None
    return quota


def record(ctx, quota, spent_s: float) -> int:
    """Count `spent_s` of the request's time against the client; the throttle time in ms (the
    connection is muted for it), capped at one quota window as Kafka caps request throttles."""
    throttle_ms = quota.record(spent_s * 100, client_id=ctx.client_id, user=CQ.user_of(ctx))
    if throttle_ms:
        throttle_ms = min(throttle_ms, ctx.broker.config.get("quota.window.size.seconds") * 1000)
        mute_for(throttle_ms)
    return throttle_ms


def record_after_answer(ctx, quota, spent_s: float) -> None:
    """Count `spent_s`, spent after the throttle was decided, against the client without
    throttling this answer: it weighs on the client's next requests."""
    if spent_s:
        quota.record(spent_s * 100, client_id=ctx.client_id, user=CQ.user_of(ctx))
