"""One real local Spark session for the whole test session (Spark takes seconds to start).

Tests that need it import the `spark` fixture (tests/console/analytics/conftest.py does).
local[2] matches the machine.
"""
from __future__ import annotations

import pytest

from console.analytics.spark import build_session


# The tests' JVMs live minutes on tiny data, so the JIT's optimizing compiler (C2) and the
# parallel garbage collector cost CPU they never pay back: only the quick compiler, one GC
# thread. Two analytics test modules took 95 s of CPU (63 s wall) with the JVM's defaults, 51 s
# (46 s) with these. Production keeps the defaults: a warm session runs big jobs for days.
QUICK_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# Tests use DataFrames of a few dozen rows: one shuffle partition, and no whole-stage code
# generation, whose compile time (not the data) dominated every first query of a shape.
TEST_CONF = {"spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "2", "spark.driver.memory": "1g",
             "spark.sql.codegen.wholeStage": "false", "spark.sql.adaptive.enabled": "false",
             "spark.driver.extraJavaOptions": QUICK_JVM_OPTIONS, "spark.executor.extraJavaOptions": QUICK_JVM_OPTIONS}


@pytest.fixture(scope="session")
def spark():
    session = build_session(master="local[2]", conf=TEST_CONF)
    yield session
    session.stop()


def frame(spark, table: str, rows, *, columns: list[str] | None = None):
    """A DataFrame of lake table `table` from tuples (all its columns in order, or `columns`),
    typed exactly as the lake stores it."""
    from console.analytics import lake
    schema = lake.SCHEMAS[table]
    names = columns or schema.names
    ddl = ", ".join(part for part in lake.spark_ddl(table).split(", ") if part.split(" ")[0].strip("`") in names)
    ordered = sorted(names, key=schema.names.index)
    if ordered != list(names):
        raise ValueError(f"columns must follow the table's order: {ordered}")
    return spark.createDataFrame(list(rows), ddl)
