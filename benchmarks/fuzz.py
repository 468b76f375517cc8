"""The long fuzz run: 1M mutated frames of every API and version against a 1-broker engine.

The same generator as the CI test (tests/support/fuzz.py), with a well-behaved client
producing and fetching beside it. Prints frames/s, the outcomes, the client's round trips
and failures, RSS before and at its peak, and the engine log's tracebacks and refusals.

    .venv/bin/python benchmarks/fuzz.py [--frames 1000000] [--connections 8] [--seconds 3600]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import engine.protocol.apis  # noqa: E402,F401 - registers the handlers, so the registry lists every API
from engine.protocol import registry  # noqa: E402
from tests.engine.protocol.test_bad_input import create_topic  # noqa: E402
from tests.engine.protocol.test_fuzz import FUZZ_CONFIGS, Canary, rss_bytes  # noqa: E402
from tests.support import fuzz  # noqa: E402
from tests.support.engine_process import EngineProcess  # noqa: E402
from tests.support.raw_client import RawClient  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3600)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engine = EngineProcess(Path(tmp) / "data", brokers=1, admin=False, configs=FUZZ_CONFIGS).start()
        try:
            return run(engine, args)
        finally:
            engine.kill()


def run(engine: EngineProcess, args) -> int:
    port, pid = engine.ports[0], engine.process.pid
    topic = f"canary-{uuid.uuid4().hex[:8]}"
    setup = RawClient(port)
    assert create_topic(setup, topic) == 0
    setup.close()
    rss_before = rss_bytes(pid)
    canary = Canary(port, topic, pid)
    canary.start()
    plan = fuzz.templates(registry.all_apis())
    started = time.monotonic()
    outcomes = asyncio.run(fuzz.run(port, plan, frames=args.frames, seconds=args.seconds,
                                    connections=args.connections, seed=args.seed))
    elapsed = time.monotonic() - started
    canary.stopping.set()
    canary.join(60)
    log = engine.log_path.read_text(errors="replace")
    print(f"frames            {outcomes.frames:,} in {elapsed:.0f} s ({outcomes.frames / elapsed:,.0f} frames/s), "
          f"{len(plan)} API versions")
    print(f"outcomes          {dict(outcomes.counts)}")
    print(f"engine alive      {engine.alive()}")
    print(f"canary            {canary.served:,} produce+fetch round trips, {len(canary.failures)} failures")
    print(f"RSS               {rss_before >> 20} MiB before, {max(canary.rss) >> 20} MiB at peak")
    print(f"log               {log.count('Traceback')} tracebacks, "
          f"{log.count('INVALID_REQUEST')} INVALID_REQUEST lines, {len(log) >> 10} KiB")
    for api_key, version, verdict, head in outcomes.bad[:10]:
        print(f"  {verdict}: API {api_key} v{version}, frame starts {head!r}")
    bad = outcomes.counts["timeout"] + outcomes.counts["bad_reply"] + len(canary.failures) + log.count("Traceback")
    return 1 if bad or not engine.alive() else 0


if __name__ == "__main__":
    sys.exit(main())
