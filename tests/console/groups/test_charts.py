"""The group page's lag chart: bars when there is lag (or records without a commit), a sentence
when every bar would be 0 or there is nothing to draw."""
from __future__ import annotations

from console.groups.charts import partition_lag_chart
from console.groups.selectors import PartitionRow


def _row(partition: int, *, committed: int | None, end: int, start: int = 0) -> PartitionRow:
    return PartitionRow(topic="orders", partition=partition, committed_offset=committed, log_end_offset=end,
                        lag=None if committed is None else end - committed, owner=None, owner_client_id=None,
                        metadata="", log_start_offset=None if committed is not None else start)


def _message(chart: dict) -> str | None:
    annotations = chart["layout"].get("annotations") or []
    return annotations[0]["text"] if annotations else None


def test_lag_and_records_without_a_commit_are_bars():
    chart = partition_lag_chart(partitions=[_row(0, committed=3, end=10), _row(1, committed=None, end=5)])
    assert _message(chart) is None
    assert [(t["name"], t["y"]) for t in chart["data"]] == [("orders", [7]), ("no commit (records held)", [5])]
    # Both kinds of bar count records, the unit the analytics page's lag charts use.
    assert chart["layout"]["yaxis"]["title"]["text"] == "Records"


def test_bars_that_would_all_be_zero_are_a_sentence():
    caught_up = partition_lag_chart(partitions=[_row(0, committed=10, end=10), _row(1, committed=None, end=0)])
    assert _message(caught_up) == "Lag 0 on every committed partition: nothing to draw." and not caught_up["data"]
    empty = partition_lag_chart(partitions=[_row(0, committed=None, end=4, start=4)])
    assert _message(empty) == "No partition has a committed offset, and they hold no records: no lag to draw."
    assert _message(partition_lag_chart(partitions=[])) == "No partition has a committed offset: no lag to draw."


def test_a_group_of_one_topic_names_it_on_the_axis_and_its_bars_by_partition_number():
    chart = partition_lag_chart(partitions=[_row(p, committed=3, end=10) for p in range(12)])
    assert chart["data"][0]["x"] == [str(p) for p in range(12)]
    assert chart["layout"]["xaxis"]["title"]["text"] == "Partition of orders"
    assert chart["data"][0]["hovertemplate"].startswith("orders-%{x}: lag")
    two = partition_lag_chart(partitions=[_row(0, committed=3, end=10),
                                          PartitionRow(topic="refunds", partition=0, committed_offset=1, log_end_offset=4,
                                                       lag=3, owner=None, owner_client_id=None, metadata="")])
    assert [t["x"] for t in two["data"]] == [["orders-0"], ["refunds-0"]]
    assert two["layout"]["xaxis"]["title"]["text"] == "Partition"
