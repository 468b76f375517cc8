"""Alert values in a person's units: what a count counts, durations and shares as the rest of
the console writes them (console.formatting)."""
import pytest

from console.alerts.templatetags.alert_format import NOT_GAINING, rule_value


@pytest.mark.parametrize(("value", "kind", "shown"), [
    (30, "group_lag", "30 records"), (1, "group_lag", "1 record"), (1234567, "group_lag", "1,234,567 records"),
    (2, "under_replicated", "2 partitions"), (1, "offline", "1 partition"), (3, "uncleanable", "3 partitions"),
    (90, "group_time_lag", "1 min 30 s"), (5400, "catch_up", "1 h 30 min"), (NOT_GAINING, "catch_up", "not gaining"),
    (7200, "hanging_transaction", "2 h"), (0.853, "log_dir_usage", "85.3 %"), (2, "group_status", "WARN"),
    (None, "group_lag", "–"),
])
def test_a_rule_value_reads_in_its_kinds_unit(value, kind, shown):
    assert rule_value(value, kind) == shown
