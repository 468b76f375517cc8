from engine.broker.throttle import LONG_MAX, ReplicationThrottle, is_throttled


def test_throttle_measures_the_last_second():
    now = [100.0]
    throttle = ReplicationThrottle(lambda: 1000, clock=lambda: now[0])
    throttle.record(600)
    assert not throttle.exceeded()
    throttle.record(600)
    assert throttle.exceeded()
    now[0] += 1.5   # the samples age out of the window
    assert not throttle.exceeded()


def test_unlimited_rate_never_throttles():
    throttle = ReplicationThrottle(lambda: LONG_MAX)
    throttle.record(10**12)
    assert not throttle.exceeded()


def test_throttled_replicas_config():
    assert is_throttled("*", 3, 1)
    assert is_throttled("0:1, 3:1", 3, 1)
    assert not is_throttled("0:1,3:2", 3, 1)
    assert not is_throttled("", 0, 0)
