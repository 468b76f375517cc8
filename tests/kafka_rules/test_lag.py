"""Consumer lag: log end offset minus committed offset, unknown when either is."""
from kafka_rules.lag import lag


def test_lag_is_the_log_end_minus_the_committed_offset():
    assert lag(10, 6) == 4 and lag(6, 6) == 0


def test_lag_is_unknown_without_either_offset():
    assert lag(None, 3) is None and lag(10, None) is None and lag(-1, 3) is None and lag(10, -1) is None


def test_a_total_counts_a_commit_past_the_log_end_as_zero_and_is_unknown_without_lags():
    from kafka_rules.lag import total_lag
    assert lag(540, 660) == -120                      # as kafka-consumer-groups.sh prints it
    assert total_lag([340, -120, None, 40]) == 380    # never lowered by the partition ahead
    assert total_lag([None, None]) is None and total_lag([]) is None
