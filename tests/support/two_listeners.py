"""One broker with two plaintext listeners, INTERNAL (the inter-broker listener) and EXTERNAL,
and a metrics port, on free ports: what Kafka's own connection-quota tests start."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tests.support.engine_process import EngineProcess, PortTakenError, free_port_range


@contextmanager
def two_listener_engine(directory: Path, *, configs: dict[str, str]) -> Iterator[EngineProcess]:
    """The engine started, with `listener_ports` by name and `metrics_url`; killed on exit. Ports
    another process took meanwhile are given up for new ones."""
    for attempt in range(5):
        base = free_port_range(3)      # INTERNAL, EXTERNAL, the metrics
        engine = EngineProcess(directory / f"data{attempt}", brokers=1, admin=False, configs=configs, extra_args=[
            "--listener", f"INTERNAL=PLAINTEXT://127.0.0.1:{base}",
            "--listener", f"EXTERNAL=PLAINTEXT://127.0.0.1:{base + 1}",
            "--inter-broker-listener", "INTERNAL", "--metrics-port", str(base + 2)])
        engine.port = base              # the INTERNAL listener: where the readiness check asks
        try:
            engine.start(timeout=60)
        except PortTakenError:
            continue
        engine.listener_ports = {"INTERNAL": base, "EXTERNAL": base + 1}
        engine.metrics_url = f"http://127.0.0.1:{base + 2}/metrics"
        try:
            yield engine
        finally:
            engine.kill()
        return
    raise RuntimeError("no free ports")
