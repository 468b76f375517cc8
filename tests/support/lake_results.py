"""Job results written into an analytics lake as the launcher leaves them, for tests of the pages
that read them (the jobs themselves are tested in tests/console/analytics)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from console.analytics import lake as L


def write_result(lake_dir: Path, job: str, cluster_id: int, rows: list[dict]) -> None:
    """Replace one job's result for a cluster with these rows: a directory with one Parquet file,
    or, with no rows, no directory (as before the job's first run)."""
    directory = lake_dir / L.RESULTS / job / f"{L.CLUSTER}={cluster_id}"
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.parquet"):
        old.unlink()
    if rows:
        pq.write_table(pa.Table.from_pylist(rows), directory / "part-0.parquet")
    else:
        directory.rmdir()
