"""KIP-599's token bucket, on a clock the test moves."""
from engine.broker.mutation_quota import ControllerMutationQuota


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_client_may_go_over_once_then_waits_until_its_bucket_refills():
    clock = Clock()
    quota = ControllerMutationQuota(lambda user, client: (2.0, ("", client)), clock)     # 2 partitions/s, burst 22
    assert quota.throttle_ms("a") == 0
    quota.record("a", 30)                                   # one big request is accepted: -8 left
    assert quota.throttle_ms("a") == 4000                   # 8 tokens at 2/s
    assert quota.throttle_ms("b") == 0                      # other clients have their own bucket
    clock.now += 3.0
    assert quota.throttle_ms("a") == 1000
    clock.now += 1.5
    assert quota.throttle_ms("a") == 0


def test_no_quota_by_default():
    quota = ControllerMutationQuota(lambda user, client: (float("inf"), ("", client)), Clock())
    quota.record("a", 10**9)
    assert quota.throttle_ms("a") == 0
