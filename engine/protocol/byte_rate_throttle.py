"""Byte-rate client quotas (KIP-13) as Produce and Fetch apply them, and KIP-219's answer: a
throttled Produce is served in full (records appended), a throttled Fetch is answered empty;
either response carries `throttle_time_ms`, and the connection is muted for that long
(engine/protocol/channel_mute.py).

Requests of the engine's own replica fetchers (replica_id >= 0) are not counted, as Kafka
exempts replication from client quotas; replication has its own throttle
(engine/broker/throttle.py)."""
from __future__ import annotations

from engine.broker.byte_rate_quota import FETCH, PRODUCE
from engine.cluster.client_quotas import user_of
from engine.protocol.channel_mute import mute_for


def throttle_produce(ctx, record_bytes: int) -> int:
    """Count a Produce request's record bytes; its throttle time in ms (the channel is muted)."""
    return _throttle(ctx, PRODUCE, record_bytes)


def throttle_fetch(ctx, response_bytes: int, *, replica_id: int) -> int:
    """Count a consumer's Fetch response bytes; its throttle time in ms (the channel is muted).
    A throttled Fetch is answered empty, so its bytes are uncounted again (Kafka's
    `unrecordQuotaSensor`): the rate holds what the consumer was actually sent."""
    if replica_id >= 0:
        return 0
    throttle_ms = _throttle(ctx, FETCH, response_bytes)
    if throttle_ms:
        ctx.broker.byte_rate_quotas[FETCH].unrecord(response_bytes, client_id=ctx.client_id, user=user_of(ctx))
    return throttle_ms


def fetch_size_limit(ctx, *, replica_id: int) -> int | None:
    """The most a consumer's Fetch may return under its consumer_byte_rate (Kafka's
    `getMaxValueInQuotaWindow`), None without a quota or for a replica."""
    quotas = getattr(ctx.broker, "byte_rate_quotas", None)
    if quotas is None or replica_id >= 0:
        return None
    limit = quotas[FETCH].max_bytes_in_window(client_id=ctx.client_id, user=user_of(ctx))
    return None if limit is None else int(limit)


def _throttle(ctx, key: str, nbytes: int) -> int:
    quotas = getattr(ctx.broker, "byte_rate_quotas", None)     # absent on test doubles of a broker
    if quotas is None:
        return 0
    throttle_ms = quotas[key].record(nbytes, client_id=ctx.client_id, user=user_of(ctx))
    mute_for(throttle_ms)
    return throttle_ms
