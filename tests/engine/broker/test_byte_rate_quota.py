"""The byte-rate quota's arithmetic (engine/broker/byte_rate_quota.py) on the engine's manual
clock: Kafka's sampled rate, its throttle time, and which clients share a rate."""
from types import SimpleNamespace

import pytest

from engine import clock
from engine.broker.byte_rate_quota import PRODUCE, ByteRateQuota, SampledRate
from engine.clock import ManualClock
from engine.cluster.client_quotas import user_of
from engine.config import BrokerConfig

KB = 1000


@pytest.fixture
def manual():
    with clock.use(ManualClock(1_700_000_000_000)) as manual_clock:
        yield manual_clock


def quota_with(quotas: dict, **configs) -> ByteRateQuota:
    image = SimpleNamespace(client_quotas={tuple(sorted(entity)): {PRODUCE: value} for entity, value in quotas.items()})
    config = BrokerConfig(static=configs)
    return ByteRateQuota(PRODUCE, lambda: image, lambda: config)


def test_the_first_bytes_are_measured_over_ten_windows_and_the_excess_is_the_throttle_time(manual):
    quota = quota_with({(("client-id", "p"),): 1 * KB})
    # 13 KB over the minimum span of 10 windows (quota.window.num 11, minus the current one):
    # 1.3 KB/s, 30% over 1 KB/s for 10 s -> 3 s, Kafka's (observed - quota) / quota * window.
    assert quota.record(13 * KB, client_id="p") == 3000
    assert quota.record(5 * KB, client_id="free") == 0          # no quota: never throttled
    manual.advance(5_000)
    # 18 KB over 10 s: 1.8 KB/s -> 8 s
    assert quota.record(5 * KB, client_id="p") == 8000


def test_within_the_quota_is_not_throttled_and_old_samples_leave_the_window(manual):
    quota = quota_with({(("client-id", "p"),): 1 * KB})
    assert quota.record(10 * KB, client_id="p") == 0            # exactly 1 KB/s: at the quota is within it
    assert quota.record(1, client_id="p") == 1                  # one byte over: the smallest throttle
    manual.advance(11_000)                                      # 11 windows later every sample has expired
    assert quota.record(10 * KB, client_id="p") == 0


def test_the_rate_spans_the_samples_kept_once_they_cover_more_than_the_minimum(manual):
    rate = SampledRate()
    for _ in range(20):                 # 2 KB a second for 20 s: 11 samples kept, 10 s..11 s spanned
        rate.record(2 * KB, manual.now_ms(), samples=11, window_ms=1000)
        manual.advance(1000)
    assert rate.window_size_ms(manual.now_ms(), samples=11, window_ms=1000) == 10_000
    assert rate.measure(manual.now_ms(), samples=11, window_ms=1000) == pytest.approx(2 * KB)


def test_the_window_follows_the_broker_configs(manual):
    quota = quota_with({(("client-id", "p"),): 1 * KB}, **{"quota.window.num": 2, "quota.window.size.seconds": 2})
    # 6 KB over one 2 s window: 3 KB/s, twice over 1 KB/s for 2 s -> 4 s
    assert quota.record(6 * KB, client_id="p") == 4000


def test_clients_of_one_entity_share_a_rate_and_a_default_gives_each_its_own(manual):
    shared = quota_with({(("user", "ANONYMOUS"),): 1 * KB})
    assert shared.record(6 * KB, client_id="a") == 0
    assert shared.record(6 * KB, client_id="b") == 2000         # 12 KB of the one user over 10 s
    each = quota_with({(("client-id", None),): 1 * KB})
    assert each.record(6 * KB, client_id="a") == 0
    assert each.record(6 * KB, client_id="b") == 0              # <default> client-id: b has its own rate
    # Kafka's order: user + client-id before the user's own quota
    ordered = quota_with({(("user", "ANONYMOUS"),): 100 * KB, (("client-id", "c"), ("user", "ANONYMOUS")): 1 * KB})
    assert ordered.record(13 * KB, client_id="c") == 3000
    assert ordered.record(13 * KB, client_id="d") == 0


def test_a_fetch_may_return_the_quota_over_the_windows_minimum_span(manual):
    quota = quota_with({(("client-id", "p"),): 1 * KB})
    assert quota.max_bytes_in_window(client_id="p") == 10 * KB      # 1 KB/s x (11 - 1) windows of 1 s
    assert quota.max_bytes_in_window(client_id="other") is None


def test_the_quota_user_is_the_sessions_principal_else_anonymous():
    assert user_of(SimpleNamespace()) == "ANONYMOUS"
    assert user_of(SimpleNamespace(session=None)) == "ANONYMOUS"
    assert user_of(SimpleNamespace(session=SimpleNamespace(principal="alice"))) == "alice"
