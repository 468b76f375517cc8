"""Writing and pruning the lake's Parquet files (pyarrow), on a local dir or a lake URL.

Each snapshot writes one small file per table; `lake_compact_day` merges a finished day into
one file, so Spark opens a few files per table and day instead of 2,880. `lake_prune` keeps
the lake's own retention: whole `date=` directories older than the days to keep go.
Neither ever touches a day that is still being written (today, UTC).
"""
from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from console.analytics import lake

COMPACTED = "day.parquet"


def lake_filesystem(url: str) -> tuple[pafs.FileSystem, str]:
    """pyarrow's file system for a lake URL or path. Spark's `s3a://` is pyarrow's `s3://`."""
    if "://" not in url:
        return pafs.LocalFileSystem(), url
    if url.startswith("s3a://"):
        url = "s3://" + url[len("s3a://"):]
    return pafs.FileSystem.from_uri(url)


def snapshot_write(*, lake_url: str, cluster_id: int, table: str, rows: Iterable[Mapping] | pa.Table,
                   taken_at: dt.datetime) -> int:
    """Append one snapshot's rows of `table`; returns the number of rows written."""
    schema = lake.SCHEMAS[table]
    data = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(list(rows), schema=schema)
    if data.num_rows == 0:
        return 0
    fs, root = lake_filesystem(lake_url)
    directory = _day_dir(root, table, cluster_id, taken_at.astimezone(dt.timezone.utc).date())
    fs.create_dir(directory, recursive=True)
    name = f"{int(taken_at.timestamp() * 1000):015d}-{uuid.uuid4().hex[:8]}.parquet"
    pq.write_table(data.cast(schema), f"{directory}/{name}", filesystem=fs)
    return data.num_rows


def lake_compact_day(*, lake_url: str, cluster_id: int, day: dt.date, today: dt.date) -> int:
    """Merge a finished day's snapshot files, table by table, into one file; returns the
    number of tables rewritten. The merged file is written before the small ones go."""
    if day >= today:
        return 0
    fs, root = lake_filesystem(lake_url)
    rewritten = 0
    for table in lake.TABLES:
        directory = _day_dir(root, table, cluster_id, day)
        files = [f for f in fs.get_file_info(pafs.FileSelector(directory, allow_not_found=True))
                 if f.is_file and f.path.endswith(".parquet")]
        if len(files) <= 1:
            continue
        merged = ds.dataset([f.path for f in files], schema=lake.SCHEMAS[table], filesystem=fs).to_table()
        tmp = f"{directory}/.{COMPACTED}.tmp"
        pq.write_table(merged.sort_by(lake.TS), tmp, filesystem=fs)
        for f in files:
            fs.delete_file(f.path)
        fs.move(tmp, f"{directory}/{COMPACTED}")
        rewritten += 1
    return rewritten


def lake_prune(*, lake_url: str, retention_days: int, today: dt.date) -> list[str]:
    """Delete every `date=` directory older than `retention_days` before today; returns them."""
    fs, root = lake_filesystem(lake_url)
    oldest_kept = today - dt.timedelta(days=retention_days)
    removed = []
    for table in lake.TABLES:
        for cluster_dir in _subdirs(fs, f"{root}/{table}"):
            for day_dir in _subdirs(fs, cluster_dir):
                day = _day_of(day_dir)
                if day is not None and day < oldest_kept:
                    fs.delete_dir(day_dir)
                    removed.append(day_dir)
    return removed


def recent_snapshot_rows(*, lake_url: str, cluster_id: int, table: str, snapshots: int,
                         where: Mapping[str, object] | None = None, today: dt.date | None = None) -> list[dict]:
    """The rows of a table's last `snapshots` snapshots of a cluster (today's small files, named
    by their time, and yesterday's), filtered by equality; oldest first. For pages that judge
    the last few snapshots without Spark; empty when the lake cannot be read."""
    fs, root = lake_filesystem(lake_url)
    today = today or dt.datetime.now(dt.timezone.utc).date()
    files: list[str] = []
    for day in (today, today - dt.timedelta(days=1)):
        infos = fs.get_file_info(pafs.FileSelector(_day_dir(root, table, cluster_id, day), allow_not_found=True))
        names = sorted((i.path for i in infos if i.is_file and i.path.endswith(".parquet")), reverse=True)
        files += names
        if len([f for f in files if not f.endswith(COMPACTED)]) >= snapshots:
            break
    if not files:
        return []
    data = ds.dataset(files, schema=lake.SCHEMAS[table], filesystem=fs)
    condition = None
    for column, value in (where or {}).items():
        term = ds.field(column) == value
        condition = term if condition is None else condition & term
    rows = data.to_table(filter=condition).sort_by(lake.TS).to_pylist()
    wanted = sorted({r[lake.TS] for r in rows})[-snapshots:]
    return [r for r in rows if r[lake.TS] >= wanted[0]] if wanted else []


def lake_days(*, lake_url: str, cluster_id: int) -> list[dt.date]:
    """The days that hold partition snapshots of a cluster, oldest first."""
    fs, root = lake_filesystem(lake_url)
    days = (_day_of(d) for d in _subdirs(fs, f"{root}/{lake.PARTITIONS}/{lake.CLUSTER}={cluster_id}"))
    return sorted(d for d in days if d is not None)


def _day_dir(root: str, table: str, cluster_id: int, day: dt.date) -> str:
    return f"{root.rstrip('/')}/{table}/{lake.CLUSTER}={cluster_id}/{lake.DATE}={day.isoformat()}"


def _subdirs(fs: pafs.FileSystem, path: str) -> list[str]:
    infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
    return [i.path for i in infos if i.type == pafs.FileType.Directory]


def _day_of(path: str) -> dt.date | None:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if not name.startswith(f"{lake.DATE}="):
        return None
    try:
        return dt.date.fromisoformat(name.split("=", 1)[1])
    except ValueError:
        return None
