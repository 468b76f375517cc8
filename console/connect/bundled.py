"""The Connect worker `make run` starts next to the engine (console/stack.py): its worker
properties and its row in the console. On by default; CONNECT=0 leaves it out
(docs/console/connect.md says why). CONNECT_PORT moves its REST port (8083)."""
from __future__ import annotations

import os
from pathlib import Path


def enabled() -> bool:
    return os.environ.get("CONNECT", "1").strip() not in ("0", "false", "no", "off")


def port() -> int:
    raw = os.environ.get("CONNECT_PORT", "8083")
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise SystemExit(f"CONNECT_PORT must be a port number, not {raw!r}")
    return int(raw)


def worker_command(python: str, data_dir: Path, bootstrap: str) -> str:
    """Write the worker's properties (Kafka's names) and return its command line."""
    plugins = data_dir / "connect-plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    properties = data_dir / "connect-worker.properties"
    properties.write_text("\n".join([
        "# Written by `make run` at every start (console/connect/bundled.py).",
        f"bootstrap.servers={bootstrap}",
        "group.id=connect-local",
        "config.storage.topic=connect-configs",
        "offset.storage.topic=connect-offsets",
        "status.storage.topic=connect-status",
        f"listeners=http://127.0.0.1:{port()}",
        "rest.advertised.host.name=127.0.0.1",
        f"plugin.path={plugins}",
        "offset.flush.interval.ms=10000",
        "scheduled.rebalance.max.delay.ms=30000", ""]))
    return f"{python} -m engine connect distributed {properties}"


def register(url: str | None = None) -> None:
    """The bundled Kafka cluster's Connect row, at this worker's address (after django.setup())."""
    from console.clusters.models import Cluster
    from console.connect.services import connect_cluster_register_bundled

    cluster = Cluster.objects.filter(is_bundled=True).first()
    if cluster is not None:
        connect_cluster_register_bundled(cluster=cluster, url=url or f"http://127.0.0.1:{port()}")
