"""The labels of the engine's metric families (engine/metrics/collector.py)."""
import pytest

from engine.metrics.collector import error_name


@pytest.mark.parametrize("code,name", [
    (0, "NONE"), (-1, "UNKNOWN_SERVER_ERROR"), (3, "UNKNOWN_TOPIC_OR_PARTITION"), (6, "NOT_LEADER_OR_FOLLOWER"),
    (10, "MESSAGE_TOO_LARGE"), (128, "INVALID_REGULAR_EXPRESSION"), (133, "SHARE_SESSION_LIMIT_REACHED")])
def test_errors_are_labelled_with_kafkas_names(code, name):
    assert error_name(code) == name
