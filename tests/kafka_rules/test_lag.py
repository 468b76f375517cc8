"""Consumer lag: log end offset minus committed offset, unknown when either is."""
from kafka_rules.lag import lag


def test_lag_is_the_log_end_minus_the_committed_offset():
    assert lag(10, 6) == 4 and lag(6, 6) == 0


def test_lag_is_unknown_without_either_offset():
    assert lag(None, 3) is None and lag(10, None) is None and lag(-1, 3) is None and lag(10, -1) is None
