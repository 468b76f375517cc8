"""The controller mutation quota (KIP-599) as CreateTopics, CreatePartitions and DeleteTopics
apply it, topic by topic (engine/broker/mutation_quota.py holds the buckets). A throttled
answer mutes its connection for its throttle time, as Kafka's ControllerMutationQuotaManager
does (KIP-219; engine/protocol/channel_mute.py): a client that ignores throttle_time_ms and
asks again at once is read only when that time has passed."""
from __future__ import annotations

import kafka.errors as Errors

from engine.protocol.channel_mute import mute_for

# The first version of each API whose clients know THROTTLING_QUOTA_EXCEEDED.
QUOTA_ERROR_SINCE = {19: 6, 20: 5, 37: 3}


class MutationThrottle:
    """One request's view of its client's quota: `refused()` before a topic, `record()` after.

    throttle_time_ms, as Kafka's two kinds of quota answer it: a client that knows the error
    (strict quota) is told the wait of its last refusal; an older one (permissive quota: never
    refused) is told how long its bucket stays empty after this request."""

    def __init__(self, ctx, api_key: int) -> None:
        self._quota = ctx.broker.mutation_quota
        self._client = ctx.client_id
        self._user = ctx.principal            # the SASL user, else ANONYMOUS: quotas by user apply
        self._may_refuse = ctx.api_version >= QUOTA_ERROR_SINCE[api_key]
        self._refused_ms = 0

    @property
    def throttle_time_ms(self) -> int:
        return self._refused_ms if self._may_refuse else self._quota.throttle_ms(self._client, self._user)

    def answer_throttle_ms(self) -> int:
        """The answer's throttle_time_ms; the connection is muted for that long."""
        throttle_ms = self.throttle_time_ms
        mute_for(throttle_ms)
        return throttle_ms

    def refused(self) -> tuple[int, str] | None:
        """(error code, message) if this topic must be refused now, else None."""
        wait = self._quota.throttle_ms(self._client, self._user)
        if not wait:
            return None
        self._refused_ms = max(self._refused_ms, wait)
        if not self._may_refuse:
            return None        # an older client is accepted, and told to back off by throttle_time_ms
        return (Errors.ThrottlingQuotaExceededError.errno,
                f"The throttling quota has been exceeded (controller_mutation_rate); retry in {wait} ms.")

    def record(self, partitions: int) -> None:
        self._quota.record(self._client, partitions, self._user)
