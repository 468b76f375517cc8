"""The search loop's limits, record by record: the time budget (measured on a virtual clock that
a slow filter advances), the matches limit, and user regexes that would backtrack forever."""
from __future__ import annotations

import pytest

from console.errors import InvalidInput
from console.messages import selectors
from console.messages.filters import FilterSpec, RecordFilter
from console.messages.scan import SearchLimits, initial_progress, search
from console.messages.selectors import SearchQuery
from tests.console.messages.conftest import create_topic, produce_confluent


@pytest.fixture(scope="module")
def one_batch_topic(engine_cluster):
    """1000 matching records in one partition, written as a single batch."""
    name = create_topic(engine_cluster.bootstrap, "msg-scan-one-batch")
    produce_confluent(engine_cluster.bootstrap, name, [{"value": b"hit %d" % i} for i in range(1000)],
                      **{"linger.ms": 1000, "batch.num.messages": 10000})
    return name


class SlowFilter:
    """The real filter, each record's evaluation costing `cost` seconds of a virtual clock."""

    def __init__(self, spec: FilterSpec, cost: float) -> None:
        self._filter, self.cost, self.now = RecordFilter(spec), cost, 0.0
        self.batch_may_match = self._filter.batch_may_match

    def match(self, record) -> bool:
        self.now += self.cost
        return self._filter.match(record)

    def clock(self) -> float:
        return self.now


def _scan(cluster, topic, record_filter, limits, clock=None):
    with selectors.topic_reader(cluster=cluster, topic=topic) as reader:
        progress = initial_progress(reader)
        events = list(search(reader, progress, record_filter, limits, **({"clock": clock} if clock else {})))
    return events, progress


def test_the_time_budget_holds_inside_a_batch(cluster, one_batch_topic):
    """1000 records of 5 ms each in one batch: a budget of 1 s stops the scan within 10% of it,
    not after the batch's 5 s; the positions say where to continue."""
    slow = SlowFilter(FilterSpec(mode="substring", text="hit"), cost=0.005)
    events, progress = _scan(cluster, one_batch_topic, slow, SearchLimits(max_seconds=1, max_matches=10_000),
                             clock=slow.clock)
    stats = events[-1][1]
    assert stats.stopped_by == "time limit" and not stats.done
    assert 1.0 <= stats.elapsed_seconds <= 1.1
    assert progress.positions[0] == stats.records_scanned < 1000


def test_a_search_returns_exactly_the_matches_asked_for_and_continues_after_them(cluster, one_batch_topic):
    spec = FilterSpec(mode="substring", text="hit")
    first = list(selectors.message_search(cluster=cluster, topic=one_batch_topic, mask=False,
                                          query=SearchQuery(filter=spec, limits=SearchLimits(max_matches=500))))
    offsets = [record.offset for kind, (record, _view) in ((k, i) for k, i in first if k == "match")]
    stats = first[-1][1]
    assert offsets == list(range(500)) and stats.matches == 500 and stats.stopped_by == "matches limit"
    assert stats.positions == {0: 500}
    rest = list(selectors.message_search(cluster=cluster, topic=one_batch_topic, mask=False, query=SearchQuery(
        filter=spec, positions=stats.positions, limits=SearchLimits(max_matches=500))))
    assert [r.offset for k, (r, _v) in (e for e in rest if e[0] == "match")] == list(range(500, 1000))
    assert rest[-1][1].positions == {0: 1000}


def test_a_regex_that_backtracks_exponentially_in_python_runs_in_linear_time(cluster, engine_cluster):
    """`^(a+)+$` over 27 a's and a '!' takes Python's re seconds per record (holding the GIL);
    RE2 finishes the whole search well inside its 1 s budget."""
    topic = create_topic(engine_cluster.bootstrap, "msg-scan-redos")
    produce_confluent(engine_cluster.bootstrap, topic, [{"value": b"a" * 27 + b"!"} for _ in range(50)]
                      + [{"value": b"a" * 27}])
    events = list(selectors.message_search(cluster=cluster, topic=topic, mask=False, query=SearchQuery(
        filter=FilterSpec(mode="regex", text="^(a+)+$"), limits=SearchLimits(max_seconds=1))))
    stats = events[-1][1]
    assert stats.done and stats.stopped_by == "" and stats.records_scanned == 51
    assert [r.offset for k, (r, _v) in (e for e in events if e[0] == "match")] == [50]


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)b", r"(?<!x)y"])
def test_patterns_re2_cannot_run_are_refused_with_its_reason(pattern):
    with pytest.raises(InvalidInput, match="Bad regular expression.*RE2 syntax"):
        RecordFilter(FilterSpec(mode="regex", text=pattern))
