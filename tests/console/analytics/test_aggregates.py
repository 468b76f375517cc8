"""The aggregates built two ways (console/analytics/jobs/aggregates.py): each case worked out
by hand, answered the same on Spark's JVM (the tests' local session, in this process) and on
Sail (in a child process: PySpark runs a process on the JVM or on Spark Connect, not both)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pyspark.sql import functions as F

from console.analytics import lake as L
from console.analytics.jobs.aggregates import on_native_engine, value_at_newest
from console.analytics.jobs.timeline import REACHED_AT, offset_reached_at
from tests.support.spark import frame

ROOT = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)
ON_SAIL = """
import json
from console.analytics.spark import build_session
from tests.console.analytics.test_aggregates import answers
print(json.dumps(answers(build_session(master="sail"))))
"""


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def answers(spark) -> dict:
    """Each case's rows, as JSON-ready lists, on `spark`'s engine."""
    # Share partitions' counters: series a's newest value is null; b's newest time holds two rows.
    counters = frame(spark, L.SHARE_GROUP_PARTITIONS, [(at(s), "g", "t", p, c) for s, p, c in [
        (0, 0, 5), (30, 0, 7), (60, 0, None), (0, 1, -3), (40, 1, 2**62), (40, 1, 9)]],
        columns=[L.TS, L.GROUP, L.TOPIC, L.PARTITION, L.ARCHIVED_POISON])
    newest = (counters.groupBy(L.PARTITION).agg(value_at_newest(counters, L.ARCHIVED_POISON).alias("v"))
              .orderBy(L.PARTITION).collect())
    # The log end offset of partition 0: 100 at 0 s, 200 from 60 s to 240 s (paused), 300 at 300 s.
    points = frame(spark, L.PARTITIONS, [(at(s), "t", 0, o) for s, o in [(0, 100), (60, 200), (240, 200), (300, 300)]],
                   columns=[L.TS, L.TOPIC, L.PARTITION, L.LOG_END_OFFSET])
    probes = frame(spark, L.GROUP_OFFSETS, [(at(400), f"g{o}", "t", 0, o) for o in (50, 100, 150, 200, 250, 300, 350)],
                   columns=[L.TS, L.GROUP, L.TOPIC, L.PARTITION, L.COMMITTED_OFFSET])
    reached = (offset_reached_at(partitions=points, probes=probes, offset_col=L.COMMITTED_OFFSET)
               .select(L.COMMITTED_OFFSET, (F.unix_millis(REACHED_AT) - int(T0.timestamp() * 1000)).alias("ms"))
               .orderBy(L.COMMITTED_OFFSET).collect())
    return {"native": on_native_engine(counters), "newest": [[r[L.PARTITION], r["v"]] for r in newest],
            "reached": [[r[L.COMMITTED_OFFSET], r["ms"]] for r in reached]}


EXPECTED_NEWEST = [[0, None], [1, 2**62]]     # a null newest value stays null; a tie keeps the larger
# 50 and 100 were reached by the first point, maybe long before it: unknown. 150 half way to 60 s; 200
# was reached at 60 s, not 240 s; 250 half way from 240 s to 300 s; 350 is beyond the newest
# point, which is the best the lake can tell.
EXPECTED_REACHED = [[50, None], [100, None], [150, 30_000], [200, 60_000], [250, 270_000], [300, 300_000],
                    [350, 300_000]]


def test_the_jvm_answers_each_case(spark):
    got = answers(spark)
    assert not got["native"]
    assert got["reached"] == EXPECTED_REACHED
    # max_by on a tie takes either row: the JVM's answer for b is one of the two.
    assert got["newest"][0] == [0, None] and got["newest"][1] in ([1, 2**62], [1, 9])


def test_sail_answers_each_case():
    child = subprocess.run([sys.executable, "-c", ON_SAIL], cwd=ROOT, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.returncode == 0, child.stderr[-3000:]
    got = json.loads(child.stdout.strip().splitlines()[-1])
    assert got == {"native": True, "newest": EXPECTED_NEWEST, "reached": EXPECTED_REACHED}
