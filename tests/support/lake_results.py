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


def record_finished_run(env: dict, cluster_id: int, *, kind: str = "lake", minutes_ago: int = 0) -> None:
    """A finished run of the cluster, as the analytics worker records it: the results written
    above are then that run's, and the pages date them by it (without one they show none)."""
    from tests.support.console_process import manage
    manage(env, "shell", "-c",
           "import datetime as dt; from console.analytics.models import AnalyticsRun as R; "
           f"end = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes={minutes_ago}); "
           f"R.objects.create(cluster_id={cluster_id}, kind={kind!r}, state=R.DONE, "
           "started_at=end - dt.timedelta(seconds=40), finished_at=end)")
