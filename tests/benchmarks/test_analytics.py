"""benchmarks/analytics.py on a lake of a few snapshots, DuckDB's side only (Spark's jobs are the
console's own, tested in tests/console/analytics): the lake it generates is the lake its views
read, and every job has a DuckDB twin that runs on it."""
from benchmarks import analytics as bench
from console.analytics import lake as L


def test_every_duckdb_job_runs_on_the_generated_lake(tmp_path):
    lake = tmp_path / "lake"
    bench.lake_generate(lake, snapshots=3)
    con = bench.duck_connect(lake)
    assert bench.rows_of(con, L.PARTITIONS) == 3 * bench.PARTITIONS
    assert bench.rows_of(con, L.GROUP_OFFSETS) == 3 * bench.GROUPS * bench.PARTITIONS_PER_GROUP
    assert bench.rows_of(con, bench.RECORDS) == bench.RECORD_COUNT
    placeholders = {table: object() for table in (*bench.LAKE_TABLES, bench.RECORDS)}
    assert set(bench.DUCK_JOBS) == set(bench.spark_jobs(placeholders))
    for name in bench.DUCK_JOBS:
        con.execute(f"CREATE OR REPLACE TEMP TABLE result AS {bench.duck_sql(name)}")
        assert bench.rows_of(con, "result") > 0, name
